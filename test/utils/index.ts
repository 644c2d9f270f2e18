import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveConfig, type Role } from '../../src/config/index.js'
import { createNode, type IdlegridNode, type NodeExtensions } from '../../src/node/index.js'

/** A fresh temporary directory; remove it with the returned cleanup. */
export async function tempDir (prefix = 'idlegrid-test-'): Promise<{ path: string, cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix))
  return { path, cleanup: async () => { await rm(path, { recursive: true, force: true }) } }
}

/** Polls `check` until it returns a truthy value, or throws after `timeoutMs` naming `what`. */
export async function waitFor<T> (check: () => T | Promise<T>, opts: { timeoutMs?: number, intervalMs?: number, what?: string } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000)
  let last: unknown
  while (true) {
    try {
      const value = await check()
      if (value != null && value !== false) return value as NonNullable<T>
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${opts.what ?? 'condition'}${last != null ? ` (last error: ${String(last)})` : ''}`)
    await new Promise(resolve => setTimeout(resolve, opts.intervalMs ?? 100))
  }
}

export interface InProcessNetwork {
  bootstrap: IdlegridNode
  providers: IdlegridNode[]
  renters: IdlegridNode[]
  all: IdlegridNode[]
  stop(): Promise<void>
}

export interface InProcessOptions {
  providers: number
  renters?: number
  heartbeatSeconds?: number
  /** services and DHT rules per node (the same the CLI's composition root would add) */
  extensions?: (role: Role, index: number) => NodeExtensions
  /** raw provider config section per provider index */
  providerConfig?: (index: number) => Record<string, unknown>
  /** start providers and renters this many at a time (default all at once) */
  startBatch?: number
}

/** Real libp2p nodes in this process on 127.0.0.1, each with its own temp data dir. */
export async function startInProcessNetwork (opts: InProcessOptions): Promise<InProcessNetwork> {
  const dir = await tempDir()
  const started: IdlegridNode[] = []
  const make = async (role: Role, index: number, bootstrap: string[]): Promise<IdlegridNode> => {
    const config = resolveConfig({
      role,
      file: role === 'provider' && opts.providerConfig != null ? { provider: opts.providerConfig(index) } : undefined,
      flags: { dataDir: join(dir.path, `${role}-${index}`), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap, heartbeatSeconds: opts.heartbeatSeconds ?? 1 }
    })
    const node = await createNode(config, opts.extensions?.(role, index))
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
        nodes.push(...await Promise.all(Array.from({ length: Math.min(batch, count - from) }, async (_, k) => await make(role, from + k, addr))))
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
  await waitFor(() => nodes.every(n => {
    const subs = new Set(n.libp2p.services.pubsub.getSubscribers(topic).map(p => p.toString()))
    return nodes.every(o => o === n || subs.has(o.peerId.toString()))
  }), { timeoutMs, what: `every node to see every other on ${topic}` })
}
