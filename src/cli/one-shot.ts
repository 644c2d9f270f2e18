import { multiaddr } from '@multiformats/multiaddr'
import { sleep, TimeoutError, waitUntil } from '../common/index.js'
import { callControl, ControlError, ControlUnavailableError } from '../control/index.js'
import { readConfigFile, resolveConfig, asEnum, ROLES, type NodeConfig } from '../config/index.js'
import { LEDGER_SERVICE } from '../ledger/index.js'
import { buildNode } from './build-node.js'
import type { IdlegridNode } from '../node/index.js'
import { defaultBootstrapPeers } from './load-config.js'
import { nodeHandlers } from './node-control.js'
import { nodeFlags, type ParsedValues } from './options.js'

export interface OneShotResult {
  /** 'running' when a node on the data directory answered, 'short-lived' when we started one */
  via: 'running' | 'short-lived'
  result: unknown
  /** a short-lived peer whose new ledger entries no other node confirmed holding says so here */
  ledgerNote?: string
}

/** How long a short-lived peer waits for another node to hold its new ledger entries. */
const LEDGER_FLUSH_MS = 10_000

export interface OneShotOptions {
  /** how long a short-lived peer waits to reach its bootstrap peers before answering */
  settleMs?: number
  /** progress events the method sends before its result */
  onEvent?: (event: unknown) => void
  /** bound on the whole call (default 60 s) */
  timeoutMs?: number
  /** a short-lived peer waits (bounded) for another node to hold the ledger entries it wrote */
  flushLedger?: boolean
}

/**
 * Runs control `method` on the node running on the data directory, or, when none runs,
 * on a short-lived peer started for the call and stopped after it.
 */
export async function oneShot (method: string, params: Record<string, unknown>, values: ParsedValues, opts: OneShotOptions = {}): Promise<OneShotResult> {
  const config = await oneShotConfig(values)
  try {
    return { via: 'running', result: await callControl(config.dataDir, method, params, { onEvent: opts.onEvent, timeoutMs: opts.timeoutMs ?? 60_000 }) }
  } catch (err) {
    if (!(err instanceof ControlUnavailableError)) throw err
  }
  const node = await buildNode(config)
  try {
    if ((opts.settleMs ?? 0) > 0) await settle(node, opts.settleMs ?? 0)
    const handler = nodeHandlers(node)[method]
    if (handler == null) throw new ControlError('ERR_UNKNOWN_METHOD', `a ${config.role} node does not offer "${method}"`)
    const result = await handler(params, opts.onEvent ?? (() => {}), AbortSignal.timeout(opts.timeoutMs ?? 60_000))
    // what this peer signed (receipts, …) must reach another node before it exits, or the user is told
    const flushed = opts.flushLedger === true ? await node.libp2p.services[LEDGER_SERVICE].flush({ timeoutMs: LEDGER_FLUSH_MS }).catch(() => undefined) : undefined
    return { via: 'short-lived', result, ledgerNote: flushed != null && !flushed.acknowledged ? flushed.note : undefined }
  } finally {
    await node.stop()
  }
}

/** A one-shot command acts as the role its config file names, else as a light renter. */
async function oneShotConfig (values: ParsedValues): Promise<NodeConfig> {
  const file = typeof values.config === 'string' ? await readConfigFile(values.config) : undefined
  const role = file?.role != null ? asEnum(file.role, 'role', ROLES) : 'renter'
  return resolveConfig({ role, file, flags: nodeFlags(values), env: process.env, defaultBootstrap: await defaultBootstrapPeers() })
}

/** Waits (bounded) until the node is connected to its bootstrap peers and has exchanged subscriptions. */
async function settle (node: IdlegridNode, maxMs: number): Promise<void> {
  const deadline = Date.now() + maxMs
  const wanted = node.config.bootstrap.map(a => multiaddr(a).getPeerId()).filter((p): p is string => p != null)
  await waitUntil(() => {
    const connected = new Set(node.libp2p.getConnections().map(c => c.remotePeer.toString()))
    return wanted.every(p => connected.has(p)) && (wanted.length === 0 || node.libp2p.services.pubsub.getPeers().length > 0)
  }, { timeoutMs: maxMs, what: 'the bootstrap peers' }).catch((err: unknown) => {
    // a peer that cannot reach its bootstrap peers still answers (what it can, alone)
    if (!(err instanceof TimeoutError)) throw err
  })
  // one gossipsub heartbeat for subscriptions and a first DHT refresh
  await sleep(Math.min(1_000, Math.max(0, deadline - Date.now())))
}
