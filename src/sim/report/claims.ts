/**
 * The seed's claims, judged against a run: renters pay 50–80 % less than on-demand list
 * prices; owners' GPU utilisation rises 20–40 points; bronze and silver save 30–70 % against
 * gold; gold keeps its SLA (never preempted). Each verdict carries the measured number, and
 * says plainly when the claim fails or the run cannot tell.
 */

import type { ModeSummary } from './summary.js'

export interface Claim {
  claim: string
  measured: string
  verdict: 'holds' | 'exceeds' | 'falls short' | 'no data'
}

const pct = (x: number): string => `${(x * 100).toFixed(1)} %`

function range (value: number, low: number, high: number): Claim['verdict'] {
  if (!Number.isFinite(value)) return 'no data'
  return value < low ? 'falls short' : value > high ? 'exceeds' : 'holds'
}

export function judgeClaims (market: ModeSummary, baseline: ModeSummary): Claim[] {
  const t = market.tiers
  const paid =
    t.gold.costPerUsefulGpuHourUsd * t.gold.usefulMarketGpuHours +
    t.silver.costPerUsefulGpuHourUsd * t.silver.usefulMarketGpuHours +
    t.bronze.costPerUsefulGpuHourUsd * t.bronze.usefulMarketGpuHours
  const list =
    t.gold.onDemandPerUsefulGpuHourUsd * t.gold.usefulMarketGpuHours +
    t.silver.onDemandPerUsefulGpuHourUsd * t.silver.usefulMarketGpuHours +
    t.bronze.onDemandPerUsefulGpuHourUsd * t.bronze.usefulMarketGpuHours
  const saving = list > 0 ? 1 - paid / list : NaN
  const points = market.utilisation - baseline.utilisation
  const claims: Claim[] = [
    {
      claim: 'renters pay 50–80 % less per useful GPU-hour than on-demand list prices',
      measured: list > 0 ? `${pct(saving)} less (market ${(paid / Math.max(1e-9, t.gold.usefulMarketGpuHours + t.silver.usefulMarketGpuHours + t.bronze.usefulMarketGpuHours)).toFixed(3)} USD vs list ${(list / Math.max(1e-9, t.gold.usefulMarketGpuHours + t.silver.usefulMarketGpuHours + t.bronze.usefulMarketGpuHours)).toFixed(3)} USD per useful GPU-hour, lost work and preempted time included)` : 'no market work finished',
      verdict: range(saving, 0.5, 0.8)
    },
    {
      claim: 'GPU utilisation rises by 20–40 points',
      measured: `${(points * 100).toFixed(1)} points (baseline ${pct(baseline.utilisation)}, market ${pct(market.utilisation)} of which owners' own work ${pct(market.ownUtilisation)})`,
      verdict: range(points, 0.2, 0.4)
    }
  ]
  for (const tier of ['silver', 'bronze'] as const) {
    const ratio =
      t.gold.costVsOnDemand > 0 && t[tier].costVsOnDemand > 0
        ? 1 - t[tier].costVsOnDemand / t.gold.costVsOnDemand
        : NaN
    claims.push({
      claim: `${tier} saves 30–70 % against gold (per useful GPU-hour, normalised by the GPUs' list prices)`,
      measured: Number.isFinite(ratio) ? `${pct(ratio)} (${tier} pays ${pct(t[tier].costVsOnDemand)} of list, gold ${pct(t.gold.costVsOnDemand)})` : 'no finished market work in one of the tiers',
      verdict: range(ratio, 0.3, 0.7)
    })
  }
  claims.push({
    claim: 'latency-sensitive (gold) work keeps its SLA: never preempted, served like the baseline',
    measured: `gold preemptions ${t.gold.preemptions}; served ${pct(t.gold.servedShare)} (baseline ${pct(baseline.tiers.gold.servedShare)}); wait p95 ${t.gold.waitP95Minutes} min (baseline ${baseline.tiers.gold.waitP95Minutes} min)`,
    verdict: t.gold.jobs === 0 ? 'no data' : t.gold.preemptions === 0 && t.gold.servedShare >= baseline.tiers.gold.servedShare - 0.01 ? 'holds' : 'falls short'
  })
  return claims
}
