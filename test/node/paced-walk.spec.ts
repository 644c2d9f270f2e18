/**
 * The random walk the relay discovery and AutoNAT use (src/node/connectivity/paced-walk.ts): one DHT query
 * per interval and each peer once per `forgetMs`, whatever the routing answers. libp2p's own
 * walk queried back to back, and a NAT'd node in a one-relay network redialed one stale peer
 * every 5–10 ms for as long as it ran.
 */
import * as assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { pacedWalk } from '../../src/node/connectivity/paced-walk.js'
import type { PeerInfo } from '@libp2p/interface'

async function somePeers (n: number): Promise<PeerInfo[]> {
  return await Promise.all(Array.from({ length: n }, async () => ({ id: peerIdFromPrivateKey(await generateKeyPair('Ed25519')), multiaddrs: [] })))
}

/** Walks for `ms`, returning the peers yielded. */
async function walkFor (walk: ReturnType<typeof pacedWalk>, ms: number): Promise<PeerInfo[]> {
  const out: PeerInfo[] = []
  try {
    for await (const peer of walk.walk({ signal: AbortSignal.timeout(ms) })) out.push(peer)
  } catch {
    // the walk ends when its signal aborts
  }
  return out
}

describe('node: the paced random walk', () => {
  it('a routing that answers the same peers at once: each peer once, one query per interval (not one per peer dialed)', async () => {
    const peers = await somePeers(3)
    let queries = 0
    const walk = pacedWalk(
      () => ({
        getClosestPeers: async function * () {
          queries++
          yield * peers
        }
      }),
      { intervalMs: 100, forgetMs: 60_000 }
    )
    const got = await walkFor(walk, 650)
    assert.deepEqual(got.map(p => p.id.toString()), peers.map(p => p.id.toString()))
    assert.ok(queries >= 1 && queries <= 8, `${queries} queries in 650 ms at one per 100 ms`)
  })

  it('a peer is yielded again once forgotten; a routing that fails at once is asked once per interval too', async () => {
    const [peer] = await somePeers(1)
    const again = pacedWalk(
      () => ({
        getClosestPeers: async function * () {
          yield peer
        }
      }),
      { intervalMs: 50, forgetMs: 120 }
    )
    const got = await walkFor(again, 2_000)
    assert.ok(got.length >= 2 && got.length <= 18, `${got.length} yields of one peer forgotten after 120 ms, in 2 s (at most one per query, one query per 50 ms but each yield at least 120 ms after the last)`)
    let queries = 0
    const failing = pacedWalk(() => ({ getClosestPeers: async function * () { queries++; throw new Error('no peers in the routing table') } }), { intervalMs: 100 })
    assert.deepEqual(await walkFor(failing, 450), [])
    assert.ok(queries >= 1 && queries <= 6, `${queries} failed queries in 450 ms at one per 100 ms`)
  })

  it('a query that hangs gives up after its timeout, and the walk ends when its signal aborts', async () => {
    let queries = 0
    const hanging = pacedWalk(() => ({ getClosestPeers: async function * (_key, options) { queries++; await new Promise((_resolve, reject) => options?.signal?.addEventListener('abort', () => reject(new Error('aborted')))) } }), { intervalMs: 10, queryTimeoutMs: 100 })
    assert.deepEqual(await walkFor(hanging, 450), [])
    assert.ok(queries >= 1 && queries <= 6, `${queries} queries of 100 ms in 450 ms`)
  })
})
