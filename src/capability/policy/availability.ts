/**
 * Whether a provider is available: weekly windows (windows.ts) evaluated at an instant or
 * over a span. Local time is read with Intl.DateTimeFormat in the given IANA zone, so DST is
 * followed.
 */

import { MINUTES_PER_DAY, parseWindow, type WindowInput } from './windows.js'

const MINUTES_PER_WEEK = 7 * MINUTES_PER_DAY
const MINUTE_MS = 60_000
const DAY_MS = 86_400_000
/** how far nextChange looks ahead */
export const NEXT_CHANGE_HORIZON_MS = 8 * DAY_MS

/** A week of minutes (0 = Monday 00:00 local), 1 where available. */
function weekMap (windows: readonly WindowInput[]): Uint8Array {
  const map = new Uint8Array(MINUTES_PER_WEEK)
  for (const input of windows) {
    const w = typeof input === 'string' ? parseWindow(input) : input
    const len = w.endMinute > w.startMinute
      ? w.endMinute - w.startMinute
      : w.endMinute + MINUTES_PER_DAY - w.startMinute
    for (let d = 0; d < 7; d++) {
      if ((w.days & (1 << d)) === 0) continue
      const start = d * MINUTES_PER_DAY + w.startMinute
      for (let m = 0; m < len; m++) map[(start + m) % MINUTES_PER_WEEK] = 1
    }
  }
  return map
}

interface Compiled {
  map: Uint8Array
  flips: number[]
  /**
   * per zone, the latest nextChange answer `at` and the minute `from` it was searched from:
   * every minute in [from, at) has the same answer (no flip lies between)
   */
  next: Map<string, { from: number, at: number }>
}
const compiledCache = new WeakMap<readonly WindowInput[], Compiled>()
// equal windows share one compiled week (10 KiB each): a simulator's thousands of providers
// with the same windows text, or a node re-reading its policy, compile it once
const compiledByText = new Map<string, Compiled>()
const COMPILED_BY_TEXT_MAX = 1024
function compiled (windows: readonly WindowInput[]): Compiled {
  let c = compiledCache.get(windows)
  if (c == null) {
    const parsed = windows.map(w => typeof w === 'string' ? parseWindow(w) : w)
    const text = parsed.map(w => `${w.days}/${w.startMinute}/${w.endMinute}`).join(',')
    c = compiledByText.get(text)
    if (c == null) {
      const map = weekMap(parsed)
      // local week minutes where the state differs from the minute before
      const flips: number[] = []
      for (let m = 0; m < MINUTES_PER_WEEK; m++) {
        if (map[m] !== map[(m + MINUTES_PER_WEEK - 1) % MINUTES_PER_WEEK]) flips.push(m)
      }
      c = { map, flips, next: new Map() }
      if (compiledByText.size >= COMPILED_BY_TEXT_MAX) compiledByText.clear()
      compiledByText.set(text, c)
    }
    compiledCache.set(windows, c)
  }
  return c
}

// creating an Intl.DateTimeFormat costs ~0.1 ms, and providers check a window for every job they
// see: one formatter per zone. Only a zone's canonical spelling is kept (an unknown zone throws):
// names match case-insensitively, and records from other nodes must not grow the cache with
// endless spellings of one zone, so the cache stays bounded by the IANA zones
const formatters = new Map<string, Intl.DateTimeFormat>()
/** Weekday (short) and 24-hour hour and minute in `timeZone`; throws RangeError for an unknown zone. */
export function localTimeFormat (timeZone: string): Intl.DateTimeFormat {
  const cached = formatters.get(timeZone)
  if (cached != null) return cached
  const f = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
  if (f.resolvedOptions().timeZone === timeZone) formatters.set(timeZone, f)
  return f
}

/** Whether `timeZone` is an IANA zone this runtime knows. */
export function isValidTimeZone (timeZone: string): boolean {
  try {
    localTimeFormat(timeZone)
    return true
  } catch {
    return false
  }
}

const WEEKDAYS: Record<string, number> = { Mon: 0, Tue: 1, Wed: 2, Thu: 3, Fri: 4, Sat: 5, Sun: 6 }

// formatToParts costs ~5 µs, and a provider (or the simulator) asks about the same minutes again
// and again (every job it sees, window look-ahead): answers are kept per cached zone and minute,
// a bounded table emptied when full (zone offsets are whole minutes)
const MINUTE_CACHE_MAX = 20_000
const minuteCache = new Map<string, Map<number, number>>()

/** Local minute of the week (0 = Monday 00:00) at `atMs` in `timeZone`. */
export function localWeekMinute (timeZone: string, atMs: number): number {
  const minute = Math.floor(atMs / 60_000)
  const table = minuteCache.get(timeZone)
  const known = table?.get(minute)
  if (known !== undefined) return known
  const value = readWeekMinute(timeZone, atMs)
  if (table != null) {
    if (table.size >= MINUTE_CACHE_MAX) table.clear()
    table.set(minute, value)
  } else if (formatters.has(timeZone)) {
    minuteCache.set(timeZone, new Map([[minute, value]]))
  }
  return value
}

function readWeekMinute (timeZone: string, atMs: number): number {
  let day = -1
  let hour = 0
  let minute = 0
  for (const p of localTimeFormat(timeZone).formatToParts(atMs)) {
    if (p.type === 'weekday') day = WEEKDAYS[p.value] ?? -1
    else if (p.type === 'hour') hour = Number(p.value) % 24
    else if (p.type === 'minute') minute = Number(p.value)
  }
  if (day < 0) throw new Error(`cannot read the weekday in time zone ${timeZone}`)
  return day * MINUTES_PER_DAY + hour * 60 + minute
}

/** Whether the provider is available at `atMs`. */
export function isAvailable (windows: readonly WindowInput[], timeZone: string, atMs: number): boolean {
  return compiled(windows).map[localWeekMinute(timeZone, atMs)] === 1
}

/**
 * When availability next flips after `atMs` (unix ms, on a minute boundary), or null when
 * it does not flip within 8 days (always or never available).
 */
export function nextChange (windows: readonly WindowInput[], timeZone: string, atMs: number): number | null {
  const c = compiled(windows)
  if (c.flips.length === 0) return null
  // the answer depends on the zone and the minute only (the search starts at the minute), and
  // is the same for every later minute before it: a clock moving forward searches once per flip
  const minute = Math.floor(atMs / MINUTE_MS) * MINUTE_MS
  const known = c.next.get(timeZone)
  if (known != null && minute >= known.from && minute < known.at) return known.at
  const value = searchNextChange(c, timeZone, atMs)
  if (value != null && formatters.has(timeZone)) c.next.set(timeZone, { from: minute, at: value })
  return value
}

function searchNextChange ({ map, flips }: Compiled, timeZone: string, atMs: number): number | null {
  const stateAt = (t: number): number => map[localWeekMinute(timeZone, t)] ?? 0
  const initial = stateAt(atMs)
  const horizon = atMs + NEXT_CHANGE_HORIZON_MS
  let t = Math.floor(atMs / MINUTE_MS) * MINUTE_MS // same state as atMs
  while (t <= horizon) {
    const wm = localWeekMinute(timeZone, t)
    // local distance to the next flip strictly after wm
    let dist = MINUTES_PER_WEEK
    for (const f of flips) {
      const d = (f - wm + MINUTES_PER_WEEK) % MINUTES_PER_WEEK
      if (d > 0 && d < dist) dist = d
    }
    const candidate = t + dist * MINUTE_MS
    if (stateAt(candidate) !== initial) {
      // DST may have made the jump overshoot: find the first flipped minute in (t, candidate]
      let lo = t
      let hi = candidate
      while (hi - lo > MINUTE_MS) {
        const mid = lo + Math.floor((hi - lo) / (2 * MINUTE_MS)) * MINUTE_MS
        if (stateAt(mid) === initial) lo = mid
        else hi = mid
      }
      return hi <= horizon ? hi : null
    }
    t = candidate
  }
  return null
}

/**
 * Whether the whole interval [startMs, startMs + durationMs) lies inside the windows;
 * adjacent windows count as one (e.g. "fri 19:00-24:00" then "sat-sun").
 */
export function availableFor (
  windows: readonly WindowInput[],
  timeZone: string,
  startMs: number,
  durationMs: number
): boolean {
  if (!isAvailable(windows, timeZone, startMs)) return false
  if (durationMs <= 0) return true
  // no flip within 8 days means none ever (the pattern is weekly)
  const change = nextChange(windows, timeZone, startMs)
  return change === null || change >= startMs + durationMs
}
