/**
 * The routing-table repair on real nodes on 127.0.0.1: a connected DHT server missing from the
 * routing table (as after a missed kad-dht ping) is added again; a connected DHT client (a
 * renter) is not, and a round without anyone missing does nothing.
 */
import * as assert from 'node:assert/strict'
import { join } from 'node:path'
import { resolveConfig, type Role } from '../../src/config/config.js'
import { createNode, type IdlegridNode } from '../../src/node/create-node.js'
import { tempDir, waitFor } from '../utils/index.js'
import type { PeerId } from '@libp2p/interface'

interface Table { find(peer: PeerId): Promise<unknown>, remove(peer: PeerId): Promise<void> }
const tableOf = (node: IdlegridNode): Table => (node.libp2p.services.dht as unknown as { routingTable: Table }).routingTable
const inTable = async (node: IdlegridNode, peer: IdlegridNode): Promise<boolean> => await tableOf(node).find(peer.peerId) != null

describe('node: routing-table repair (a DHT server that missed its routing-table ping)', function () {
  this.timeout(60_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  const nodes: IdlegridNode[] = []

  before(async () => { dir = await tempDir('idlegrid-routing-repair-') })
  after(async () => {
    await Promise.all(nodes.splice(0).map(async n => { await n.stop() }))
    await dir.cleanup()
  })

  async function start (role: Role, bootstrap?: IdlegridNode): Promise<IdlegridNode> {
    const config = resolveConfig({
      role,
      flags: { dataDir: join(dir.path, `${role}-${nodes.length}`), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: bootstrap == null ? [] : [bootstrap.libp2p.getMultiaddrs()[0]?.toString() as string], heartbeatSeconds: 1 }
    })
    const node = await createNode(config)
    nodes.push(node)
    return node
  }

  it('adds a connected DHT server back after it dropped out of the table, and leaves DHT clients out', async () => {
    const seed = await start('bootstrap')
    const provider = await start('provider', seed)
    const renter = await start('renter', seed)
    await waitFor(async () => await inTable(seed, provider), { timeoutMs: 20_000, what: 'the provider in the seed\'s routing table' })
    await waitFor(() => seed.libp2p.getConnections(renter.peerId).length > 0, { timeoutMs: 20_000, what: 'the renter connected to the seed' })
    const repair = seed.libp2p.services.routingRepair
    assert.equal(await repair.repair(), 0, 'nobody is missing: nothing is added')

    // what a missed ping leaves behind: connected, a DHT server, and not in the table
    await tableOf(seed).remove(provider.peerId)
    assert.equal(await inTable(seed, provider), false)
    assert.ok(seed.libp2p.getConnections(provider.peerId).length > 0, 'still connected')

    assert.equal(await repair.repair(), 1, 'the provider is added again')
    assert.equal(await inTable(seed, provider), true)
    assert.equal(await inTable(seed, renter), false, 'a renter (DHT client) is not a routing-table peer')
    assert.equal(repair.readded, 1)
  })
})
