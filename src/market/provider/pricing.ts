/**
 * Dynamic pricing of a provider's bids, as one pure function. The price never goes below the
 * floor; it rises with utilization and in peak hours, falls off-peak, is nudged toward the
 * clearing prices recently seen in awards, and keeps bronze < silver < gold by applying the
 * tier as the last multiplier on a floor-clamped base.
 *
 * Clearing prices come from other peers' awards, so their pull is bounded (issue 13): each
 * sample is first clamped into [base / (1 + band), base × (1 + band)] around the provider's
 * own base, then the base moves `clearingWeight` of the way to the median of the clamped
 * samples. However many awards say otherwise, the nudge moves the base by at most
 * clearingWeight × band (7.5 % with the defaults) up, or clearingWeight × band / (1 + band) down.
 */

import { localWeekMinute, type Tier } from '../../capability/index.js'

export type TimeClass = 'peak' | 'normal' | 'off-peak'

export interface PricingParams {
  /** multiplier per tier, applied last; strictly increasing bronze → silver → gold */
  tierMultiplier: Record<Tier, number>
  /** base × (1 + utilizationSlope × utilization²): cheap while idle, dearer when nearly full */
  utilizationSlope: number
  peakMultiplier: number
  offPeakMultiplier: number
  /** 0..1: how far toward the median recent clearing price (tier-normalised) the base moves */
  clearingWeight: number
  /** ≥ 0: a clearing sample counts as at most (1 + band) × the base and at least base / (1 + band) */
  clearingBand: number
  /** local hours [start, end) that are peak on weekdays */
  peakHours: [number, number]
  /** local hours [start, end) that are off-peak every day (may wrap past midnight) */
  offPeakHours: [number, number]
}

export const DEFAULT_PRICING: PricingParams = {
  tierMultiplier: { bronze: 1.0, silver: 1.25, gold: 1.6 },
  utilizationSlope: 0.5,
  peakMultiplier: 1.2,
  offPeakMultiplier: 0.9,
  clearingWeight: 0.3,
  clearingBand: 0.25,
  peakHours: [9, 18],
  offPeakHours: [0, 6]
}

export interface PriceInputs {
  floorMicroUsd: number
  tier: Tier
  /** busy share of the slots, 0..1 */
  utilization: number
  timeClass: TimeClass
  /** recent clearing prices seen in verified awards, micro-USD, with the tier each cleared for */
  recentClearing?: ReadonlyArray<{ priceMicroUsd: number, tier: Tier }>
  /**
   * the same samples already tier-normalised (clearingSample), only finite ones > 0, sorted
   * ascending; when given, recentClearing is not read (the bid engine keeps them so as they come)
   */
  clearingSorted?: readonly number[]
}

/** The bid price in micro-USD per GPU-hour. */
export function quotePrice (inputs: PriceInputs, params: PricingParams = DEFAULT_PRICING): number {
  const floor = Math.max(1, Math.round(inputs.floorMicroUsd))
  const utilization = Math.min(1, Math.max(0, Number.isFinite(inputs.utilization) ? inputs.utilization : 1))
  const time = inputs.timeClass === 'peak' ? params.peakMultiplier : inputs.timeClass === 'off-peak' ? params.offPeakMultiplier : 1
  let base = floor * (1 + params.utilizationSlope * utilization ** 2) * time
  base +=
    inputs.clearingSorted != null
      ? nudgeFromSorted(base, inputs.clearingSorted, params)
      : clearingNudge(base, inputs.recentClearing ?? [], params)
  // clamp before the tier multiplier so the tiers stay strictly ordered even at the floor
  base = Math.max(floor, base)
  return Math.max(floor, Math.round(base * params.tierMultiplier[inputs.tier]))
}

/**
 * How far the clearing samples move `base` (tier-normalised micro-USD): clearingWeight × (median
 * of the samples, each clamped into the band around base − base); 0 with no usable sample.
 */
export function clearingNudge (
  base: number,
  samples: ReadonlyArray<{ priceMicroUsd: number, tier: Tier }>,
  params: PricingParams = DEFAULT_PRICING
): number {
  const band = 1 + Math.max(0, Number.isFinite(params.clearingBand) ? params.clearingBand : 0)
  const weight = Math.min(1, Math.max(0, Number.isFinite(params.clearingWeight) ? params.clearingWeight : 0))
  // one pass, no intermediate arrays: a provider prices every job it sees (and the simulator
  // prices millions); the few samples of the default memory are kept sorted as they come
  const seen: number[] = []
  const small = samples.length <= 64
  for (const c of samples) {
    const p = c.priceMicroUsd / params.tierMultiplier[c.tier]
    if (!Number.isFinite(p) || p <= 0) continue
    const v = Math.min(base * band, Math.max(base / band, p))
    if (!small) { seen.push(v); continue }
    let j = seen.length
    while (j > 0 && (seen[j - 1] as number) > v) { seen[j] = seen[j - 1] as number; j-- }
    seen[j] = v
  }
  if (!small) seen.sort((a, b) => a - b)
  return seen.length === 0 ? 0 : weight * (medianOfSorted(seen) - base)
}

/** A clearing sample tier-normalised, or NaN when it cannot count (not finite or ≤ 0). */
export function clearingSample (priceMicroUsd: number, tier: Tier, params: PricingParams = DEFAULT_PRICING): number {
  const p = priceMicroUsd / params.tierMultiplier[tier]
  return Number.isFinite(p) && p > 0 ? p : NaN
}

/**
 * clearingNudge from samples already normalised and sorted: clamping into the band keeps
 * their order, so the median of the clamped samples is the clamped middle one(s), the same
 * figure without a pass over every sample.
 */
export function nudgeFromSorted (
  base: number,
  sorted: readonly number[],
  params: PricingParams = DEFAULT_PRICING
): number {
  const n = sorted.length
  if (n === 0) return 0
  const band = 1 + Math.max(0, Number.isFinite(params.clearingBand) ? params.clearingBand : 0)
  const weight = Math.min(1, Math.max(0, Number.isFinite(params.clearingWeight) ? params.clearingWeight : 0))
  const clamp = (p: number): number => Math.min(base * band, Math.max(base / band, p))
  const mid = Math.floor(n / 2)
  const median =
    n % 2 === 1 ? clamp(sorted[mid] as number) : (clamp(sorted[mid - 1] as number) + clamp(sorted[mid] as number)) / 2
  return weight * (median - base)
}

function medianOfSorted (sorted: readonly number[]): number {
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] as number : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

/** Whether `atMs` is peak (weekday peak hours), off-peak, or normal in `timeZone`. */
export function timeClassAt (timeZone: string, atMs: number, params: PricingParams = DEFAULT_PRICING): TimeClass {
  const weekMinute = localWeekMinute(timeZone, atMs)
  const hour = Math.floor((weekMinute % MINUTES_PER_DAY) / 60)
  const weekend = weekMinute >= 5 * MINUTES_PER_DAY
  if (inHours(hour, params.offPeakHours)) return 'off-peak'
  if (!weekend && inHours(hour, params.peakHours)) return 'peak'
  return 'normal'
}

const MINUTES_PER_DAY = 24 * 60

function inHours (hour: number, [start, end]: [number, number]): boolean {
  return start <= end ? hour >= start && hour < end : hour >= start || hour < end
}
