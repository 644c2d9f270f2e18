/**
 * The report's figures: vega-lite specs compiled to vega and rendered headless to SVG
 * (View.toSVG needs no canvas). Each figure puts the market and the baseline side by side.
 */

import type { TopLevelSpec } from 'vega-lite'
import { TIERS } from '../../capability/index.js'
import type { SimReport } from '../run.js'

type Row = Record<string, string | number | null>

async function render (spec: TopLevelSpec): Promise<string> {
  // loaded on first use: vega and vega-lite cost ~0.4 s of start-up that no node needs
  const [{ compile }, { View, parse }] = await Promise.all([import('vega-lite'), import('vega')])
  const view = new View(parse(compile(spec).spec), { renderer: 'none' })
  const svg = await view.toSVG()
  view.finalize()
  return svg
}

const WIDTH = 560
const HEIGHT = 220

/** A line per run (market, baseline) over days. */
function line (title: string, values: Row[], y: string, yTitle: string): TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title,
    width: WIDTH,
    height: HEIGHT,
    data: { values },
    mark: { type: 'line', interpolate: 'step-after' },
    encoding: {
      x: { field: 'day', type: 'quantitative', title: 'day' },
      y: { field: y, type: 'quantitative', title: yTitle },
      color: { field: 'run', type: 'nominal' }
    }
  }
}

function bars (title: string, values: Row[], y: string, yTitle: string): TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title,
    width: 140,
    height: HEIGHT,
    data: { values },
    mark: 'bar',
    encoding: {
      column: { field: 'tier', type: 'nominal', sort: [...TIERS] },
      x: { field: 'run', type: 'nominal', title: null },
      y: { field: y, type: 'quantitative', title: yTitle },
      color: { field: 'run', type: 'nominal' }
    }
  }
}

/** At most `max` points per series: long runs are thinned by averaging neighbours. */
function thin (series: Array<number | null>, bucketHours: number, max = 600): Array<{ day: number, v: number | null }> {
  const step = Math.max(1, Math.ceil(series.length / max))
  const out: Array<{ day: number, v: number | null }> = []
  for (let i = 0; i < series.length; i += step) {
    const part = series.slice(i, i + step).filter((x): x is number => x != null)
    out.push({
      day: Math.round(((i * bucketHours) / 24) * 1000) / 1000,
      v: part.length === 0 ? null : Math.round((part.reduce((a, b) => a + b, 0) / part.length) * 1e4) / 1e4
    })
  }
  return out
}

export async function renderPlots (report: SimReport): Promise<Record<string, string>> {
  const { market, baseline } = report
  const h = market.series.bucketHours
  const util: Row[] = [
    ...thin(market.series.busy, h).map(p => ({ day: p.day, share: p.v, run: 'market: all work' })),
    ...thin(market.series.own, h).map(p => ({ day: p.day, share: p.v, run: 'market: owners\' own work' })),
    ...thin(baseline.series.busy, h).map(p => ({ day: p.day, share: p.v, run: 'baseline' }))
  ]
  const price: Row[] = TIERS.flatMap(t =>
    thin(market.series.price[t], h)
      .filter(p => p.v != null)
      .map(p => ({ day: p.day, usd: p.v, run: t }))
  )
  const perTier = (f: (s: SimReport['market']['tiers']['gold']) => number, name: string): Row[] => TIERS.flatMap(t => [
    { tier: t, run: 'market', [name]: f(market.tiers[t]) },
    { tier: t, run: 'baseline', [name]: f(baseline.tiers[t]) }
  ])
  const waits: Row[] = TIERS.flatMap(t => [
    { tier: t, run: 'market p50', minutes: market.tiers[t].waitP50Minutes },
    { tier: t, run: 'market p95', minutes: market.tiers[t].waitP95Minutes },
    { tier: t, run: 'baseline p50', minutes: baseline.tiers[t].waitP50Minutes },
    { tier: t, run: 'baseline p95', minutes: baseline.tiers[t].waitP95Minutes }
  ])
  const lost: Row[] = TIERS.flatMap(t => [
    { tier: t, run: 'lost GPU-h (market)', value: market.tiers[t].lostGpuHours },
    { tier: t, run: 'preemptions (market)', value: market.tiers[t].preemptions }
  ])
  const yieldRows: Row[] = (['off-peak', 'normal', 'peak'] as const).map(c => ({ tier: c, run: 'market', usd: market.providerYield.byTimeClass[c].usdPerOfferedGpuHour }))
  const cost: Row[] = TIERS.flatMap(t => [
    { tier: t, run: 'market', usd: market.tiers[t].costPerUsefulGpuHourUsd },
    { tier: t, run: 'on-demand list, same GPUs', usd: market.tiers[t].onDemandPerUsefulGpuHourUsd }
  ])
  const served = perTier(s => s.servedShare, 'share')
  return {
    utilisation: await render(line('GPU utilisation over time', util, 'share', 'busy share of all GPUs')),
    cost: await render(bars('Renter cost per useful GPU-hour by tier', cost, 'usd', 'USD per GPU-hour')),
    waits: await render(bars('Wait from arrival to first start, by tier', waits, 'minutes', 'minutes')),
    lost: await render(bars('Preemptions and lost work (market)', lost, 'value', 'count / GPU-hours')),
    yield: await render({ ...bars('Provider yield: USD per offered GPU-hour by time class', yieldRows, 'usd', 'USD per offered GPU-hour'), encoding: { x: { field: 'tier', type: 'nominal', title: 'time class', sort: ['off-peak', 'normal', 'peak'] }, y: { field: 'usd', type: 'quantitative', title: 'USD per offered GPU-hour' } } } as TopLevelSpec),
    served: await render(bars('Share of jobs served', served, 'share', 'served share')),
    price: await render(line('Market clearing price over time', price, 'usd', 'mean USD per GPU-hour'))
  }
}
