import { ConfigError, ConfigFileError, asNumber } from '../config/index.js'
import { ControlError } from '../control/index.js'
import { KeyFileError } from '../identity/index.js'
import { DataDirInUseError, type NodeIdentity, type NodeStatus } from '../node/index.js'
import { runDemo } from './demo.js'
import { EXIT, UsageError } from './errors.js'
import { oneShot } from './one-shot.js'
import { COMMON_OPTIONS, NODE_OPTIONS, helpText, parseCommand, type CommandSpec, type ParsedValues } from './options.js'
import { createOutput, formatDuration, shortId, type Output } from './output.js'
import { runRole } from './run-role.js'

interface Command extends CommandSpec {
  run(values: ParsedValues, positionals: string[], out: Output): Promise<number>
}

const ROLE_DETAILS = 'Runs until SIGINT/SIGTERM, then stops cleanly (exit 0). One-shot commands (idlegrid status, id)\ntalk to it through the control socket in its data directory.'

const COMMANDS: Command[] = [
  {
    name: 'bootstrap',
    summary: 'Run a seed node: an always-on DHT server and gossip meeting point with no special authority.',
    usage: 'idlegrid bootstrap [options]',
    options: { ...NODE_OPTIONS, ...COMMON_OPTIONS },
    details: `${ROLE_DETAILS}\nDefault listen addresses: /ip4/127.0.0.1/tcp/4001 and /ip4/127.0.0.1/tcp/4002/ws; use\n--listen /ip4/0.0.0.0/tcp/4001 to serve other machines. It prints the multiaddrs peers should use.`,
    run: async (values, _, out) => await runRole('bootstrap', values, out)
  },
  {
    name: 'provider',
    summary: 'Run a provider node on a GPU box: advertise, bid on jobs, run them and sign attestations.',
    usage: 'idlegrid provider [options]',
    options: { ...NODE_OPTIONS, ...COMMON_OPTIONS },
    details: ROLE_DETAILS,
    run: async (values, _, out) => await runRole('provider', values, out)
  },
  {
    name: 'renter',
    summary: 'Run a light renter peer (DHT client mode) that stays up and reports what it sees.',
    usage: 'idlegrid renter [options]',
    options: { ...NODE_OPTIONS, ...COMMON_OPTIONS },
    details: ROLE_DETAILS,
    run: async (values, _, out) => await runRole('renter', values, out)
  },
  {
    name: 'id',
    summary: 'Print the node\'s peer id and listen addresses (of the node running on the data directory, or of a short-lived one).',
    usage: 'idlegrid id [options]',
    options: { ...NODE_OPTIONS, ...COMMON_OPTIONS },
    run: async (values, _, out) => {
      const { via, result } = await oneShot('id', {}, values)
      const id = result as NodeIdentity
      out.data(id)
      out.info(`peer id: ${id.peerId}`)
      for (const addr of id.addrs) out.info(`address: ${addr}`)
      if (via === 'short-lived') out.info('(no node is running on this data directory; these addresses belonged to a short-lived peer)')
      return EXIT.ok
    }
  },
  {
    name: 'status',
    summary: 'Show peers, topics and uptime of the node running on the data directory (or of a short-lived peer).',
    usage: 'idlegrid status [options] [--wait S]',
    options: { ...NODE_OPTIONS, wait: { type: 'string', valueName: 'S', description: 'a short-lived peer waits up to S seconds to reach its bootstrap peers (default 3)' }, ...COMMON_OPTIONS },
    run: async (values, _, out) => {
      const wait = asNumber(values.wait ?? 3, 'wait', { min: 0, max: 120 })
      const { via, result } = await oneShot('status', {}, values, { settleMs: wait * 1000 })
      const status = result as NodeStatus
      out.data({ ...status, via })
      printStatus(status, via, out)
      return EXIT.ok
    }
  },
  {
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
]

function printStatus (s: NodeStatus, via: string, out: Output): void {
  out.info(`${s.role} ${s.peerId}${via === 'short-lived' ? ' (short-lived peer: no node runs on this data directory)' : ''}`)
  out.info(`  uptime ${formatDuration(s.uptimeMs)}, DHT ${s.dhtMode} mode, data dir ${s.dataDir}`)
  for (const addr of s.addrs) out.info(`  listening ${addr}`)
  out.info(`  ${s.peers.length} connected peers, ${s.routingTable.length} in the DHT routing table`)
  for (const p of s.peers) {
    const heard = s.heard.find(h => h.peerId === p.peerId)
    out.info(`    ${shortId(p.peerId)} ${heard != null ? heard.role.padEnd(9) : '?'.padEnd(9)} ${p.addrs[0]}`)
  }
  out.info('  topics:')
  for (const [topic, peers] of Object.entries(s.topics)) out.info(`    ${topic.padEnd(22)} ${peers.length} peers`)
}

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
    const command = COMMANDS.find(c => c.name === name)
    if (command == null) throw new UsageError(`idlegrid: unknown command '${name}' (commands: ${COMMANDS.map(c => c.name).join(', ')})`)
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
  if (err?.code === 'EADDRINUSE' || /EADDRINUSE/.test(String(err?.message))) {
    return `cannot listen: address already in use (${String(err?.message ?? '').replace(/^.*EADDRINUSE:?\s*/, '')}); pick another --listen port`
  }
  if (err?.name === 'UnsupportedListenAddressesError' || err?.name === 'NoValidAddressesError') return `cannot listen on the configured addresses: ${String(err?.message)}`
  return String(err?.message ?? err)
}

function exitCodeOf (err: unknown): number {
  if (err instanceof UsageError || err instanceof ConfigError || err instanceof ConfigFileError) return EXIT.usage
  if (err instanceof KeyFileError || err instanceof DataDirInUseError || err instanceof ControlError) return EXIT.failure
  return EXIT.failure
}
