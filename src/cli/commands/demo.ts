import { asNumber } from '../../config/index.js'
import { runDemo } from '../demo.js'
import { EXIT } from '../errors.js'
import { COMMON_OPTIONS } from '../options.js'
import type { Command } from '../command.js'

export const demoCommand: Command = {
  name: 'demo',
  summary: 'Start a whole idlegrid network on this machine (loopback, temporary data), show it working, stop it.',
  usage: 'idlegrid demo [options]',
  options: {
    providers: { type: 'string', valueName: 'N', description: 'provider processes to start (default 2)' },
    keep: { type: 'boolean', description: 'leave the network running and print how to reach it' },
    ...COMMON_OPTIONS
  },
  run: async (values, _, out) => {
    const providers = asNumber(values.providers ?? 2, 'providers', { integer: true, min: 1, max: 50 })
    const summary = await runDemo({ providers, keep: values.keep === true }, out)
    out.data(summary)
    return summary.ok ? EXIT.ok : EXIT.failure
  }
}
