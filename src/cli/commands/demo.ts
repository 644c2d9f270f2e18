import { asNumber } from '../../config/index.js'
import { runDemo } from '../../demo/index.js'
import { EXIT } from '../errors.js'
import { COMMON_OPTIONS } from '../options.js'
import type { Command } from '../command.js'

export const demoCommand: Command = {
  name: 'demo',
  summary: 'Run the whole market on this machine (processes on loopback, temporary data): auctions, jobs, preemption, attestations.',
  usage: 'idlegrid demo [options]',
  options: {
    providers: { type: 'string', valueName: 'N', description: 'provider processes to start (default 5, at least 5 for the full scenario)' },
    jobs: { type: 'string', valueName: 'N', description: 'scenario jobs to play (default 5: bronze, gold preempting it, silver, EU residency, impossible; more adds silver jobs)' },
    keep: { type: 'boolean', description: 'leave the network running at the end and print how to reach it' },
    ...COMMON_OPTIONS
  },
  details: 'Needs nothing but this checkout: simulated GPUs, the process runner, and the batch-scoring workload in examples/.',
  run: async (values, _, out) => {
    const providers = asNumber(values.providers ?? 5, 'providers', { integer: true, min: 1, max: 50 })
    const jobs = asNumber(values.jobs ?? 5, 'jobs', { integer: true, min: 0, max: 50 })
    const summary = await runDemo({ providers, jobs, keep: values.keep === true }, out)
    out.data(summary)
    return summary.ok ? EXIT.ok : EXIT.failure
  }
}
