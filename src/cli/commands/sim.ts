import { resolve } from 'node:path'
import { asNumber } from '../../config/index.js'
import { EXIT, UsageError } from '../errors.js'
import { COMMON_OPTIONS } from '../options.js'
import { SimError, loadScenario, mainTable, progressBar, runScenario, writeReport } from '../../sim/index.js'
import type { CommandDefinition } from '../command.js'

export const simCommand: CommandDefinition = {
  name: 'sim',
  usage: 'idlegrid sim SCENARIO.yaml [--trace FILE] [--nodes FILE] [--seed N] [--out DIR] [--json]',
  allowPositionals: true,
  options: {
    trace: { type: 'string', valueName: 'FILE', description: 'task CSV in the openb pod-list format, instead of the scenario\'s' },
    nodes: { type: 'string', valueName: 'FILE', description: 'node CSV in the openb node-list format, instead of the scenario\'s' },
    seed: { type: 'string', valueName: 'N', description: 'seed (default: the scenario\'s); one seed, one report' },
    out: { type: 'string', valueName: 'DIR', description: 'write report.json, report.md and SVG figures here' },
    ...COMMON_OPTIONS
  },
  details: 'Scenarios: examples/sim/*.yaml (trace, baseline, scale, adversarial; see examples/sim/README.md).\nEach run simulates the market and the baseline with the same seed and jobs and prints the main\ntable and the claims; --json prints the whole report as one JSON object.',
  run: async (values, positionals, out) => {
    if (positionals.length !== 1) throw new UsageError('idlegrid sim: give one SCENARIO.yaml')
    const json = values.json === true
    try {
      const scenario = await loadScenario(resolve(positionals[0] as string))
      const trace = values.trace != null || values.nodes != null
        ? { nodes: resolve(String(values.nodes ?? scenario.trace.nodes)), tasks: resolve(String(values.trace ?? scenario.trace.tasks)) }
        : undefined
      const seed = values.seed == null ? undefined : asNumber(values.seed, 'seed', { min: 0, max: 2 ** 32 - 1, integer: true })
      const bar = progressBar(!json)
      const started = Date.now()
      const { report } = await runScenario(scenario, { trace, seed, onProgress: (mode, done, total) => { bar.update(mode, done, total) } })
      bar.stop()
      const seconds = (Date.now() - started) / 1000
      out.data(report)
      out.info(`${report.scenario.name}: ${report.input.jobs} jobs, ${report.input.providers} providers, simulated in ${seconds.toFixed(1)} s\n`)
      out.info(mainTable(report))
      out.info('')
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
