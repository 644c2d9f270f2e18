/**
 * The routing-table repair on real nodes on 127.0.0.1: a connected DHT server missing from the
 * routing table (as after a missed kad-dht ping) is added again; a connected DHT client (a
 * renter) is not, even once its queries have put the DHT protocol on its peer-store record,
 * and a round without anyone missing does nothing. Red team: peers that say
 * they are DHT servers and never answer a ping do not keep an honest server out of the table.
 */
import * as assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { identify } from '@libp2p/identify'
import { tcp } from '@libp2p/tcp'
import { tls } from '@libp2p/tls'
import { yamux } from '@chainsafe/libp2p-yamux'
import { createLibp2p, type Libp2p } from 'libp2p'
import { PROTOCOL } from '../../protocols/ids.js'
import { resolveConfig, type Role } from '../../src/config/config.js'
import { createNode, type IdlegridNode } from '../../src/node/create-node.js'
import { tempDir, waitFor } from '../utils/index.js'
import type { PeerId, Stream } from '@libp2p/interface'

interface Table { find(peer: PeerId): Promise<unknown>, remove(peer: PeerId): Promise<void> }
const tableOf = (node: IdlegridNode): Table =>
  (node.libp2p.services.dht as unknown as { routingTable: Table }).routingTable
const inTable = async (node: IdlegridNode, peer: IdlegridNode): Promise<boolean> =>
  (await tableOf(node).find(peer.peerId)) != null

describe('node: routing-table repair (a DHT server that missed its routing-table ping)', function () {
  this.timeout(60_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  const nodes: IdlegridNode[] = []
  const silent: Libp2p[] = []
  const held: Stream[] = []

  before(async () => { dir = await tempDir('idlegrid-routing-repair-') })
  after(async () => {
    for (const stream of held.splice(0)) stream.abort(new Error('test over'))
    await Promise.all(silent.splice(0).map(async n => { await n.stop() }))
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
    // the renter's own DHT queries make libp2p list the DHT protocol for it in the seed's peer
    // store (it adds every protocol a peer opened a stream with): that must not make it a server
    await waitFor(async () => (await seed.libp2p.peerStore.get(renter.peerId)).protocols.includes(PROTOCOL.kad), { timeoutMs: 20_000, what: 'the renter\'s DHT queries seen by the seed' })
    const repair = seed.libp2p.services.routingRepair
    assert.equal(await repair.repair(), 0, 'nobody is missing: nothing is added')
    assert.equal(await inTable(seed, renter), false, 'a renter that queried the seed is not a routing-table peer')

    // what a missed ping leaves behind: connected, a DHT server, and not in the table
    await tableOf(seed).remove(provider.peerId)
    assert.equal(await inTable(seed, provider), false)
    assert.ok(seed.libp2p.getConnections(provider.peerId).length > 0, 'still connected')

    assert.equal(await repair.repair(), 1, 'the provider is added again')
    assert.equal(await inTable(seed, provider), true)
    assert.equal(await inTable(seed, renter), false, 'a renter (DHT client) is not a routing-table peer')
    assert.equal(repair.readded, 1)
  })

  /**
   * A peer that claims the DHT protocol and libp2p ping (identify lists both) and answers
   * neither: every stream it is opened is held open in silence, so each ping waits out its timeout.
   */
  async function startSilentDhtServer (): Promise<Libp2p> {
    const node = await createLibp2p({
      addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
      transports: [tcp()],
      connectionEncrypters: [tls()],
      streamMuxers: [yamux()],
      services: { identify: identify() }
    })
    for (const protocol of [PROTOCOL.kad, '/ipfs/ping/1.0.0']) await node.handle(protocol, ({ stream }) => { held.push(stream) })
    silent.push(node)
    return node
  }

  // A lookup for a renter's own id may name renters: kad-dht answers a lookup for a peer id
  // with that peer when it knows it (peer routing), and its final closest set can then hold
  // another renter too (seen while writing this spec). idlegrid's own code looks up no
  // renter's id: the connector's walk is for the node's own.
  it('a renter (DHT client) is in no routing table and named by no lookup for another key, so a provider\'s walk never leads it to renters', async () => {
    const seed = await start('bootstrap')
    const providers = [await start('provider', seed), await start('provider', seed), await start('provider', seed)]
    const renters = [await start('renter', seed), await start('renter', seed)]
    for (const provider of providers) await waitFor(async () => await inTable(seed, provider), { timeoutMs: 20_000, what: 'every provider in the seed\'s routing table' })
    for (const renter of renters) await waitFor(() => seed.libp2p.getConnections(renter.peerId).length > 0, { timeoutMs: 20_000, what: 'every renter connected to the seed' })
    const renterIds = new Set(renters.map(r => r.peerId.toString()))
    const lookup = async (asker: IdlegridNode, key: Uint8Array): Promise<string[]> => {
      const dht = asker.libp2p.services.dht as unknown as {
        getClosestPeers(
          key: Uint8Array,
          options: { signal: AbortSignal }
        ): AsyncIterable<{ name: string, peer?: { id: PeerId }, closer?: Array<{ id: PeerId }> }>
      }
      const named: string[] = []
      for await (const event of dht.getClosestPeers(key, { signal: AbortSignal.timeout(10_000) })) {
        if (event.name === 'FINAL_PEER' && event.peer != null) named.push(event.peer.id.toString())
        for (const peer of event.closer ?? []) named.push(peer.id.toString())
      }
      assert.ok(named.length > 0, 'the lookup named nobody: it proves nothing')
      return named
    }
    for (const asker of [seed, ...providers]) {
      for (const renter of renters) assert.equal(await tableOf(asker).find(renter.peerId), undefined, 'a renter is in a routing table')
      // the walks the connector makes (its own id) and any other key: no renter
      for (const key of [
        asker.peerId.toMultihash().bytes,
        ...providers.map(p => p.peerId.toMultihash().bytes),
        randomBytes(32),
        randomBytes(32)
      ]) {
        assert.deepEqual((await lookup(asker, key)).filter(id => renterIds.has(id)), [], 'a lookup named a renter')
      }
    }
  })

  it('red team: twelve silent "DHT servers" connected first do not keep an honest one out; failed peers sit out later rounds', async () => {
    const seed = await start('bootstrap')
    const repair = seed.libp2p.services.routingRepair
    // the silent peers connect first, so they come first in the seed's connections
    for (let i = 0; i < 12; i++) {
      const attacker = await startSilentDhtServer()
      await attacker.dial(seed.libp2p.getMultiaddrs()[0])
    }
    const provider = await start('provider', seed)
    await waitFor(async () => await inTable(seed, provider), { timeoutMs: 20_000, what: 'the provider in the seed\'s routing table' })
    await tableOf(seed).remove(provider.peerId)

    // eight a round: the first round can only hold silent peers; it lasts one add's bound
    // (10 s), not one per peer, and every peer it tried sits the next rounds out
    const rounds: Array<{ added: number, ms: number }> = []
    for (let round = 0; round < 3 && !await inTable(seed, provider); round++) {
      const t0 = Date.now()
      rounds.push({ added: await repair.repair(), ms: Date.now() - t0 })
    }
    assert.equal(await inTable(seed, provider), true, `the honest provider is back in the table (rounds: ${JSON.stringify(rounds)})`)
    assert.ok(rounds.length <= 2, `back within two rounds: ${JSON.stringify(rounds)}`)
    assert.equal(rounds.at(-1)?.added, 1, 'the last round added the provider')
    for (const { ms } of rounds) assert.ok(ms < 15_000, `a round runs its adds side by side: ${JSON.stringify(rounds)}`)
    for (const attacker of silent) assert.equal(await tableOf(seed).find(attacker.peerId), undefined, 'no silent peer is in the table')
    assert.equal(repair.backedOff(), silent.length, 'every silent peer tried sits out the next rounds')

    // a round now asks for nobody: the silent peers wait out their backoff
    const t0 = Date.now()
    assert.equal(await repair.repair(), 0)
    assert.ok(Date.now() - t0 < 2_000, 'a round with everyone backed off is quick')
  })
})
