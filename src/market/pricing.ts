/**
 * Dynamic pricing of a provider's bids, as one pure function. The price never goes below the
 * floor; it rises with utilization and in peak hours, falls off-peak, is nudged toward the
 * clearing prices recently seen in awards, and keeps bronze < silver < gold by applying the
 * tier as the last multiplier on a floor-clamped base.
 */

import { localTimeFormat, type Tier } from '../capability/index.js'

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
  peakHours: [9, 18],
  offPeakHours: [0, 6]
}

export interface PriceInputs {
  floorMicroUsd: number
  tier: Tier
  /** busy share of the slots, 0..1 */
  utilization: number
  timeClass: TimeClass
  /** recent clearing prices seen in awards, micro-USD, with the tier each cleared for */
  recentClearing?: ReadonlyArray<{ priceMicroUsd: number, tier: Tier }>
}

/** The bid price in micro-USD per GPU-hour. */
export function quotePrice (inputs: PriceInputs, params: PricingParams = DEFAULT_PRICING): number {
  const floor = Math.max(1, Math.round(inputs.floorMicroUsd))
  const utilization = Math.min(1, Math.max(0, Number.isFinite(inputs.utilization) ? inputs.utilization : 1))
  const time = inputs.timeClass === 'peak' ? params.peakMultiplier : inputs.timeClass === 'off-peak' ? params.offPeakMultiplier : 1
  let base = floor * (1 + params.utilizationSlope * utilization ** 2) * time
  const seen = (inputs.recentClearing ?? [])
    .map(c => c.priceMicroUsd / params.tierMultiplier[c.tier])
    .filter(p => Number.isFinite(p) && p > 0)
  if (seen.length > 0) base += params.clearingWeight * (median(seen) - base)
  // clamp before the tier multiplier so the tiers stay strictly ordered even at the floor
  base = Math.max(floor, base)
  return Math.max(floor, Math.round(base * params.tierMultiplier[inputs.tier]))
}

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] as number : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

/** Whether `atMs` is peak (weekday peak hours), off-peak, or normal in `timeZone`. */
export function timeClassAt (timeZone: string, atMs: number, params: PricingParams = DEFAULT_PRICING): TimeClass {
  const parts = localTimeFormat(timeZone).formatToParts(atMs)
  const hour = Number(parts.find(p => p.type === 'hour')?.value ?? 0) % 24
  const weekday = parts.find(p => p.type === 'weekday')?.value ?? 'Mon'
  if (inHours(hour, params.offPeakHours)) return 'off-peak'
  if (weekday !== 'Sat' && weekday !== 'Sun' && inHours(hour, params.peakHours)) return 'peak'
  return 'normal'
}

function inHours (hour: number, [start, end]: [number, number]): boolean {
  return start <= end ? hour >= start && hour < end : hour >= start || hour < end
}
