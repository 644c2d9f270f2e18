import { resolve } from 'node:path'
import { asEnum, asNumber } from '../../config/index.js'
import { EXIT, UsageError } from '../errors.js'
import { COMMON_OPTIONS } from '../options.js'
import { SimError, dataTable, loadScenario, mainTable, progressBar, runScenario, writeReport } from '../../sim/index.js'
import type { CommandDefinition } from '../command.js'

export const simCommand: CommandDefinition = {
  name: 'sim',
  usage: 'idlegrid sim SCENARIO.yaml [--trace FILE] [--nodes FILE] [--seed N] [--data-cache on|off] [--cache-gib N] [--out DIR] [--json]',
  allowPositionals: true,
  options: {
    trace: { type: 'string', valueName: 'FILE', description: 'task CSV in the openb pod-list format, instead of the scenario\'s' },
    nodes: { type: 'string', valueName: 'FILE', description: 'node CSV in the openb node-list format, instead of the scenario\'s' },
    seed: { type: 'string', valueName: 'N', description: 'seed (default: the scenario\'s); one seed, one report' },
    'data-cache': { type: 'string', valueName: 'on|off', description: 'model job data: providers keep input caches (on) or not (off) in the market run; the data table compares both (default: the scenario\'s data section, else data is not modelled)' },
    'cache-gib': { type: 'string', valueName: 'N', description: 'each provider\'s input-cache budget, GiB (default: the scenario\'s, else 200); models job data' },
    out: { type: 'string', valueName: 'DIR', description: 'write report.json, report.md and SVG figures here' },
    ...COMMON_OPTIONS
  },
  details: 'Scenarios: examples/sim/*.yaml (trace, baseline, scale, adversarial; see examples/sim/README.md).\nEach run simulates the market and the baseline with the same seed and jobs and prints the main\ntable and the claims; --json prints the whole report as one JSON object. Where data is modelled\n(a data: section, --data-cache or --cache-gib), the market runs again with the input caches the\nother way and the data table (bytes moved, time to start, cache hits) compares the two.',
  run: async (values, positionals, out) => {
    if (positionals.length !== 1) throw new UsageError('idlegrid sim: give one SCENARIO.yaml')
    const json = values.json === true
    try {
      const scenario = await loadScenario(resolve(positionals[0] as string))
      const trace =
        values.trace != null || values.nodes != null
          ? {
              nodes: resolve(String(values.nodes ?? scenario.trace.nodes)),
              tasks: resolve(String(values.trace ?? scenario.trace.tasks))
            }
          : undefined
      const seed = values.seed == null ? undefined : asNumber(values.seed, 'seed', { min: 0, max: 2 ** 32 - 1, integer: true })
      const data = values['data-cache'] == null && values['cache-gib'] == null
        ? undefined
        : {
            cache: values['data-cache'] == null ? undefined : asEnum(values['data-cache'], 'data-cache', ['on', 'off'] as const) === 'on',
            cacheGiB: values['cache-gib'] == null ? undefined : asNumber(values['cache-gib'], 'cache-gib', { min: 0, max: 1_000_000 })
          }
      const bar = progressBar(!json)
      const started = Date.now()
      const { report } = await runScenario(scenario, {
        trace,
        seed,
        data,
        onProgress: (mode, done, total) => {
          bar.update(mode, done, total)
        }
      })
      bar.stop()
      const seconds = (Date.now() - started) / 1000
      out.data(report)
      out.info(`${report.scenario.name}: ${report.input.jobs} jobs, ${report.input.providers} providers, simulated in ${seconds.toFixed(1)} s\n`)
      out.info(mainTable(report))
      out.info('')
      if (report.data != null) out.info(dataTable(report) + '\n')
      for (const c of report.claims) out.info(`${c.verdict.toUpperCase().padEnd(11)} ${c.claim}: ${c.measured}`)
      if (values.out != null) {
        const files = await writeReport(resolve(String(values.out)), report)
        out.info(`\nwrote ${files.length} files to ${String(values.out)} (report.md, report.json, figures)`)
      }
      return EXIT.ok
    } catch (err) {
      if (err instanceof SimError) throw new UsageError(err.message)
      throw err
    }
  }
}
