/**
 * The peer guard's policy on a fake clock (src/node/guard/peer-guard.ts, deny-list.ts,
 * token-bucket.ts, gossip-limits.ts): buckets, the deny list's expiry and bound, strikes,
 * trusted peers' short denial, the gater.
 */
import * as assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { JOB_SHARD_TOPICS, TOPIC } from '../../protocols/ids.js'
import { DenyList } from '../../src/node/guard/deny-list.js'
import { topicClass } from '../../src/node/guard/gossip-limits.js'
import { PeerGuard } from '../../src/node/guard/peer-guard.js'
import { TokenBuckets } from '../../src/node/guard/token-bucket.js'
import type { PeerId } from '@libp2p/interface'

async function newPeer (): Promise<PeerId> {
  return peerIdFromPrivateKey(await generateKeyPair('Ed25519'))
}

describe('peer guard policy', () => {
  let clock: number
  const now = (): number => clock
  beforeEach(() => { clock = 1_000_000 })

  it('a token bucket allows its burst, then its rate, and refunds', () => {
    const buckets = new TokenBuckets(10, now)
    const limit = { perSecond: 2, burst: 5 }
    const taken = Array.from({ length: 8 }, () => buckets.take('a', limit)).filter(Boolean).length
    assert.equal(taken, 5)
    clock += 1_000
    assert.equal(Array.from({ length: 5 }, () => buckets.take('a', limit)).filter(Boolean).length, 2)
    buckets.refund('a', limit)
    assert.equal(buckets.take('a', limit), true)
    assert.equal(buckets.take('a', limit), false)
    // another key has its own bucket
    assert.equal(buckets.take('b', limit), true)
  })

  it('a reservation goes into debt: each caller past the burst waits its turn at the rate', () => {
    const buckets = new TokenBuckets(10, now)
    const limit = { perSecond: 4, burst: 2 }
    // the burst at once, then one every 250 ms, each later than the one before
    assert.deepEqual(Array.from({ length: 5 }, () => buckets.reserve('a', limit)), [0, 0, 250, 500, 750])
    // a taker finds the bucket in debt until the last reservation's turn has come
    clock += 750
    assert.equal(buckets.take('a', limit), false)
    clock += 250
    assert.equal(buckets.take('a', limit), true)
    // paced callers never exceed the rate a guard with the same limit allows
    const guard = new TokenBuckets(10, now)
    let refused = 0
    const waits = Array.from({ length: 40 }, () => buckets.reserve('b', limit))
    let at = 0
    for (const wait of waits) {
      clock += wait - at
      at = wait
      if (!guard.take('b', limit)) refused++
    }
    assert.equal(refused, 0)
  })

  it('token buckets stay within their key bound, dropping the least recently used', () => {
    const buckets = new TokenBuckets(100, now)
    const limit = { perSecond: 1, burst: 1 }
    for (let i = 0; i < 10_000; i++) buckets.take(`k${i}`, limit)
    assert.equal(buckets.size, 100)
    // the last used key is still tracked (and empty); the first came back full
    assert.equal(buckets.take('k9999', limit), false)
    assert.equal(buckets.take('k0', limit), true)
  })

  it('a denial expires, and the list keeps at most its bound (the oldest gives way)', () => {
    const list = new DenyList(3, now)
    list.deny('a', 'x', 1_000)
    assert.equal(list.has('a'), true)
    clock += 999
    assert.equal(list.has('a'), true)
    clock += 1
    assert.equal(list.has('a'), false)
    for (const id of ['b', 'c', 'd', 'e']) list.deny(id, 'x', 60_000)
    assert.deepEqual(list.list().map(d => d.peerId), ['c', 'd', 'e'])
    // a shorter denial does not cut a longer one short
    list.deny('e', 'y', 10)
    clock += 1_000
    assert.equal(list.has('e'), true)
  })

  it('strikes: a peer over its gossip rate is denied only when it floods directly, after its strike allowance', async () => {
    const guard = new PeerGuard({ strikes: { perSecond: 1, burst: 10 }, now })
    const flooder = await newPeer()
    const author = await newPeer()
    for (let i = 0; i < 1_000; i++) guard.messageOverLimit(author, false, 'jobs')
    assert.equal(guard.isDenied(author), false, 'relayed copies are not held against their author')
    for (let i = 0; i < 10; i++) guard.messageOverLimit(flooder, true, 'jobs')
    assert.equal(guard.isDenied(flooder), false, 'within the strike allowance')
    guard.messageOverLimit(flooder, true, 'jobs')
    assert.equal(guard.isDenied(flooder), true)
    assert.match(guard.snapshot().denied[0]?.reason ?? '', /over its jobs gossip rate limit/)
    assert.equal(guard.counters.droppedByRate, 1_011)
    assert.equal(guard.counters.denied, 1)
  })

  it('streams: over the rate they are refused, again and again gets the peer denied; the gater then refuses it both ways', async () => {
    const guard = new PeerGuard({ streams: { perSecond: 10, burst: 20 }, strikes: { perSecond: 1, burst: 5 }, now })
    const peer = await newPeer()
    const other = await newPeer()
    const admitted = Array.from({ length: 100 }, () => guard.admitStream(peer)).filter(Boolean).length
    assert.equal(admitted, 20)
    assert.equal(guard.isDenied(peer), true)
    assert.equal(guard.counters.streamsRefused, 80)
    const gater = guard.gater()
    assert.equal(await gater.denyDialPeer?.(peer), true)
    assert.equal(await gater.denyInboundEncryptedConnection?.(peer, undefined as never), true)
    assert.equal(await gater.denyDialPeer?.(other), false)
    assert.equal(guard.counters.connectionsRefused, 2)
    clock += 10 * 60_000
    assert.equal(await gater.denyDialPeer?.(peer), false, 'the denial expired')
  })

  it('graylisted RPCs: a graylisted peer that keeps sending is struck past its allowance and denied; one sending slowly never is', async () => {
    const guard = new PeerGuard({
      graylistedRpcs: { perSecond: 20, burst: 200 },
      strikes: { perSecond: 5, burst: 50 },
      now
    })
    const spammer = await newPeer()
    const quiet = await newPeer()
    for (let i = 0; i < 250; i++) guard.rpcWhileGraylisted(spammer.toString())
    assert.equal(guard.isDenied(spammer), false, 'the burst and the strike allowance forgive 250 at once')
    guard.rpcWhileGraylisted(spammer.toString())
    assert.equal(guard.isDenied(spammer), true)
    assert.match(guard.snapshot().denied[0]?.reason ?? '', /faster than 20 RPCs\/s while graylisted/)
    // an honest peer graylisted for a bad spell, still relaying at 20 RPCs a second for ten minutes
    for (let second = 0; second < 600; second++) {
      for (let i = 0; i < 20; i++) guard.rpcWhileGraylisted(quiet)
      clock += 1_000
    }
    assert.equal(guard.isDenied(quiet), false)
    assert.equal(guard.counters.graylistedRpcs, 251 + 12_000)
  })

  it('a bootstrap or trusted peer is denied only briefly, and says so', async () => {
    const trusted = await newPeer()
    const stranger = await newPeer()
    const guard = new PeerGuard({ trusted: [trusted.toString()], trustedDenyMs: 30_000, denyMs: 600_000, now })
    const denials: string[] = []
    guard.onDeny(id => denials.push(id))
    guard.checkScore(trusted, -5_000)
    guard.checkScore(stranger, -5_000)
    guard.checkScore(await newPeer(), -999)
    assert.deepEqual(denials, [trusted.toString(), stranger.toString()], 'only scores below -1000 are denied')
    assert.match(guard.snapshot().denied[0]?.reason ?? '', /gossipsub score -5000 below -1000 \(trusted or bootstrap: short denial\)/)
    clock += 30_000
    assert.equal(guard.isDenied(trusted), false)
    assert.equal(guard.isDenied(stranger), true)
  })

  it('topic classes: each idlegrid topic is its own class, shards of it share it', () => {
    // every job shard is one class: sharding cannot multiply a flooder's allowance
    for (const shard of JOB_SHARD_TOPICS) assert.equal(topicClass(shard), 'jobs')
    assert.equal(topicClass('/idlegrid/1/bids'), 'other')
    assert.equal(topicClass(TOPIC.ledger), 'ledger')
    assert.equal(topicClass(TOPIC.heartbeats), 'heartbeats')
    assert.equal(topicClass('/something/else'), 'other')
  })
})
