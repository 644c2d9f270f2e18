/**
 * Networks for specs on 127.0.0.1. The process variant (separate `idlegrid` processes) is
 * the demo's, src/demo/local-network.ts; the in-process variant here runs real libp2p nodes in
 * this process with the same shape (NetworkNodes) and options (NetworkShape).
 */
import { join } from 'node:path'
import { resolveConfig, type NodeConfig, type Role } from '../../src/config/config.js'
import { createNode, type IdlegridNode, type NodeComposition } from '../../src/node/create-node.js'
import { GOSSIP_RATE_LIMITS, type RateLimit, type TopicClass } from '../../src/node/index.js'
import type { NetworkNodes, NetworkShape } from '../../src/demo/local-network.js'
import { tempDir, waitFor } from './wait.js'

export { BIN_PATH, DEFAULT_PROVIDER_ARGS, spawnNode, startLocalNetwork, inspectMesh, waitForMesh } from '../../src/demo/local-network.js'
export type { LocalNetwork, LocalNetworkOptions, NodeProcess, SpawnOptions, MeshNode, MeshView, MeshCriteria, LinkFilter, NetworkNodes, NetworkShape } from '../../src/demo/local-network.js'

/**
 * For specs that measure a defence behind the per-author gossip rate limit (the ledger's quotas,
 * the auction's bid bounds): every topic class unlimited, so their floods reach that defence.
 */
export const UNLIMITED_GOSSIP_RATES = Object.fromEntries(
  Object.keys(GOSSIP_RATE_LIMITS).map(c => [c, { perSecond: 1e9, burst: 1e9 }])
) as Record<TopicClass, RateLimit>

export interface InProcessNetwork extends NetworkNodes<IdlegridNode> {
  /** stops every node and removes their data directories */
  stop(): Promise<void>
}

export interface InProcessOptions extends NetworkShape {
  /** services and DHT rules per node (the same the CLI's composition root would add) */
  extensions?: (role: Role, index: number, config: NodeConfig) => NodeComposition
  /** raw provider config section per provider index */
  providerConfig?: (index: number) => Record<string, unknown>
  /** start providers and renters this many at a time (default all at once) */
  startBatch?: number
  /** every node also joins the legacy heartbeat topic (--heartbeat-gossip; default off) */
  heartbeatGossip?: boolean
}

/** Real libp2p nodes in this process on 127.0.0.1, each with its own temp data dir. */
export async function startInProcessNetwork (opts: InProcessOptions): Promise<InProcessNetwork> {
  const dir = await tempDir()
  const started: IdlegridNode[] = []
  const make = async (role: Role, index: number, bootstrap: string[]): Promise<IdlegridNode> => {
    const config = resolveConfig({
      role,
      file: role === 'provider' && opts.providerConfig != null ? { provider: opts.providerConfig(index) } : undefined,
      flags: { dataDir: join(dir.path, `${role}-${index}`), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap, heartbeatSeconds: opts.heartbeatSeconds ?? 1, heartbeatGossip: opts.heartbeatGossip }
    })
    const node = await createNode(config, opts.extensions?.(role, index, config))
    started.push(node)
    return node
  }
  try {
    const bootstrap = await make('bootstrap', 0, [])
    const addr = [bootstrap.libp2p.getMultiaddrs()[0].toString()]
    const batch = opts.startBatch ?? Number.MAX_SAFE_INTEGER
    const startAll = async (role: Role, count: number): Promise<IdlegridNode[]> => {
      const nodes: IdlegridNode[] = []
      for (let from = 0; from < count; from += batch) {
        nodes.push(
          ...(await Promise.all(
            Array.from({ length: Math.min(batch, count - from) }, async (_, k) => await make(role, from + k, addr))
          ))
        )
      }
      return nodes
    }
    const providers = await startAll('provider', opts.providers)
    const renters = await startAll('renter', opts.renters ?? 1)
    const all = [bootstrap, ...providers, ...renters]
    return {
      bootstrap,
      providers,
      renters,
      all,
      stop: async () => {
        await Promise.all(all.map(async n => { await n.stop() }))
        await dir.cleanup()
      }
    }
  } catch (err) {
    await Promise.all(started.map(async n => { await n.stop() }))
    await dir.cleanup()
    throw err
  }
}

/** Resolves once every node has every other node as a gossip peer on `topic`. */
export async function waitForTopicMesh (nodes: IdlegridNode[], topic: string, timeoutMs = 20_000): Promise<void> {
  const missing = (): string[] => nodes.flatMap((n, i) => {
    const subs = new Set(n.libp2p.services.pubsub.getSubscribers(topic).map(p => p.toString()))
    return nodes.flatMap((o, j) => o === n || subs.has(o.peerId.toString()) ? [] : [`${i}→${j}`])
  })
  try {
    await waitFor(() => missing().length === 0, { timeoutMs, what: `every node to see every other on ${topic}` })
  } catch (err) {
    // say which links were missing and how far each got, so that a failure in CI can be told apart
    const state = missing().map(link => {
      const [i, j] = link.split('→').map(Number)
      const peer = nodes[j].peerId
      const connections = nodes[i].libp2p.getConnections(peer).length
      const gossipPeer = nodes[i].libp2p.services.pubsub.getPeers().some(p => p.equals(peer))
      return `node ${link}: ${connections} connection(s), ${gossipPeer ? '' : 'not '}a gossip peer`
    })
    const connectors = nodes.map((n, i) => `node ${i}: ${JSON.stringify(n.libp2p.services.connector.status())}`)
    throw new Error(`${(err as Error).message}; missing: ${state.join('; ')}; connectors: ${connectors.join('; ')}`, { cause: err })
  }
}
