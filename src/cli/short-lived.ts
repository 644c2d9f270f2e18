/**
 * A short-lived peer for a one-shot command when no node runs on the data directory: started
 * for the call, it answers the control method itself and stops. Kept apart from one-shot.ts so
 * that a command a running node answers never loads the node's stack.
 */
import { multiaddr } from '@multiformats/multiaddr'
import { sleep, TimeoutError, waitUntil } from '../common/index.js'
import { ControlError } from '../control/index.js'
import { buildNode } from '../compose/index.js'
import { nodeHandlers } from './node-control.js'
import type { NodeConfig } from '../config/index.js'
import type { IdlegridNode } from '../node/index.js'
import type { OneShotOptions, OneShotResult } from './one-shot.js'

export async function runShortLived (
  config: NodeConfig,
  method: string,
  params: Record<string, unknown>,
  opts: OneShotOptions
): Promise<OneShotResult> {
  const node = await buildNode(config)
  try {
    if ((opts.settleMs ?? 0) > 0) await settle(node, opts.settleMs ?? 0)
    const handler = nodeHandlers(node)[method]
    if (handler == null) throw new ControlError('ERR_UNKNOWN_METHOD', `a ${config.role} node does not offer "${method}"`)
    // a method whose entries must leave this peer before it stops waits for that itself (submit.job: its receipts)
    const result = await handler(params, opts.onEvent ?? (() => {}), AbortSignal.timeout(opts.timeoutMs ?? 60_000))
    return { via: 'short-lived', result }
  } finally {
    await node.stop()
  }
}

/** Waits (bounded) until the node is connected to its bootstrap peers and has exchanged subscriptions. */
async function settle (node: IdlegridNode, maxMs: number): Promise<void> {
  const deadline = Date.now() + maxMs
  const wanted = node.config.bootstrap.map(a => multiaddr(a).getPeerId()).filter((p): p is string => p != null)
  await waitUntil(() => {
    const connected = new Set(node.libp2p.getConnections().map(c => c.remotePeer.toString()))
    return (
      wanted.every(p => connected.has(p)) &&
      (wanted.length === 0 || node.libp2p.services.pubsub.getPeers().length > 0)
    )
  }, { timeoutMs: maxMs, what: 'the bootstrap peers' }).catch((err: unknown) => {
    // a peer that cannot reach its bootstrap peers still answers (what it can, alone)
    if (!(err instanceof TimeoutError)) throw err
  })
  // one gossipsub heartbeat for subscriptions and a first DHT refresh
  await sleep(Math.min(1_000, Math.max(0, deadline - Date.now())))
}
