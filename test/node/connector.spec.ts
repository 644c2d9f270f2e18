/**
 * The connector (src/node/connector.ts) between real libp2p nodes on 127.0.0.1: it dials its
 * bootstrap list as soon as the node has started, not at its first lookup tick nor after
 * @libp2p/bootstrap's delay, and a seed that is down at start costs nothing but a logged dial.
 * The nodes here have no peer discovery at all, so only the connector can make the link.
 */
import * as assert from 'node:assert/strict'
import { yamux } from '@chainsafe/libp2p-yamux'
import { tcp } from '@libp2p/tcp'
import { tls } from '@libp2p/tls'
import { createLibp2p, type Libp2p } from 'libp2p'
import { peerConnector } from '../../src/node/connector.js'
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
})
