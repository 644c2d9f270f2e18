/**
 * Weekly availability windows in a provider's time zone.
 *
 * Syntax of one window (case-insensitive):
 *   "always"                       every minute of the week
 *   "mon-fri 19:00-07:00"          days + time range; an end at or before the start wraps
 *                                  past midnight and belongs to the start day (Fri 19:00 →
 *                                  Sat 07:00, Sun 22:00 → Mon 06:00)
 *   "sat-sun 00:00-24:00"          24:00 is allowed as an end
 *   "sat-sun" / "weekends"         days alone mean the whole day
 *   "19:00-07:00"                  a time range alone means every day
 * Days: mon tue wed thu fri sat sun (or full names), ranges "mon-fri", wrapping ranges
 * "fri-mon", and the words weekdays, weekends, daily / everyday.
 *
 * A window is in local wall-clock time (availability.ts evaluates windows at an instant).
 */

import { ConfigError } from '../../config/index.js'

export interface AvailabilityWindow {
  /** bit0 = Monday … bit6 = Sunday */
  days: number
  /** minute of the day the window opens, 0..1439 */
  startMinute: number
  /** minute of the day it closes, 1..1440; at or before startMinute: the next day */
  endMinute: number
}

export const ALL_DAYS = 0x7f
const DAY_NAMES = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const
const FULL_NAMES = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const
export const MINUTES_PER_DAY = 1440

const WINDOW_HELP = 'a window like "mon-fri 19:00-07:00", "sat-sun 00:00-24:00", "weekends" or "always"'

function dayIndex (word: string): number {
  const i = DAY_NAMES.indexOf(word as typeof DAY_NAMES[number])
  return i >= 0 ? i : FULL_NAMES.indexOf(word as typeof FULL_NAMES[number])
}

function parseDays (text: string, field: string, whole: string): number {
  switch (text) {
    case 'daily': case 'everyday': case 'every-day': return ALL_DAYS
    case 'weekdays': return 0x1f
    case 'weekends': case 'weekend': return 0x60
  }
  let mask = 0
  for (const part of text.split('+')) {
    const range = part.split('-')
    if (range.length > 2) throw new ConfigError(field, `${WINDOW_HELP} (bad days "${text}")`, whole)
    const from = dayIndex(range[0] ?? '')
    const to = range.length === 2 ? dayIndex(range[1] ?? '') : from
    if (from < 0 || to < 0) throw new ConfigError(field, `${WINDOW_HELP} (unknown day in "${text}")`, whole)
    for (let d = from; ; d = (d + 1) % 7) {
      mask |= 1 << d
      if (d === to) break
    }
  }
  return mask
}

function parseTime (text: string, field: string, whole: string, allow24: boolean): number {
  const m = /^(\d{1,2}):(\d{2})$/.exec(text)
  if (m == null) throw new ConfigError(field, `${WINDOW_HELP} (bad time "${text}", use HH:MM)`, whole)
  const h = Number(m[1])
  const min = Number(m[2])
  if (min > 59 || h > 24 || (h === 24 && (min !== 0 || !allow24))) {
    throw new ConfigError(field, `${WINDOW_HELP} (time "${text}" out of range${allow24 ? '' : '; 24:00 only as an end'})`, whole)
  }
  return h * 60 + min
}

/** Parses one window string; errors are ConfigErrors naming `field`. */
export function parseWindow (text: string, field = 'window'): AvailabilityWindow {
  if (typeof text !== 'string') throw new ConfigError(field, WINDOW_HELP, text)
  const s = text.trim().toLowerCase().replace(/\s+/g, ' ')
  if (s === 'always' || s === '24/7') return { days: ALL_DAYS, startMinute: 0, endMinute: MINUTES_PER_DAY }
  const parts = s.split(' ')
  let daysText: string | undefined
  let timeText: string | undefined
  if (parts.length === 2) [daysText, timeText] = parts
  else if (parts.length === 1 && /\d/.test(parts[0] ?? '')) timeText = parts[0]
  else if (parts.length === 1 && parts[0] !== '') daysText = parts[0]
  else throw new ConfigError(field, WINDOW_HELP, text)
  const days = daysText === undefined ? ALL_DAYS : parseDays(daysText, field, text)
  if (timeText === undefined) return { days, startMinute: 0, endMinute: MINUTES_PER_DAY }
  const times = timeText.split('-')
  if (times.length !== 2) throw new ConfigError(field, `${WINDOW_HELP} (bad time range "${timeText}")`, text)
  const startMinute = parseTime(times[0] ?? '', field, text, false)
  const endMinute = parseTime(times[1] ?? '', field, text, true)
  if (startMinute === endMinute || (startMinute === 0 && endMinute === 0)) {
    throw new ConfigError(field, `${WINDOW_HELP} (empty time range "${timeText}"; a whole day is 00:00-24:00)`, text)
  }
  return { days, startMinute, endMinute: endMinute === 0 ? MINUTES_PER_DAY : endMinute }
}

/** Parses a list of window strings, naming `field[i]` in errors. */
export function parseWindows (texts: readonly string[], field = 'windows'): AvailabilityWindow[] {
  return texts.map((t, i) => parseWindow(t, `${field}[${i}]`))
}

function hhmm (minute: number): string {
  return `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`
}

function formatDays (mask: number): string {
  if (mask === ALL_DAYS) return 'daily'
  if (mask === 0x1f) return 'mon-fri'
  if (mask === 0x60) return 'sat-sun'
  // contiguous runs, as a+b ranges
  const runs: string[] = []
  for (let d = 0; d < 7; d++) {
    if ((mask & (1 << d)) === 0) continue
    let e = d
    while (e + 1 < 7 && (mask & (1 << (e + 1))) !== 0) e++
    runs.push(e === d ? DAY_NAMES[d] as string : `${DAY_NAMES[d] as string}-${DAY_NAMES[e] as string}`)
    d = e
  }
  return runs.join('+')
}

/** Canonical text of a window ("mon-fri 19:00-07:00", "always"); parseWindow reads it back. */
export function formatWindow (w: AvailabilityWindow): string {
  if (w.days === ALL_DAYS && w.startMinute === 0 && w.endMinute === MINUTES_PER_DAY) return 'always'
  return `${formatDays(w.days)} ${hhmm(w.startMinute)}-${hhmm(w.endMinute)}`
}

export type WindowInput = AvailabilityWindow | string
