/**
 * Nodes on 127.0.0.1 built as the CLI builds them, for the relay and direct-path specs: mocha
 * hooks give each suite a temporary directory and stop every node after each test.
 */
import { join } from 'node:path'
import { loadProviderSetup } from '../../src/capability/index.js'
import { buildNode } from '../../src/compose/index.js'
import { resolveConfig, type Role } from '../../src/config/index.js'
import { tempDir } from '../utils/index.js'
import type { IdlegridNode } from '../../src/node/index.js'
import type { Multiaddr } from '@multiformats/multiaddr'

export const relayedAddress = (node: IdlegridNode): Multiaddr | undefined => node.libp2p.getMultiaddrs().find(a => a.toString().includes('/p2p-circuit'))

export type StartNode = (
  role: Role,
  flags?: Record<string, unknown>,
  file?: Record<string, unknown>
) => Promise<IdlegridNode>

/**
 * Registers the hooks; `start` builds a node (a provider with a simulated H100) and `nodes` lists
 * this test's, oldest first.
 */
export function useLoopbackNodes (prefix: string): { start: StartNode, nodes: IdlegridNode[] } {
  let dir: { path: string, cleanup: () => Promise<void> } | undefined
  const nodes: IdlegridNode[] = []
  before(async () => { dir = await tempDir(prefix) })
  afterEach(async () => { await Promise.all(nodes.splice(0).map(async n => { await n.stop() })) })
  after(async () => { await dir?.cleanup() })
  let made = 0
  const start: StartNode = async (role, flags = {}, file = {}) => {
    const config = resolveConfig({ role, file, flags: { dataDir: join((dir as { path: string }).path, `${role}-${made++}`), listen: ['/ip4/127.0.0.1/tcp/0'], heartbeatSeconds: 1, ...flags } })
    // as the CLI builds it: a provider serves its capability record and the job protocol
    const provider = role === 'provider' ? { provider: { profile: (await loadProviderSetup({ raw: {}, flags: { region: 'eu-west', 'price-floor': '1.00' }, simulateGpu: ['H100:80'] })).profile, runner: 'process' as const } } : {}
    const node = await buildNode(config, provider)
    nodes.push(node)
    return node
  }
  return { start, nodes }
}
