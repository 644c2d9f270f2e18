/**
 * The connector (src/node/connectivity/connector.ts) between real libp2p nodes on 127.0.0.1: it dials its
 * bootstrap list as soon as the node has started, not at its first lookup tick nor after
 * @libp2p/bootstrap's delay, and a seed that is down at start costs nothing but a logged dial.
 * The nodes here have no peer discovery at all, so only the connector can make the link.
 * And with a DHT: a peer whose first dials fail (a stalled event loop, a busy peer) keeps the
 * lookups at their base rate until it has failed a few times in a row; only then do they back off.
 */
import * as assert from 'node:assert/strict'
import { yamux } from '@chainsafe/libp2p-yamux'
import { identify } from '@libp2p/identify'
import { kadDHT, passthroughMapper } from '@libp2p/kad-dht'
import { ping } from '@libp2p/ping'
import { tcp } from '@libp2p/tcp'
import { tls } from '@libp2p/tls'
import { createLibp2p, type Libp2p } from 'libp2p'
import { peerConnector, type PeerConnectorService } from '../../src/node/connectivity/connector.js'
import { waitFor } from '../utils/index.js'

/** Far beyond the waits below: a link made within them was not made by a lookup tick. */
const LOOKUP_INTERVAL_MS = 600_000

async function seed (): Promise<Libp2p> {
  return await createLibp2p({
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    connectionEncrypters: [tls()],
    streamMuxers: [yamux()]
  })
}

async function joiner (bootstrap: string[]): Promise<Libp2p> {
  return await createLibp2p({
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    connectionEncrypters: [tls()],
    streamMuxers: [yamux()],
    services: { connector: peerConnector({ targetPeers: 4, bootstrap, lookupIntervalMs: LOOKUP_INTERVAL_MS }) }
  })
}

/** A DHT node; `gate.closed` refuses every inbound connection (and counts them). */
async function dhtNode (
  opts: {
    client?: boolean
    gate?: { closed: boolean, refused: number }
    connector?: Parameters<typeof peerConnector>[0]
  } = {}
): Promise<Libp2p<any>> {
  const gate = opts.gate
  return await createLibp2p({
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    connectionEncrypters: [tls()],
    streamMuxers: [yamux()],
    connectionGater: {
      denyDialMultiaddr: () => false,
      denyInboundConnection: () => { if (gate?.closed !== true) return false; gate.refused++; return true }
    },
    services: {
      identify: identify(),
      ping: ping(),
      dht: kadDHT({ clientMode: opts.client === true, peerInfoMapper: passthroughMapper }),
      ...(opts.connector == null ? {} : { connector: peerConnector(opts.connector) })
    }
  })
}

describe('peer connector', function () {
  this.timeout(30_000)
  const started: Libp2p[] = []
  afterEach(async () => { await Promise.all(started.splice(0).map(async n => { await n.stop() })) })

  it('dials its bootstrap list when the node starts, with no discovery and no lookup tick', async () => {
    const s = await seed()
    started.push(s)
    const addr = s.getMultiaddrs()[0].toString()
    const n = await joiner([addr])
    started.push(n)
    await waitFor(() => n.getConnections(s.peerId).length > 0, { timeoutMs: 10_000, what: 'a connection to the seed' })
    assert.equal(n.getConnections()[0]?.remotePeer.toString(), s.peerId.toString())
  })

  it('starts beside a seed that is down, and connects to one that is up', async () => {
    const down = await seed()
    const downAddr = down.getMultiaddrs()[0].toString()
    await down.stop()
    const up = await seed()
    started.push(up)
    const n = await joiner([downAddr, up.getMultiaddrs()[0].toString()])
    started.push(n)
    await waitFor(() => n.getConnections(up.peerId).length > 0, { timeoutMs: 10_000, what: 'a connection to the seed that is up' })
    assert.equal(n.getConnections(down.peerId).length, 0)
  })

  it('a peer whose first dials fail keeps the lookups at their base rate; one that keeps failing lets them back off', async () => {
    const seed = await dhtNode()
    const gate = { closed: true, refused: 0 }
    const provider = await dhtNode({ gate })
    started.push(seed, provider)
    // the provider joins the seed's routing table
    await provider.dial(seed.getMultiaddrs()[0])
    await waitFor(async () => await seed.services.dht.routingTable.find(provider.peerId) != null, { timeoutMs: 20_000, what: 'the provider in the seed\'s routing table' })

    const baseMs = 300
    const renter = await dhtNode({
      client: true,
      connector: {
        targetPeers: 4,
        bootstrap: [seed.getMultiaddrs()[0].toString()],
        lookupIntervalMs: baseMs,
        maxLookupIntervalMs: 60_000
      }
    })
    started.push(renter)
    const connector = renter.services.connector as PeerConnectorService
    // every lookup names the provider, and every dial to it is refused (the DHT walk's own dials
    // too): the waits the connector chose after each lookup, until it has given up on the
    // provider (three of its dials failed in a row) and backed off
    const waits: Array<{ lookups: number, waitMs: number, givenUp: number }> = []
    await waitFor(() => {
      const s = connector.status()
      if (s.lookups > (waits.at(-1)?.lookups ?? 0)) {
        waits.push({ lookups: s.lookups, waitMs: s.lookupWaitMs, givenUp: s.givenUp })
      }
      return s.givenUp === 1 && waits.some(w => w.waitMs > baseMs)
    }, { timeoutMs: 30_000, intervalMs: 10, what: 'the connector to give up on the refusing provider and back off' })
    assert.ok(gate.refused >= 3, `three dials refused (${gate.refused})`)
    assert.equal(renter.getConnections(provider.peerId).length, 0)
    // a lookup seen before the connector gave up was judged before it gave up too
    const early = waits.filter(w => w.givenUp === 0)
    assert.ok(early.length > 0, `a lookup ran while the provider had failed fewer than three times (${JSON.stringify(waits)})`)
    assert.ok(early.every(w => w.waitMs === baseMs), `no backoff while the provider had failed fewer than three times: ${JSON.stringify(waits)}`)

    // the provider can be reached again: a later lookup names it and the dial goes through
    gate.closed = false
    await waitFor(() => renter.getConnections(provider.peerId).length > 0, { timeoutMs: 30_000, what: 'the renter connected to the provider' })
    await waitFor(() => connector.status().failing === 0, { timeoutMs: 5_000, what: 'the provider no longer counted as failing' })
  })
})
