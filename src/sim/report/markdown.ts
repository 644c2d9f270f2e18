/**
 * The report page: the claims with their verdicts, the main table (market vs baseline by
 * tier), the figures, provider yield, adversaries, and what the simulation does and does not
 * model. Written next to report.json and the SVG figures by writeReport.
 */

import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { TIERS } from '../../capability/index.js'
import { renderPlots } from './plots.js'
import type { SimReport } from '../run.js'

const pct = (x: number): string => `${(x * 100).toFixed(1)} %`

export function mainTable (report: SimReport): string {
  const rows = ['| tier | run | jobs | served | expired | refused | wait p50 / p95 (min) | USD per useful GPU-h | on-demand USD, same GPU-h | lost GPU-h | preemptions |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|']
  for (const t of TIERS) {
    for (const run of ['market', 'baseline'] as const) {
      const s = report[run].tiers[t]
      rows.push(`| ${t} | ${run} | ${s.jobs} | ${pct(s.servedShare)} | ${s.expired} | ${s.refused} | ${s.waitP50Minutes} / ${s.waitP95Minutes} | ${s.costPerUsefulGpuHourUsd.toFixed(3)} | ${s.onDemandPerUsefulGpuHourUsd.toFixed(3)} | ${s.lostGpuHours} | ${s.preemptions} |`)
    }
  }
  return rows.join('\n')
}

/**
 * The data table: the market's bytes moved and time to start with the providers' input caches on
 * and off (same seed, same jobs).
 */
export function dataTable (report: SimReport): string {
  const d = report.data
  if (d == null) return ''
  const rows = ['| input cache | awards | cache hit ratio (awards / bytes) | GiB moved | GiB per award mean / p50 / p95 | time to start s mean / p50 / p95 |',
    '|---|---:|---:|---:|---:|---:|']
  for (const s of [d.cacheOn, d.cacheOff]) {
    const m = s.movedPerAwardGiB
    const t = s.timeToStartSeconds
    rows.push(`| ${s.cache ? `on, ${d.params.cacheGiB} GiB per provider` : 'off'} | ${s.awards} | ${pct(s.hitRatio)} / ${pct(s.byteHitRatio)} | ${s.movedGiB.toFixed(1)} | ${m.mean.toFixed(2)} / ${m.p50.toFixed(2)} / ${m.p95.toFixed(2)} | ${t.mean.toFixed(1)} / ${t.p50.toFixed(1)} / ${t.p95.toFixed(1)} |`)
  }
  return rows.join('\n')
}

export function markdownReport (report: SimReport): string {
  const { input, market, baseline } = report
  const lines: string[] = []
  lines.push(`# idlegrid sim: ${report.scenario.name}`, '')
  if (report.scenario.description !== '') lines.push(report.scenario.description, '')
  lines.push(`Seed ${report.scenario.seed}. ${input.providers} providers (${input.gpus} GPUs) of ${input.owners} owners, ${input.renters} renters, ${input.jobs} GPU jobs over ${input.spanDays} days` +
    (report.scenario.synthetic != null ? ' (synthetic, resampled from the trace).' : ` (trace; ${input.cpuOnlyLeftOut} CPU-only and ${input.pendingLeftOut} never-scheduled tasks left out, ${input.cutAtTraceEnd} cut at the trace end).`), '')
  lines.push('## Claims', '', '| claim | measured | verdict |', '|---|---|---|')
  for (const c of report.claims) lines.push(`| ${c.claim} | ${c.measured} | **${c.verdict}** |`)
  lines.push('', '## Market vs baseline, by tier', '', mainTable(report), '')
  lines.push(`Utilisation over the horizon: market ${pct(market.utilisation)} (owners' own work ${pct(market.ownUtilisation)}), baseline ${pct(baseline.utilisation)}.`, '')
  lines.push('Baseline: owners run their own work on their own GPUs only, queueing when full; renters rent on demand from one cloud, ' +
    'served at once at the list price of the cheapest GPU the job accepts. "On-demand USD, same GPU-h" prices the market\'s useful GPU-hours at the list price of the GPU each ran on.', '')
  if (report.data != null) {
    const p = report.data.params
    lines.push('## Data and the input cache', '', dataTable(report), '',
      `The market's runs move each award's inputs from the renter before the run starts (at ${Math.min(p.renterGbps, p.providerGbps)} Gbit/s: renter ${p.renterGbps}, provider ${p.providerGbps}); ` +
      `with the cache on, providers keep what they received (LRU, ${p.cacheGiB} GiB each) and bid what they hold, which the ranking counts. The market figures above are the cache-${p.cache ? 'on' : 'off'} run. ` +
      `Datasets are an assumption (the trace has none): a task reads a public one with probability ${p.publicShare}, else one of its renter's ${p.datasetsPerRenter} of its kind with probability ${p.reuse}, else a new one; ` +
      `sizes log-normal, training median ${p.training.medianGiB} GiB (σ ${p.training.sigma}), inference median ${p.inference.medianGiB} GiB (σ ${p.inference.sigma}); see examples/sim/README.md. ` +
      `Evictions (cache on): ${report.data.cacheOn.evictions}; the most one provider held: ${report.data.cacheOn.peakCacheGiB} GiB.`, '')
  }
  lines.push('## Figures', '')
  for (const f of ['utilisation', 'cost', 'waits', 'served', 'lost', 'yield', 'price']) lines.push(`![${f}](${f}.svg)`, '')
  lines.push('## Provider yield', '', '| time class | earned USD | offered GPU-h (not used by owners) | USD per offered GPU-h |', '|---|---:|---:|---:|')
  for (const [c, y] of Object.entries(market.providerYield.byTimeClass)) lines.push(`| ${c} | ${y.earnedUsd} | ${y.offeredGpuHours} | ${y.usdPerOfferedGpuHour} |`)
  lines.push('', `Earned by owners offering only idle windows (weeknights, weekends): ${market.providerYield.byAvailability.idleWindowsUsd} USD; by owners offering always: ${market.providerYield.byAvailability.alwaysUsd} USD.`, '')
  lines.push('## Market internals', '', `Auctions ${market.market.auctions}, of which without an award ${market.market.noAwardAuctions}. GPU double bookings: ${market.market.doubleBookings}.`, '',
    `Declines by reason: ${JSON.stringify(market.market.declines)}. Bids dropped by the renter: ${JSON.stringify(market.market.dropped)}.`, '',
    `Window ends (owners taking their GPUs back): ${TIERS.map(t => `${t} ${market.tiers[t].windowPreemptions}`).join(', ')} preemptions; gold/silver GPU-hours run past a window's end ${market.market.windowOverrunGpuHours}.`, '',
    `Tasks of several GPUs: ${JSON.stringify(market.market.multiGpu)} (served on one provider with room for all; refused where no provider of the model and zone has that many). Trust computations: ${market.market.trustComputations}.`, '')
  lines.push('| conduct | providers | market awards won | mean reliability at the end |', '|---|---:|---:|---:|')
  for (const [k, v] of Object.entries(market.conduct)) lines.push(`| ${k} | ${v.providers} | ${v.awards} | ${v.meanReliability} |`)
  lines.push('', '## Why jobs were not served', '')
  for (const t of TIERS) lines.push(`- ${t}: ${JSON.stringify(market.tiers[t].topReasons)}`)
  lines.push('', '## List prices used (baseline)', '', '| GPU | USD per GPU-hour | source | page | checked |', '|---|---:|---|---|---|')
  for (const [k, v] of Object.entries(report.listPrices)) lines.push(`| ${k} | ${v.usdPerGpuHour} | ${v.source} | ${v.page} | ${v.checked} |`)
  lines.push('', 'UNVERIFIED: public on-demand list prices as known to the author (2023–2024, US regions), not re-checked on the pages named (see src/sim/model/list-prices.ts); AWS has cut some GPU prices since, so the A100/H100 figures may be high.', '')
  lines.push('## Data', '', 'Trace: Alibaba cluster-trace-gpu-v2023 (openb), from "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", Weng et al., USENIX ATC 2023; see examples/data/alibaba-gpu/README.md.', '')
  return lines.join('\n')
}

/** Writes report.json, report.md and the SVG figures into `dir`; returns the files written. */
export async function writeReport (dir: string, report: SimReport): Promise<string[]> {
  await mkdir(dir, { recursive: true })
  const files: string[] = []
  const put = async (name: string, text: string): Promise<void> => {
    await writeFile(join(dir, name), text)
    files.push(join(dir, name))
  }
  await put('report.json', JSON.stringify(report, null, 2) + '\n')
  await put('report.md', markdownReport(report))
  for (const [name, svg] of Object.entries(await renderPlots(report))) await put(`${name}.svg`, svg)
  return files
}
