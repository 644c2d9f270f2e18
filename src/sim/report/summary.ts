/**
 * A finished run, summed up: per tier (outcomes, waits, cost per useful GPU-hour, lost work),
 * utilisation over time, provider yield by time class, prices over time, adversaries' share.
 * Numbers are rounded so that reports compare byte for byte across machines.
 */

import { TIERS, type Tier } from '../../capability/index.js'
import { timeClassAt, type TimeClass } from '../../market/index.js'
import { percentile, type Metrics } from './metrics.js'
import type { Population } from '../model/population.js'
import type { Conduct } from '../model/provider.js'
import type { ReputationBook } from '../model/reputation-book.js'
import type { Scenario } from '../scenario.js'

/** Virtual time 0 is this instant (a Monday, 00:00 UTC): time classes and windows are read from it. */
export const SIM_EPOCH_MS = Date.UTC(2026, 0, 5)

export interface TierSummary {
  jobs: number
  served: number
  expired: number
  refused: number
  servedShare: number
  waitP50Minutes: number
  waitP95Minutes: number
  /** market (or cloud) money per useful GPU-hour it bought, USD */
  costPerUsefulGpuHourUsd: number
  /** what the same GPU-hours cost at on-demand list prices, USD per GPU-hour */
  onDemandPerUsefulGpuHourUsd: number
  /** paid ÷ on-demand for the same GPU-hours (1 − saving) */
  costVsOnDemand: number
  usefulGpuHours: number
  usefulMarketGpuHours: number
  lostGpuHours: number
  preemptions: number
  /** of which at the end of the provider's availability window (the owner takes its GPUs back) */
  windowPreemptions: number
  failovers: number
  topReasons: Record<string, number>
}

export interface ModeSummary {
  tiers: Record<Tier, TierSummary>
  gpus: number
  /** busy share of all GPUs over the horizon, and of own work alone */
  utilisation: number
  ownUtilisation: number
  series: {
    bucketHours: number
    busy: number[]
    own: number[]
    market: number[]
    price: Record<Tier, Array<number | null>>
  }
  providerYield: {
    byTimeClass: Record<TimeClass, { earnedUsd: number, offeredGpuHours: number, usdPerOfferedGpuHour: number }>
    byAvailability: { idleWindowsUsd: number, alwaysUsd: number }
  }
  market: { auctions: number, noAwardAuctions: number, declines: Record<string, number>, dropped: Record<string, number>, doubleBookings: number, reputationRecomputes: number, trustComputations: number, windowOverrunGpuHours: number, multiGpu: Metrics['multiGpu'] }
  conduct: Record<Conduct, { providers: number, meanReliability: number, awards: number }>
}

const r4 = (x: number): number => Math.round(x * 1e4) / 1e4
const r2 = (x: number): number => Math.round(x * 100) / 100

function top (table: Record<string, number>, n: number): Record<string, number> {
  return Object.fromEntries(Object.entries(table).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, n))
}

export function summarise (m: Metrics, pop: Population, scenario: Scenario, reputation: ReputationBook): ModeSummary {
  const tiers = {} as Record<Tier, TierSummary>
  for (const t of TIERS) {
    const c = m.tiers[t]
    const paidHours = c.usefulMarketGpuHours > 0 ? c.usefulMarketGpuHours : c.usefulGpuHours
    tiers[t] = {
      jobs: c.jobs,
      served: c.served,
      expired: c.expired,
      refused: c.refused,
      servedShare: r4(c.jobs === 0 ? 0 : c.served / c.jobs),
      waitP50Minutes: r2(percentile(c.waitsMs, 50) / 60_000),
      waitP95Minutes: r2(percentile(c.waitsMs, 95) / 60_000),
      costPerUsefulGpuHourUsd: r4(paidHours === 0 ? 0 : c.paidUsd / paidHours),
      onDemandPerUsefulGpuHourUsd: r4(paidHours === 0 ? 0 : c.onDemandUsd / paidHours),
      costVsOnDemand: r4(c.onDemandUsd === 0 ? 0 : c.paidUsd / c.onDemandUsd),
      usefulGpuHours: r2(c.usefulGpuHours),
      usefulMarketGpuHours: r2(c.usefulMarketGpuHours),
      lostGpuHours: r2(c.lostGpuHours),
      preemptions: c.preemptions,
      windowPreemptions: c.windowPreemptions,
      failovers: c.failovers,
      topReasons: top(c.reasons, 6)
    }
  }
  const regions = scenario.population.regions
  const gpusByRegion = regions.map(r =>
    pop.providers.filter(p => p.region.name === r.name).reduce((s, p) => s + p.gpus, 0)
  )
  const gpus = gpusByRegion.reduce((a, b) => a + b, 0)
  const busy: number[] = []
  const own: number[] = []
  const market: number[] = []
  const offered: Record<TimeClass, number> = { 'off-peak': 0, normal: 0, peak: 0 }
  let busySum = 0
  let ownSum = 0
  for (let b = 0; b < m.buckets; b++) {
    const length = Math.min(m.bucketMs, m.horizonMs - b * m.bucketMs)
    let o = 0
    let k = 0
    for (let r = 0; r < regions.length; r++) {
      const ownMs = m.busyOwn[b * regions.length + r] as number
      o += ownMs
      k += m.busyMarket[b * regions.length + r] as number
      const cls = timeClassAt((regions[r] as { timeZone: string }).timeZone, SIM_EPOCH_MS + b * m.bucketMs)
      offered[cls] += Math.max(0, (gpusByRegion[r] as number) * length - ownMs) / 3600_000
    }
    const cap = gpus * length
    own.push(r4(cap > 0 ? o / cap : 0))
    market.push(r4(cap > 0 ? k / cap : 0))
    busy.push(r4(cap > 0 ? (o + k) / cap : 0))
    busySum += o + k
    ownSum += o
  }
  const total = gpus * m.horizonMs
  const price = {} as Record<Tier, Array<number | null>>
  for (const t of TIERS) {
    price[t] = Array.from(m.priceSum[t], (s, i) =>
      (m.priceCount[t][i] as number) > 0 ? r4(s / (m.priceCount[t][i] as number)) : null
    )
  }
  const byTimeClass = {} as ModeSummary['providerYield']['byTimeClass']
  for (const cls of ['off-peak', 'normal', 'peak'] as const) {
    byTimeClass[cls] = {
      earnedUsd: r2(m.earnedByClass[cls]),
      offeredGpuHours: r2(offered[cls]),
      usdPerOfferedGpuHour: r4(offered[cls] > 0 ? m.earnedByClass[cls] / offered[cls] : 0)
    }
  }
  const conduct = {} as ModeSummary['conduct']
  for (const kind of ['honest', 'failing', 'lying'] as const) {
    const ps = pop.providers.filter(p => p.conduct === kind)
    conduct[kind] = {
      providers: ps.length,
      awards: m.awardsByConduct[kind] ?? 0,
      meanReliability: r4(ps.length === 0 ? 0 : ps.reduce((s, p) => s + reputation.reliability(p.id), 0) / ps.length)
    }
  }
  return {
    tiers,
    gpus,
    utilisation: r4(total > 0 ? busySum / total : 0),
    ownUtilisation: r4(total > 0 ? ownSum / total : 0),
    series: { bucketHours: m.bucketMs / 3600_000, busy, own, market, price },
    providerYield: {
      byTimeClass,
      byAvailability: { idleWindowsUsd: r2(m.earnedByWindows.idleWindows), alwaysUsd: r2(m.earnedByWindows.always) }
    },
    market: {
      auctions: m.auctions,
      noAwardAuctions: m.noBidAuctions,
      declines: top(m.declines, 20),
      dropped: top(m.dropped, 20),
      doubleBookings: m.doubleBookings,
      reputationRecomputes: reputation.recomputes,
      trustComputations: reputation.trustComputations,
      windowOverrunGpuHours: r4(m.windowOverrunGpuHours),
      multiGpu: { ...m.multiGpu }
    },
    conduct
  }
}
