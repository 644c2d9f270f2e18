import { readFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { resolve } from 'node:path'
import { peerIdFromString } from '@libp2p/peer-id'
import { multiaddr } from '@multiformats/multiaddr'
import { ConfigError, asBoolean, asNumber, asObject, asStringList, asEnum, onlyKnownKeys, type Fields } from './validate.js'
import { resolveReachability, resolveRelay, type Reachability, type RelayConfig } from './reach.js'
import { MAX_VERIFIER_THREADS } from '../identity/index.js'
import type { Multiaddr } from '@multiformats/multiaddr'

export const ROLES = ['bootstrap', 'provider', 'renter'] as const
export type Role = typeof ROLES[number]

export interface NodeConfig {
  role: Role
  dataDir: string
  /** multiaddrs to listen on */
  listen: string[]
  /** multiaddrs to announce instead of the listen addresses (optional) */
  announce: string[]
  /** bootstrap peers (multiaddrs ending in /p2p/<peer id>) */
  bootstrap: string[]
  /** peer ids the operator trusts: with the bootstrap peers, where this node's view of reputation starts */
  trust: string[]
  /** trust list files (a signed TrustList each) this node may adopt: config `trust.lists`, --trust-list */
  trustLists: string[]
  /** operator keys (peer ids) whose trust lists this node adopts: config `trust.operators`, --trust-operator */
  trustOperators: string[]
  /** keep loopback/private addresses in the DHT: needed on a LAN or loopback network */
  privateAddresses: boolean
  /** most connections the node keeps */
  maxConnections: number
  /** how many discovered peers the node dials on its own to join the mesh */
  targetPeers: number
  heartbeatMs: number
  /** also publish and read the legacy global heartbeat topic (heartbeats go to connected peers by default) */
  heartbeatGossip: boolean
  /** whether the node needs relays to be reached (reach.ts: needsRelays decides `auto`) */
  reachability: Reachability
  /**
   * behind NAT: ask the router (UPnP IGD) to forward the listen port, and announce the mapped
   * address (default true)
   */
  upnp: boolean
  /** the circuit relay this node serves for others, if any */
  relay: RelayConfig
  /** raw provider section, validated by the capability policy */
  provider: Fields
  /**
   * config `ledger.replicate`: which feeds the ledger syncs (all, or bounded to what the node
   * needs); undefined: the role's default
   */
  ledgerReplicate?: 'all' | 'bounded'
  /**
   * config `ledger.retain`: what the ledger keeps of other feeds ('horizon': entries of the last
   * 224 days; 'all': everything, a seed serving the whole history); undefined: 'horizon'
   */
  ledgerRetain?: 'horizon' | 'all'
  /** config `ledger.horizon`: hops of the bounded scope (0–4); undefined: 2 */
  ledgerHorizon?: number
  /**
   * config `ledger.verifierThreads`: worker threads that verify signatures (0–16; 0 verifies on
   * the main thread); undefined: a worker per core, up to 4
   */
  ledgerVerifierThreads?: number
}

/** Fields a config file may hold (camelCase); each has a flag of the same name in kebab-case. */
const FILE_FIELDS = ['role', 'dataDir', 'listen', 'announce', 'bootstrap', 'trust', 'privateAddresses', 'maxConnections', 'targetPeers', 'heartbeatSeconds', 'heartbeatGossip', 'reachability', 'upnp', 'relay', 'provider', 'ledger'] as const

export const DEFAULT_LISTEN: Record<Role, string[]> = {
  bootstrap: ['/ip4/127.0.0.1/tcp/4001', '/ip4/127.0.0.1/tcp/4002/ws'],
  provider: ['/ip4/127.0.0.1/tcp/0'],
  renter: ['/ip4/127.0.0.1/tcp/0']
}

/** Reads and parses a YAML config file; an empty file is an empty config. */
export async function readConfigFile (path: string): Promise<Fields> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err: any) {
    if (err?.code === 'ENOENT') throw new ConfigError('ERR_CONFIG_FILE', `config file ${path} does not exist`)
    throw new ConfigError('ERR_CONFIG_FILE', `config file ${path} cannot be read (${String(err?.code ?? err)})`)
  }
  // loaded here, not with the module: the YAML parser is ~70 modules, and a node started by
  // flags alone (a test's, the bench's fresh process) reads no file
  const { parse: parseYaml } = await import('yaml')
  let doc: unknown
  try {
    // warnings (an unknown tag) are not printed to the process: the value is validated like any other
    doc = parseYaml(text, { maxAliasCount: 100, logLevel: 'error' })
  } catch (err: any) {
    const line = err?.linePos?.[0]?.line
    throw new ConfigError('ERR_CONFIG_FILE', `config file ${path} is not valid YAML${line != null ? ` (line ${String(line)})` : ''}: ${String(err?.message ?? err).split('\n')[0]}`)
  }
  if (doc == null) return {}
  return asObject(doc, '(top level)')
}

export interface ConfigSources {
  role: Role
  /** parsed config file, if any */
  file?: Fields
  /** command-line values keyed by camelCase field; undefined = not given */
  flags?: Partial<Record<typeof FILE_FIELDS[number] | 'relayServe' | 'trustLists' | 'trustOperators', unknown>>
  env?: NodeJS.ProcessEnv
  /** the default bootstrap list (bootstrap/peers.json) */
  defaultBootstrap?: string[]
}

/**
 * Resolves the node config from flags > environment > config file > defaults, validating
 * every field. Throws ConfigError naming the first bad field.
 */
export function resolveConfig (sources: ConfigSources): NodeConfig {
  const file = sources.file ?? {}
  onlyKnownKeys(file, FILE_FIELDS, '')
  const flags = sources.flags ?? {}
  const env = sources.env ?? {}
  const pick = (key: typeof FILE_FIELDS[number], envName?: string): unknown =>
    flags[key] ?? (envName != null && env[envName] != null && env[envName] !== '' ? env[envName] : undefined) ?? file[key]

  if (file.role != null && asEnum(file.role, 'role', ROLES) !== sources.role) {
    throw new ConfigError('role', `"${sources.role}" (the command being run)`, file.role)
  }
  const role = sources.role
  const dataDir = resolve(expandHome(String(asString(pick('dataDir', 'IDLEGRID_DATA_DIR') ?? defaultDataDir(), 'dataDir'))))
  const listen = multiaddrList(pick('listen') ?? DEFAULT_LISTEN[role], 'listen')
  if (listen.length === 0) throw new ConfigError('listen', 'at least one multiaddr')
  const announce = multiaddrList(pick('announce') ?? [], 'announce')
  const bootstrap = multiaddrList(pick('bootstrap', 'IDLEGRID_BOOTSTRAP') ?? sources.defaultBootstrap ?? [], 'bootstrap')
  bootstrap.forEach((addr, i) => {
    if (multiaddr(addr).getPeerId() == null) throw new ConfigError(`bootstrap[${i}]`, 'a multiaddr ending in /p2p/<peer id>', addr)
  })
  // `trust` is a list of peer ids, or { peers, lists, operators } (trust lists: protocols/README.md §7)
  const trustFile = file.trust != null && typeof file.trust === 'object' && !Array.isArray(file.trust) ? asObject(file.trust, 'trust') : undefined
  if (trustFile != null) onlyKnownKeys(trustFile, ['peers', 'lists', 'operators'], 'trust')
  const trust = peerIdList(flags.trust ?? (trustFile != null ? trustFile.peers : file.trust) ?? [], trustFile != null && flags.trust == null ? 'trust.peers' : 'trust')
  const trustLists = asStringList(flags.trustLists ?? trustFile?.lists ?? [], 'trust.lists').map(path => resolve(expandHome(path)))
  const trustOperators = peerIdList(flags.trustOperators ?? trustFile?.operators ?? [], 'trust.operators')
  const privateRaw = pick('privateAddresses')
  const privateAddresses = privateRaw == null || privateRaw === 'auto'
    ? autoPrivateAddresses(listen, bootstrap)
    : asBoolean(privateRaw, 'privateAddresses')
  const maxConnections = asNumber(pick('maxConnections') ?? 200, 'maxConnections', { integer: true, min: 2, max: 10_000 })
  const targetPeers = asNumber(pick('targetPeers') ?? Math.min(24, maxConnections), 'targetPeers', { integer: true, min: 0, max: maxConnections })
  const heartbeatMs = Math.round(1000 * asNumber(pick('heartbeatSeconds') ?? 10, 'heartbeatSeconds', { min: 0.1, max: 3600 }))
  const heartbeatGossip = asBoolean(pick('heartbeatGossip') ?? false, 'heartbeatGossip')
  const reachability = resolveReachability(pick('reachability'))
  const upnp = asBoolean(pick('upnp') ?? true, 'upnp')
  const relay = resolveRelay(file.relay, flags.relayServe, role)
  const provider = file.provider == null ? {} : asObject(file.provider, 'provider')
  const ledgerFile = file.ledger == null ? undefined : asObject(file.ledger, 'ledger')
  if (ledgerFile != null) onlyKnownKeys(ledgerFile, ['replicate', 'retain', 'horizon', 'verifierThreads'], 'ledger')
  const ledgerReplicate = ledgerFile?.replicate == null ? undefined : asEnum(ledgerFile.replicate, 'ledger.replicate', ['all', 'bounded'] as const)
  const ledgerRetain = ledgerFile?.retain == null ? undefined : asEnum(ledgerFile.retain, 'ledger.retain', ['horizon', 'all'] as const)
  const ledgerHorizon = ledgerFile?.horizon == null ? undefined : asNumber(ledgerFile.horizon, 'ledger.horizon', { integer: true, min: 0, max: 4 })
  const ledgerVerifierThreads = ledgerFile?.verifierThreads == null
    ? undefined
    : asNumber(ledgerFile.verifierThreads, 'ledger.verifierThreads', { integer: true, min: 0, max: MAX_VERIFIER_THREADS })
  return {
    ledgerReplicate,
    ledgerRetain,
    ledgerHorizon,
    ledgerVerifierThreads,
    role,
    dataDir,
    listen,
    announce,
    bootstrap,
    trust,
    trustLists,
    trustOperators,
    privateAddresses,
    maxConnections,
    targetPeers,
    heartbeatMs,
    heartbeatGossip,
    reachability,
    upnp,
    relay,
    provider
  }
}

function peerIdList (value: unknown, field: string): string[] {
  return asStringList(value, field).map((text, i, all) => {
    try {
      return peerIdFromString(text).toString()
    } catch {
      throw new ConfigError(all.length === 1 ? field : `${field}[${i}]`, 'a peer id such as 12D3KooW…', text)
    }
  })
}

function asString (value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') throw new ConfigError(field, 'a non-empty string', value)
  return value
}

export function defaultDataDir (): string {
  return resolve(homedir(), '.idlegrid')
}

function expandHome (path: string): string {
  return path === '~' || path.startsWith('~/') ? homedir() + path.slice(1) : path
}

function multiaddrList (value: unknown, field: string): string[] {
  const list = asStringList(value, field)
  return list.map((text, i) => {
    try {
      return multiaddr(text).toString()
    } catch {
      throw new ConfigError(list.length === 1 && typeof value === 'string' ? field : `${field}[${i}]`, 'a multiaddr such as /ip4/127.0.0.1/tcp/4001', text)
    }
  })
}

/** Private/loopback addresses stay in the DHT when the network we join (or are) is local. */
function autoPrivateAddresses (listen: string[], bootstrap: string[]): boolean {
  const addrs = bootstrap.length > 0 ? bootstrap : listen
  return addrs.some(a => isLocal(multiaddr(a)))
}

function isLocal (addr: Multiaddr): boolean {
  let host: string
  try {
    host = addr.nodeAddress().address
  } catch {
    return false // no host to judge (e.g. a bare /p2p/<peer id>)
  }
  return /^(127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|0\.0\.0\.0$|::1$|::$|f[cd][0-9a-f]{0,2}:|fe80:)/i.test(host) || host === 'localhost'
}
