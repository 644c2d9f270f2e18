/**
 * Runs a scenario twice with one seed, the same population and the same jobs: once with the
 * market, once the old way (baseline), and returns both summaries in one report. Where the
 * scenario models data (data-cache.ts), the market runs a third time with the providers'
 * input caches the other way, for the data table. Nothing here reads the wall clock, so one
 * seed gives one report, byte for byte.
 */

import { loadTrace, type Trace } from './model/trace.js'
import { resampleTrace } from './model/synthetic.js'
import { buildPopulation, type Population } from './model/population.js'
import { DATA_DEFAULTS, SimData, drawCatalogue, type DataParams, type DataSummary } from './model/data-cache.js'
import { SimEngine, type Mode, type RunRecord } from './engine/engine.js'
import { latencyModel } from './model/latency.js'
import { Rng } from './model/rng.js'
import { summarise, type ModeSummary } from './report/summary.js'
import { judgeClaims, type Claim } from './report/claims.js'
import { LIST_PRICES } from './model/list-prices.js'
import type { Scenario } from './scenario.js'

export interface SimReport {
  scenario: { name: string, description: string, seed: number, synthetic: Scenario['synthetic'] | null }
  input: {
    providers: number
    gpus: number
    jobs: number
    spanDays: number
    cpuOnlyLeftOut: number
    pendingLeftOut: number
    cutAtTraceEnd: number
    owners: number
    renters: number
  }
  market: ModeSummary
  baseline: ModeSummary
  claims: Claim[]
  listPrices: typeof LIST_PRICES
  /**
   * where data is modelled: its parameters and the market's data figures with the input caches on
   * and off (same seed, same jobs)
   */
  data: { params: DataParams, cacheOn: DataSummary, cacheOff: DataSummary } | null
}

export interface RunOptions {
  /** replaces the scenario's trace files */
  trace?: { nodes: string, tasks: string }
  seed?: number
  /** called with the mode and jobs ended so far */
  onProgress?: (mode: Mode, done: number, total: number) => void
  recordRuns?: boolean
  /** overrides the scenario's `data:` (and models data where the scenario does not): caches on or off, their budget */
  data?: { cache?: boolean, cacheGiB?: number }
}

export interface ScenarioRun {
  report: SimReport
  /** per mode, when recordRuns */
  runs: Record<Mode, RunRecord[]>
  /** the providers by index (the same in both modes) */
  providers: Array<{ region: string, modelKey: string, gpus: number, conduct: string }>
}

export async function runScenario (scenario: Scenario, opts: RunOptions = {}): Promise<ScenarioRun> {
  const seed = opts.seed ?? scenario.seed
  const files = opts.trace ?? scenario.trace
  let trace: Trace = await loadTrace(files.nodes, files.tasks)
  if (scenario.synthetic != null) trace = resampleTrace(trace, scenario.synthetic, new Rng(seed ^ 0x5eed))
  const summaries = {} as Record<Mode, ModeSummary>
  const runs = { market: [], baseline: [] } as Record<Mode, RunRecord[]>
  let input: SimReport['input'] | undefined
  let providers: ScenarioRun['providers'] = []
  const dataBase = scenario.data ?? DATA_DEFAULTS
  const dataParams: DataParams | undefined = opts.data == null && scenario.data == null
    ? undefined
    : { ...dataBase, cache: opts.data?.cache ?? dataBase.cache, cacheGiB: opts.data?.cacheGiB ?? dataBase.cacheGiB }
  const dataSummaries: DataSummary[] = []
  const simulate = (mode: Mode, cache: boolean | undefined): { engine: SimEngine, pop: Population } => {
    const rng = new Rng(seed)
    // the providers' schedulers read the engine's clock, which exists once they do
    const pop = buildPopulation(scenario, trace, rng.fork(), () => engine.now)
    // the market's data: its own generator, so runs with the caches on and off read the same datasets
    const data =
      mode === 'market' && dataParams != null && cache != null
        ? new SimData(
          drawCatalogue(pop.jobs, dataParams, new Rng(seed ^ 0xda7a)),
          { ...dataParams, cache },
          pop.providers
        )
        : undefined
    for (const p of pop.providers) p.data = data
    const engine: SimEngine = new SimEngine(scenario, pop, {
      mode,
      latency: latencyModel(rng.fork()),
      rng: rng.fork(),
      horizonMs: Math.max(1, trace.spanMs),
      recordRuns: opts.recordRuns,
      data,
      onProgress: (done) => { opts.onProgress?.(mode, done, pop.jobs.length) }
    })
    engine.run()
    opts.onProgress?.(mode, pop.jobs.length, pop.jobs.length)
    if (data != null) dataSummaries.push(data.summary())
    return { engine, pop }
  }
  for (const mode of ['market', 'baseline'] as const) {
    const { engine, pop } = simulate(mode, dataParams?.cache)
    summaries[mode] = summarise(engine.metrics, pop, scenario, engine.reputation)
    runs[mode] = engine.runs
    providers = pop.providers.map(p => ({
      region: p.region.name,
      modelKey: p.modelKey,
      gpus: p.gpus,
      conduct: p.conduct
    }))
    input ??= {
      providers: pop.providers.length,
      gpus: summaries[mode].gpus,
      jobs: pop.jobs.length,
      spanDays: Math.round(trace.spanMs / 864e5 * 100) / 100,
      cpuOnlyLeftOut: trace.cpuOnlyLeftOut,
      pendingLeftOut: trace.pendingLeftOut,
      cutAtTraceEnd: trace.tasks.filter(t => t.cut).length,
      owners: pop.owners.length,
      renters: scenario.population.renters
    }
  }
  // the same market with the caches the other way, for the data table
  if (dataParams != null) simulate('market', !dataParams.cache)
  const byCache = (on: boolean): DataSummary => dataSummaries.find(d => d.cache === on) as DataSummary
  const report: SimReport = {
    scenario: { name: scenario.name, description: scenario.description, seed, synthetic: scenario.synthetic ?? null },
    input: input as SimReport['input'],
    market: summaries.market,
    baseline: summaries.baseline,
    claims: judgeClaims(summaries.market, summaries.baseline),
    listPrices: LIST_PRICES,
    data: dataParams == null ? null : { params: dataParams, cacheOn: byCache(true), cacheOff: byCache(false) }
  }
  return { report, runs, providers }
}
