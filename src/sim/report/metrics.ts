/**
 * What a run measures, kept as sums and per-bucket arrays while it runs: GPU time busy
 * (owners' own work and market work, by region and time bucket), job outcomes and waits by
 * tier, money, lost work, preemptions, clearing prices over time, and provider earnings by
 * time class. summarise() turns them into the report's figures.
 */

import { TIERS, type Tier } from '../../capability/index.js'
import type { TimeClass } from '../../market/index.js'

export type Outcome = 'served' | 'expired' | 'refused'

export interface TierCounters {
  jobs: number
  served: number
  expired: number
  refused: number
  waitsMs: number[]
  /** market money paid, USD */
  paidUsd: number
  /** GPU-hours of runs that finished OK (market runs only) */
  usefulMarketGpuHours: number
  /** the same GPU-hours at on-demand list prices of the GPU each ran on, USD */
  onDemandUsd: number
  /** GPU-hours of runs that finished OK anywhere (own GPUs, market, cloud) */
  usefulGpuHours: number
  lostGpuHours: number
  preemptions: number
  /** of which at the end of the provider's availability window */
  windowPreemptions: number
  failovers: number
  reasons: Record<string, number>
}

const HOUR = 3600_000

export class Metrics {
  readonly tiers: Record<Tier, TierCounters>
  /** busy GPU-ms per region per bucket, own work and market work */
  readonly busyOwn: Float64Array
  readonly busyMarket: Float64Array
  readonly priceSum: Record<Tier, Float64Array>
  readonly priceCount: Record<Tier, Float64Array>
  readonly earnedByClass: Record<TimeClass, number> = { 'off-peak': 0, normal: 0, peak: 0 }
  readonly earnedByWindows = { idleWindows: 0, always: 0 }
  readonly declines: Record<string, number> = {}
  readonly dropped: Record<string, number> = {}
  /** market awards by the winner's conduct (honest, failing, lying) */
  readonly awardsByConduct: Record<string, number> = {}
  doubleBookings = 0
  /** tasks asking several GPUs (served on one provider with room for all of them), by outcome */
  readonly multiGpu = { jobs: 0, served: 0, servedOnMarket: 0, expired: 0, refused: 0 }
  /** GPU-hours of gold/silver market work still running when its provider's window closed */
  windowOverrunGpuHours = 0
  auctions = 0
  noBidAuctions = 0
  readonly buckets: number

  constructor (readonly horizonMs: number, readonly bucketMs: number, readonly regions: number) {
    this.buckets = Math.max(1, Math.ceil(horizonMs / bucketMs))
    this.busyOwn = new Float64Array(this.buckets * regions)
    this.busyMarket = new Float64Array(this.buckets * regions)
    const per = (): Record<Tier, Float64Array> => ({
      gold: new Float64Array(this.buckets),
      silver: new Float64Array(this.buckets),
      bronze: new Float64Array(this.buckets)
    })
    this.priceSum = per()
    this.priceCount = per()
    const tier = (): TierCounters => ({
      jobs: 0,
      served: 0,
      expired: 0,
      refused: 0,
      waitsMs: [],
      paidUsd: 0,
      usefulMarketGpuHours: 0,
      onDemandUsd: 0,
      usefulGpuHours: 0,
      lostGpuHours: 0,
      preemptions: 0,
      windowPreemptions: 0,
      failovers: 0,
      reasons: {}
    })
    this.tiers = { gold: tier(), silver: tier(), bronze: tier() }
  }

  /**
   * Adds `gpus` busy GPUs over [start, end) in `region` to the buckets (clipped to the horizon);
   * `own` is owners' own work.
   */
  busy (region: number, { own, start, end, gpus }: { own: boolean, start: number, end: number, gpus: number }): void {
    const arr = own ? this.busyOwn : this.busyMarket
    let t = Math.max(0, start)
    const stop = Math.min(end, this.horizonMs)
    while (t < stop) {
      const b = Math.floor(t / this.bucketMs)
      const bucketEnd = Math.min(stop, (b + 1) * this.bucketMs)
      arr[b * this.regions + region] = (arr[b * this.regions + region] as number) + (bucketEnd - t) * gpus
      t = bucketEnd
    }
  }

  price (tier: Tier, at: number, usdPerGpuHour: number): void {
    const b = Math.min(this.buckets - 1, Math.max(0, Math.floor(at / this.bucketMs)))
    this.priceSum[tier][b] = (this.priceSum[tier][b] as number) + usdPerGpuHour
    this.priceCount[tier][b] = (this.priceCount[tier][b] as number) + 1
  }

  end (tier: Tier, outcome: Outcome, reason?: string): void {
    const c = this.tiers[tier]
    c[outcome]++
    if (reason != null) c.reasons[`${outcome}: ${reason}`] = (c.reasons[`${outcome}: ${reason}`] ?? 0) + 1
  }

  count (table: Record<string, number>, key: string, n = 1): void {
    table[key] = (table[key] ?? 0) + n
  }

  static hours (ms: number, gpus: number): number {
    return ms * gpus / HOUR
  }
}

/** The p-th percentile (0..100) of `values`, nearest rank; 0 for none. */
export function percentile (values: number[], p: number): number {
  if (values.length === 0) return 0
  const sorted = Float64Array.from(values).sort()
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p / 100 * sorted.length) - 1))
  return sorted[i] as number
}

export { TIERS }
