/**
 * The scale scenario (examples/sim/scale.yaml: 10,000 providers, 1,000,000 jobs, market and
 * baseline) timed end to end: wall and CPU seconds, peak memory, jobs per second. The target
 * is ≤ 60 s and ≤ 2 GiB on 2 cores. SIM_BENCH_SHARE=0.1 runs a tenth of it (a quick check).
 */
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { loadScenario, runScenario } from '../../src/sim/index.js'

export default async (): Promise<Record<string, unknown>> => {
  const share = Math.min(1, Math.max(0.001, Number(process.env.SIM_BENCH_SHARE ?? 1)))
  const file = fileURLToPath(new URL('../../../examples/sim/scale.yaml', import.meta.url))
  const scenario = await loadScenario(file)
  const synthetic = scenario.synthetic as NonNullable<typeof scenario.synthetic>
  scenario.synthetic = {
    ...synthetic,
    providers: Math.round(synthetic.providers * share),
    jobs: Math.round(synthetic.jobs * share)
  }
  const cpu = process.cpuUsage()
  const started = performance.now()
  const { report } = await runScenario(scenario)
  const wallS = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  return {
    providers: report.input.providers,
    jobs: report.input.jobs,
    wallSeconds: Math.round(wallS * 10) / 10,
    cpuSeconds: Math.round((used.user + used.system) / 1e5) / 10,
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    jobsPerSecond: Math.round(report.input.jobs * 2 / wallS),
    loadAverage1m: Math.round(loadavg()[0] as number * 100) / 100,
    marketUtilisation: report.market.utilisation,
    baselineUtilisation: report.baseline.utilisation
  }
}
