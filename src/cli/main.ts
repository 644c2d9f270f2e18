import { isCoded } from '../common/index.js'
import { ConfigError } from '../config/index.js'
import { IdentityError } from '../identity/index.js'
import { COMMANDS } from './commands/index.js'
import { EXIT, UsageError } from './errors.js'
import { helpText, parseCommand } from './options.js'
import { createOutput } from './output.js'
import type { Command } from './command.js'

function mainHelp (): string {
  const width = Math.max(...COMMANDS.map(c => c.name.length)) + 2
  return [
    'idlegrid: a decentralized market for idle GPU time.',
    '',
    'Usage: idlegrid <command> [options]',
    '',
    'Commands:',
    ...COMMANDS.map(c => `  ${c.name.padEnd(width)}${c.summary}`),
    '',
    'Run idlegrid <command> --help for its options.'
  ].join('\n') + '\n'
}

/** Runs the CLI; resolves with the process exit code. Errors become one line on stderr. */
export async function main (argv: string[]): Promise<number> {
  const [name, ...rest] = argv
  const verbose = rest.includes('--verbose') || rest.includes('-v')
  const json = rest.includes('--json')
  const out = createOutput(json)
  try {
    if (name == null || name === '--help' || name === '-h' || name === 'help') {
      process.stdout.write(mainHelp())
      return name == null ? EXIT.usage : EXIT.ok
    }
    const entry = COMMANDS.find(c => c.name === name)
    if (entry == null) throw new UsageError(`idlegrid: unknown command '${name}' (commands: ${COMMANDS.map(c => c.name).join(', ')})`)
    const command: Command = { ...await entry.load(), summary: entry.summary }
    const { values, positionals } = parseCommand(command, rest)
    if (values.help === true) {
      process.stdout.write(helpText(command))
      return EXIT.ok
    }
    return await command.run(values, positionals, out)
  } catch (err: any) {
    out.warn(`error: ${describeError(err)}`)
    if (verbose && err?.stack != null) out.warn(String(err.stack))
    return exitCodeOf(err)
  }
}

function describeError (err: any): string {
  const message = String(err?.message ?? err)
  if (err?.code === 'EADDRINUSE' || message.includes('EADDRINUSE')) {
    // libp2p wraps the socket error in a multi-line explanation: keep the address
    const addrs = [...message.matchAll(/^\s*(\/\S+): Error: listen EADDRINUSE/gm)].map(m => m[1])
    return `cannot listen on ${addrs.length > 0 ? addrs.join(', ') : 'the configured address'}: address already in use; pick another --listen port`
  }
  if (err?.name === 'UnsupportedListenAddressesError' || err?.name === 'NoValidAddressesError') return `cannot listen on the configured addresses: ${String(err?.message)}`
  return String(err?.message ?? err)
}

/**
 * 2 for a mistake in the call, the config or the data directory's permissions, 1 for everything
 * that went wrong while running.
 */
function exitCodeOf (err: unknown): number {
  if (err instanceof UsageError || err instanceof ConfigError || isCoded(err, IdentityError, 'ERR_DATA_DIR_PERMISSIONS')) return EXIT.usage
  return EXIT.failure
}
