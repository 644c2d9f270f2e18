import { parseArgs, type ParseArgsConfig } from 'node:util'
import { UsageError } from './errors.js'

type OptionSpec = NonNullable<ParseArgsConfig['options']>[string] & { description: string, valueName?: string }
export type OptionTable = Record<string, OptionSpec>

/** Options every node command takes. */
export const NODE_OPTIONS: OptionTable = {
  listen: { type: 'string', multiple: true, valueName: 'MULTIADDR', description: 'address to listen on (repeatable)' },
  announce: { type: 'string', multiple: true, valueName: 'MULTIADDR', description: 'address to announce instead of the listen addresses (repeatable)' },
  'data-dir': { type: 'string', valueName: 'DIR', description: 'node data directory: key, ledger, control socket (default ~/.idlegrid, env IDLEGRID_DATA_DIR)' },
  bootstrap: { type: 'string', multiple: true, valueName: 'MULTIADDR', description: 'bootstrap peer /…/p2p/<id> (repeatable; env IDLEGRID_BOOTSTRAP, comma-separated; default bootstrap/peers.json)' },
  trust: { type: 'string', multiple: true, valueName: 'PEER_ID', description: 'a peer whose view of reputation this node starts from, besides itself and its bootstrap peers (repeatable)' },
  'trust-list': { type: 'string', multiple: true, valueName: 'FILE', description: 'a trust list (signed by a network operator) whose peers this node\'s view of reputation also starts from; adopted only when signed by a --trust-operator key, unexpired (repeatable; config trust.lists)' },
  'trust-operator': { type: 'string', multiple: true, valueName: 'PEER_ID', description: 'an operator key whose trust lists this node adopts (repeatable; config trust.operators; default none)' },
  config: { type: 'string', valueName: 'FILE', description: 'YAML config file' },
  'private-addresses': { type: 'string', valueName: 'auto|true|false', description: 'keep loopback/LAN addresses in the DHT (default auto: true when the bootstrap peers are local)' },
  reachability: { type: 'string', valueName: 'auto|public|private', description: 'private: reserve slots on relays to be reached; public: peers dial this node directly (default auto: private when no listen or announce address is public and the bootstrap peers are)' },
  upnp: { type: 'string', valueName: 'true|false', description: 'behind NAT, ask the router to forward the listen port (UPnP IGD) and announce the mapped address (default true; only routers on this machine\'s LAN are asked)' },
  'relay-serve': { type: 'string', valueName: 'true|false', description: 'serve circuit relay v2 for peers behind NAT, within the config file\'s relay limits (default: true for a bootstrap)' },
  'heartbeat-seconds': { type: 'string', valueName: 'S', description: 'seconds between signed heartbeats (default 10)' },
  'heartbeat-gossip': { type: 'boolean', description: 'also join the legacy heartbeat topic /idlegrid/2/heartbeats (off by default: heartbeats go to connected peers)' }
}

export const COMMON_OPTIONS: OptionTable = {
  json: { type: 'boolean', description: 'print data as JSON' },
  verbose: { type: 'boolean', short: 'v', description: 'show details and stack traces' },
  help: { type: 'boolean', short: 'h', description: 'show this help' }
}

export interface CommandSpec {
  name: string
  summary: string
  usage: string
  options: OptionTable
  /** longer text after the options */
  details?: string
  allowPositionals?: boolean
}

export type ParsedValues = Record<string, string | boolean | string[] | boolean[] | undefined>

export interface Parsed {
  values: ParsedValues
  positionals: string[]
}

/** Parses argv strictly: an unknown option or a missing value is a UsageError. */
export function parseCommand (spec: Pick<CommandSpec, 'name' | 'options' | 'allowPositionals'>, argv: string[]): Parsed {
  const options = Object.fromEntries(
    Object.entries(spec.options).map(([name, { description, valueName, ...opt }]) => [name, opt])
  )
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options,
      strict: true,
      allowPositionals: spec.allowPositionals ?? false
    })
    return { values: values as ParsedValues, positionals }
  } catch (err: any) {
    throw new UsageError(`idlegrid ${spec.name}: ${tidyParseError(String(err?.message ?? err))} (see idlegrid ${spec.name} --help)`)
  }
}

function tidyParseError (message: string): string {
  const unknown = /Unknown option '([^']+)'/.exec(message)
  if (unknown != null) return `unknown option '${unknown[1]}'`
  const positional = /Unexpected argument '([^']+)'/.exec(message)
  if (positional != null) return `unexpected argument '${positional[1]}'`
  return message.split('\n')[0].replace(/\. To specify.*$/, '')
}

export function helpText (spec: CommandSpec): string {
  const rows = Object.entries(spec.options).map(([name, opt]) => {
    const flag = `${opt.short != null ? `-${opt.short}, ` : '    '}--${name}${opt.type === 'string' ? ` ${opt.valueName ?? 'VALUE'}` : ''}`
    return [flag, opt.description]
  })
  const width = Math.min(38, Math.max(...rows.map(([flag]) => flag.length)) + 2)
  const lines = rows.map(([flag, text]) => `  ${flag.padEnd(width)}${flag.length >= width ? '\n  ' + ' '.repeat(width) : ''}${text}`)
  return [`${spec.summary}`, '', `Usage: ${spec.usage}`, '', 'Options:', ...lines, ...(spec.details != null ? ['', spec.details] : [])].join('\n') + '\n'
}

/** Node-option values as config flags (camelCase), leaving out what was not given. */
export function nodeFlags (values: ParsedValues): Record<string, unknown> {
  const flags: Record<string, unknown> = {
    listen: values.listen,
    announce: values.announce,
    dataDir: values['data-dir'],
    bootstrap: values.bootstrap,
    trust: values.trust,
    trustLists: values['trust-list'],
    trustOperators: values['trust-operator'],
    privateAddresses: values['private-addresses'],
    reachability: values.reachability,
    relayServe: values['relay-serve'],
    upnp: values.upnp,
    heartbeatSeconds: values['heartbeat-seconds'],
    heartbeatGossip: values['heartbeat-gossip']
  }
  return Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined))
}
