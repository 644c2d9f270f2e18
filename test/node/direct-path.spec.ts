/**
 * The direct path between peers a relay joined (src/node/connectivity/direct-path.ts, issue 37 item 4), with
 * real nodes on 127.0.0.1 and the bootstrap's circuit relay: the rule both sides apply, a
 * connection reversal (the peer behind the relay dials the one that listens), no path where
 * neither side has a usable address (the job stream then refuses the limited circuit and says
 * why), and the responder's refusals of what a hostile peer sends. The hole punch itself
 * needs two NAT routers: test/lab/nat-market.spec.ts.
 */
import * as assert from 'node:assert/strict'
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import { lpStream } from 'it-length-prefixed-stream'
import { PROTOCOL } from '../../protocols/ids.js'
import { Punch } from '../../protocols/punch.js'
import { planDirectPath, type DirectOffer } from '../../src/node/connectivity/direct-path.js'
import { waitFor } from '../utils/index.js'
import { relayedAddress, useLoopbackNodes } from './relay-nodes.js'
import type { IdlegridNode } from '../../src/node/index.js'
import type { Connection, Stream } from '@libp2p/interface'

const offer = (listen: string[], punch: string[]): DirectOffer => ({
  listen: listen.map(a => multiaddr(a)),
  punch: punch.map(a => multiaddr(a))
})
const PUBLIC = '/ip4/11.0.0.5/tcp/4001'
const SEEN = '/ip4/11.0.0.9/tcp/40123'

describe('node: the direct path rule', () => {
  it('dial the listener; else reverse; else punch when both were seen; else none', () => {
    assert.equal(planDirectPath(offer([], [SEEN]), offer([PUBLIC], [])), 'dial-responder')
    assert.equal(planDirectPath(offer([PUBLIC], []), offer([], [SEEN])), 'responder-dials')
    assert.equal(planDirectPath(offer([PUBLIC], [SEEN]), offer([PUBLIC], [SEEN])), 'dial-responder', 'a listening responder is dialed, whoever else listens')
    assert.equal(planDirectPath(offer([], [SEEN]), offer([], [SEEN])), 'punch')
    assert.equal(planDirectPath(offer([], []), offer([], [SEEN])), 'none')
    assert.equal(planDirectPath(offer([], [SEEN]), offer([], [])), 'none')
  })
})

describe('node: direct paths through a relay on loopback', function () {
  this.timeout(60_000)
  const { start, nodes } = useLoopbackNodes('idlegrid-direct-path-')

  /**
   * A bootstrap relay, a provider behind it (no TCP listener), and a renter joined to the provider
   * through the relay only.
   */
  async function relayedPair (
    renterFlags: Record<string, unknown>,
    file: Record<string, unknown> = {}
  ): Promise<{ provider: IdlegridNode, renter: IdlegridNode, relayed: Connection }> {
    const seed = await start('bootstrap', {}, file)
    const bootstrap = [seed.libp2p.getMultiaddrs()[0].toString()]
    const provider = await start('provider', { bootstrap, reachability: 'private', listen: ['/p2p-circuit'] }, file)
    const renter = await start('renter', { bootstrap, ...renterFlags }, file)
    const via = await waitFor(() => relayedAddress(provider), { timeoutMs: 20_000, what: 'the provider\'s relayed address' })
    const relayed = await renter.libp2p.dial(via, { signal: AbortSignal.timeout(15_000) })
    assert.ok(relayed.limits != null, 'joined through the relay\'s limited circuit')
    return { provider, renter, relayed }
  }

  it('connection reversal: the renter listens, the provider behind the relay dials it; the job stream opens on that direct connection', async () => {
    const { provider, renter } = await relayedPair({ reachability: 'public' })
    const direct = await renter.libp2p.services.directPath.connect(provider.peerId, {
      signal: AbortSignal.timeout(15_000)
    })
    assert.equal(direct.remotePeer.toString(), provider.peerId.toString())
    assert.equal(direct.limits, undefined, 'a direct connection has no relay limits')
    assert.ok(!direct.remoteAddr.toString().includes('/p2p-circuit'), direct.remoteAddr.toString())
    assert.equal(direct.encryption, '/tls/1.0.0')
    const stream = await renter.libp2p.services.directPath.dialProtocol(provider.peerId, PROTOCOL.job, {
      signal: AbortSignal.timeout(10_000)
    })
    assert.equal(stream.protocol, PROTOCOL.job)
    stream.abort(new Error('test over'))
    assert.deepEqual(renter.libp2p.services.directPath.status().asked, { direct: 1, failed: 0 })
    assert.equal(provider.libp2p.services.directPath.status().served.direct, 1)
  })

  it('no path where neither side has a public address: the job stream refuses the limited circuit and says why', async () => {
    // loopback addresses count as private here, as they do on a real network
    const { provider, renter } = await relayedPair({ reachability: 'private', listen: ['/p2p-circuit'] }, { privateAddresses: false })
    await assert.rejects(
      renter.libp2p.services.directPath.connect(provider.peerId, { signal: AbortSignal.timeout(15_000) }),
      (err: Error & { reason?: string, code?: string }) =>
        err.name === 'NodeError' &&
        err.code === 'ERR_DIRECT_PATH' &&
        err.reason === 'no-path' &&
        /neither side listens publicly/.test(err.message)
    )
    await assert.rejects(
      renter.libp2p.services.directPath.dialProtocol(provider.peerId, PROTOCOL.job, {
        signal: AbortSignal.timeout(15_000)
      }),
      (err: Error) =>
        err.name === 'LimitedConnectionError' && /no direct path/.test(err.message) && /limited/.test(err.message)
    )
  })

  describe('red team: what a peer sends on the punch protocol', () => {
    async function send (relayed: Connection, frames: Uint8Array[]): Promise<string> {
      let stream: Stream | undefined
      try {
        // a refusal can reset the stream before the protocol's acceptance reaches us
        stream = await relayed.newStream(PROTOCOL.punch, {
          signal: AbortSignal.timeout(10_000),
          runOnLimitedConnection: true
        })
        const lp = lpStream(stream)
        for (const frame of frames) await lp.write(frame, { signal: AbortSignal.timeout(5_000) })
        const answer = await lp.read({ signal: AbortSignal.timeout(5_000) })
        return Punch.decode(answer).type
      } catch (err: any) {
        return `error: ${String(err?.message ?? err)}`
      } finally {
        stream?.abort(new Error('done'))
      }
    }
    const connect = (listen: string[], punch: string[] = []): Uint8Array =>
      Punch.encode({
        type: Punch.Type.CONNECT,
        listenAddrs: listen.map(a => multiaddr(a).bytes),
        punchAddrs: punch.map(a => multiaddr(a).bytes)
      })

    it('refuses a request on a direct connection, a second within the cooldown, a private address, an oversized frame and a SYNC first', async () => {
      const { provider, renter, relayed } = await relayedPair({ reachability: 'private', listen: ['/p2p-circuit'] }, { privateAddresses: false })
      const served = (): { direct: number, failed: number, refused: number } =>
        provider.libp2p.services.directPath.status().served

      // a private address: a peer could aim our dials at the LAN behind us
      assert.match(await send(relayed, [connect(['/ip4/192.168.1.10/tcp/22'])]), /^error/)
      await waitFor(() => served().failed === 1, { timeoutMs: 5_000, what: `the private address refused: ${JSON.stringify(served())}` })
      // again at once: the peer's cooldown
      assert.match(await send(relayed, [connect([PUBLIC])]), /^error/)
      await waitFor(() => served().refused === 1, { timeoutMs: 5_000, what: `the second ask refused: ${JSON.stringify(served())}` })

      // a fresh peer each time for the rest (the cooldown is per peer)
      const fresh = async (): Promise<Connection> => {
        const other = await start('renter', { bootstrap: [nodes[0].libp2p.getMultiaddrs()[0].toString()], reachability: 'private', listen: ['/p2p-circuit'] }, { privateAddresses: false })
        return await other.libp2p.dial(relayedAddress(provider) as Multiaddr, { signal: AbortSignal.timeout(15_000) })
      }
      assert.match(await send(await fresh(), [new Uint8Array(4096)]), /^error/)
      await waitFor(() => served().failed === 2, { timeoutMs: 5_000, what: `the oversized frame refused: ${JSON.stringify(served())}` })
      assert.match(await send(await fresh(), [Punch.encode({ type: Punch.Type.SYNC, listenAddrs: [], punchAddrs: [] })]), /^error/)
      await waitFor(() => served().failed === 3, { timeoutMs: 5_000, what: `a SYNC before CONNECT refused: ${JSON.stringify(served())}` })
      assert.match(await send(await fresh(), [connect([], [...Array(5)].map((_, i) => `/ip4/11.0.0.${i + 1}/tcp/4001`))]), /^error/)
      await waitFor(() => served().failed === 4, { timeoutMs: 5_000, what: `five punch addresses refused: ${JSON.stringify(served())}` })

      // and on a direct connection, where no path is needed
      const direct = await renter.libp2p.dial(nodes[0].libp2p.getMultiaddrs()[0], {
        signal: AbortSignal.timeout(10_000)
      })
      const seed = nodes[0]
      assert.match(await send(direct, [connect([PUBLIC])]), /^error/)
      await waitFor(() => seed.libp2p.services.directPath.status().served.refused === 1, { timeoutMs: 5_000, what: 'the bootstrap refused a request on a direct connection' })
      assert.equal(served().direct, 0, 'no dial was made for any of them')
    })
  })
})
