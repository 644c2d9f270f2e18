/**
 * The attacker's own libp2p nodes: real idlegrid renter nodes built by the CLI's composition
 * root (so they gossip, validate and answer like anyone's), each with its own key and data
 * directory, joined to a network through its bootstrap address.
 */
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { JOB_SHARD_TOPICS } from '../../protocols/ids.js'
import { buildNode } from '../../src/compose/index.js'
import { resolveConfig } from '../../src/config/index.js'
import { waitFor } from '../utils/wait.js'
import type { IdlegridNode } from '../../src/node/index.js'

/** Starts a renter-role node in `dataDir` that knows the network through `bootstrap`. */
export async function startAttackerNode (dataDir: string, bootstrap: string): Promise<IdlegridNode> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  const config = resolveConfig({ role: 'renter', flags: { dataDir, listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [bootstrap], heartbeatSeconds: 1 } })
  // the legacy ledger topic open, like the honest processes of the ledger red team: what its
  // own store would refuse can only travel there (sync serves what a store holds)
  return await buildNode(config, { ledger: { gossip: true } }) as unknown as IdlegridNode
}

/**
 * Joins every job shard and resolves once `node` has a gossip mesh on each (what it publishes
 * reaches someone, and it hears every job).
 */
export async function waitForMarketTopics (node: IdlegridNode, timeoutMs = 30_000): Promise<void> {
  const pubsub = node.libp2p.services.pubsub as unknown as {
    getMeshPeers: (topic: string) => unknown[]
    subscribe: (topic: string) => void
  }
  for (const t of JOB_SHARD_TOPICS) pubsub.subscribe(t)
  await waitFor(() => JOB_SHARD_TOPICS.every(t => pubsub.getMeshPeers(t).length > 0),
    { timeoutMs, intervalMs: 100, what: 'the attacker to join the market topics' })
}

/** The data directory of the attacker's node number `i` under `base`. */
export function nodeDir (base: string, i: number): string {
  return join(base, `attacker-${i}`)
}
