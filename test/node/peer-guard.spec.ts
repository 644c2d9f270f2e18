/**
 * The peer guard on real libp2p nodes on 127.0.0.1 (issue 19 item 5): a stream flood, a flood
 * of valid signed gossip from one key, a flood of invalid gossip; each flooder is denied,
 * disconnected and refused on redial while an honest peer keeps its service; a denial expires.
 */
import * as assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { Heartbeat } from '../../protocols/heartbeat.js'
import { DOMAIN, JOB_SHARD_TOPICS, PROTOCOL, type JobShardTopic } from '../../protocols/ids.js'
import { resolveConfig, type Role } from '../../src/config/config.js'
import { sealEnvelope } from '../../src/identity/index.js'
import { createNode, type IdlegridNode, type NodeComposition } from '../../src/node/create-node.js'
import { GOSSIP_RATE_LIMITS, PEER_GUARD_DEFAULTS, type PeerGuardSnapshot } from '../../src/node/index.js'
import { sendHeartbeat } from '../../src/node/presence/heartbeat-stream.js'
import * as lp from 'it-length-prefixed'
import { recordAttack, tempDir, waitFor } from '../utils/index.js'

const PING = '/ipfs/ping/1.0.0'
/** a job shard: in market version 2 the job shards are the market's gossip (bids and awards travel on streams) */
const SHARD = JOB_SHARD_TOPICS[0] as JobShardTopic

describe('peer guard on real nodes (issue 19 item 5)', function () {
  this.timeout(60_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  let nodes: IdlegridNode[] = []
  let names = 0

  before(async () => { dir = await tempDir('idlegrid-peer-guard-') })
  afterEach(async () => {
    await Promise.all(nodes.map(async n => { await n.stop() }))
    nodes = []
  })
  after(async () => { await dir.cleanup() })

  async function start (
    role: Role,
    bootstrap: IdlegridNode | undefined,
    composition?: NodeComposition
  ): Promise<IdlegridNode> {
    const config = resolveConfig({
      role,
      flags: { dataDir: join(dir.path, `${role}-${++names}`), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: bootstrap == null ? [] : [bootstrap.libp2p.getMultiaddrs()[0]?.toString() as string], heartbeatSeconds: 1 }
    })
    const node = await createNode(config, composition)
    nodes.push(node)
    return node
  }

  const guardOf = (node: IdlegridNode): PeerGuardSnapshot => node.libp2p.services.peerGuard.snapshot()
  const denial = (victim: IdlegridNode, peer: IdlegridNode): PeerGuardSnapshot['denied'][number] | undefined =>
    guardOf(victim).denied.find(d => d.peerId === peer.peerId.toString())

  /** `peer` connected to `victim` and both see each other on `topic` */
  async function joined (victim: IdlegridNode, peer: IdlegridNode, topic: string): Promise<void> {
    // shards are joined by the market services, which these bare nodes do not run
    for (const node of [victim, peer]) {
      if (!node.libp2p.services.pubsub.getTopics().includes(topic)) node.libp2p.services.pubsub.subscribe(topic)
    }
    await waitFor(() => victim.libp2p.services.pubsub.getSubscribers(topic).some(p => p.equals(peer.peerId)) &&
      peer.libp2p.services.pubsub.getSubscribers(topic).some(p => p.equals(victim.peerId)), { timeoutMs: 20_000, what: 'the two nodes to see each other on the topic' })
  }

  /**
   * The denied `peer` is disconnected, and a redial is refused by the victim's gater: the dial
   * may resolve first (the dialer negotiates its muxer optimistically), but the connection
   * dies and the victim counts the refusal. Returns how the redial ended on the peer's side.
   */
  async function refusedAndDisconnected (victim: IdlegridNode, peer: IdlegridNode): Promise<string> {
    const gone = (): boolean =>
      peer.libp2p.getConnections(victim.peerId).length === 0 && victim.libp2p.getConnections(peer.peerId).length === 0
    await waitFor(gone, { timeoutMs: 10_000, what: 'the denied peer to be disconnected' })
    const refusedBefore = guardOf(victim).counters.connectionsRefused
    const redial = await peer.libp2p.dial(victim.peerId, { signal: AbortSignal.timeout(5_000) }).then(() => 'dial resolved, connection closed', (err: Error) => `dial failed (${err.name})`)
    await waitFor(() => gone() && guardOf(victim).counters.connectionsRefused > refusedBefore, { timeoutMs: 10_000, what: 'the victim to refuse the redial' })
    return redial
  }

  it('red team: a stream flood is refused past its rate, the flooder denied, disconnected and refused on redial; an honest peer still connects', async () => {
    // a rate any flooder beats even on two loaded cores (it opened 16 a second at worst)
    const streams = { perSecond: 2, burst: 20 }
    const victim = await start('bootstrap', undefined, { peerGuard: { streams, strikes: { perSecond: 1, burst: 10 } } })
    const flooder = await start('provider', victim)
    await waitFor(() => flooder.libp2p.getConnections(victim.peerId).length > 0, { what: 'the flooder to connect' })
    const started = Date.now()
    let opened = 0
    let refused = 0
    while (denial(victim, flooder) == null && Date.now() - started < 20_000) {
      try {
        const stream = await flooder.libp2p.dialProtocol(victim.peerId, PING, { signal: AbortSignal.timeout(2_000) })
        opened++
        stream.abort(new Error('flood'))
      } catch {
        refused++
      }
    }
    const deniedAfterMs = Date.now() - started
    const denied = denial(victim, flooder)
    assert.ok(denied != null, `not denied after ${opened} streams`)
    assert.match(denied.reason, /opening streams faster than 2\/s/)
    const redial = await refusedAndDisconnected(victim, flooder)
    const honest = await start('renter', victim)
    await waitFor(() => honest.libp2p.getConnections(victim.peerId).length > 0, { what: 'an honest peer to connect' })
    // the DHT pings a new contact too (ping allows one outbound stream per connection): retried, not raced
    await waitFor(async () => await honest.libp2p.services.ping.ping(victim.peerId).then(() => true, () => false), { what: 'the honest peer\'s ping to be answered' })
    const counters = guardOf(victim).counters
    assert.ok(
      counters.streamsRefused >= 10 && counters.disconnected >= 1 && counters.connectionsRefused >= 1,
      JSON.stringify(counters)
    )
    console.log(`      [figures] stream flood: ${opened} opened (${refused} failed on the flooder's side) before the denial after ${deniedAfterMs} ms; victim ${JSON.stringify(counters)}; redial: ${redial}`)
    recordAttack({ issue: '19.5', attack: 'stream flood: one peer opening and abandoning ping streams as fast as it can (in-process)', got: `${opened} streams opened in ${deniedAfterMs} ms, then denied: disconnected, redial refused (${redial}); ${counters.streamsRefused} refused`, limit: `${streams.perSecond}/s, bursts of ${streams.burst} (test setting; default ${PEER_GUARD_DEFAULTS.streams.perSecond}/s, ${PEER_GUARD_DEFAULTS.streams.burst}); deny ${PEER_GUARD_DEFAULTS.denyMs / 60_000} min` })
  })

  it('red team: 2,000 valid signed job-shard messages from one key: the router validates at most its allowance, the flooder is denied, an honest author gets every message through', async () => {
    // a smaller allowance than the default (test/chaos/spam.spec.ts floods the defaults): fewer
    // signatures to verify on two cores
    const limit = { perSecond: 20, burst: 100 }
    const victim = await start('bootstrap', undefined, { gossipRateLimits: { jobs: limit } })
    const flooder = await start('provider', victim)
    const honest = await start('provider', victim)
    await joined(victim, flooder, SHARD)
    await joined(victim, honest, SHARD)
    const accepted = new Map<string, number>()
    const flooderAcceptedAt: number[] = []
    victim.libp2p.services.gossip.onMessage(SHARD, (envelope) => {
      const id = envelope.signer.toString()
      accepted.set(id, (accepted.get(id) ?? 0) + 1)
      if (envelope.signer.equals(flooder.peerId)) flooderAcceptedAt.push(Date.now())
    })
    const sign = (node: IdlegridNode, i: number): Uint8Array => sealEnvelope(node.privateKey, node.peerId, DOMAIN.jobRequest, Uint8Array.from(Buffer.from(`job ${i} ${randomBytes(8).toString('hex')}`)))
    const HONEST = 20
    const honestPublishing = (async () => {
      for (let i = 0; i < HONEST; i++) {
        await honest.libp2p.services.pubsub.publish(SHARD, sign(honest, i))
        await new Promise(resolve => setTimeout(resolve, 100))
      }
    })()
    const FLOOD = 2_000
    const started = Date.now()
    let published = 0
    for (; published < FLOOD && denial(victim, flooder) == null; published++) {
      await flooder.libp2p.services.pubsub.publish(SHARD, sign(flooder, published)).catch(() => {})
    }
    const floodMs = Date.now() - started
    await honestPublishing
    await waitFor(() => (accepted.get(honest.peerId.toString()) ?? 0) === HONEST, { timeoutMs: 15_000, what: 'every honest message to be accepted' })
    const denied = await waitFor(() => denial(victim, flooder), { timeoutMs: 10_000, what: 'the flooder to be denied' })
    assert.match(denied.reason, /over its jobs gossip rate limit again and again/)
    const redial = await refusedAndDisconnected(victim, flooder)
    const fromFlooder = accepted.get(flooder.peerId.toString()) ?? 0
    // the victim validates behind the publisher: its allowance runs over the time it accepted the
    // flood in (+1 s of refill)
    const acceptingMs = (flooderAcceptedAt.at(-1) ?? 0) - (flooderAcceptedAt[0] ?? 0)
    const allowance = limit.burst + Math.ceil(limit.perSecond * (acceptingMs / 1000 + 1))
    const stats = victim.libp2p.services.gossip.stats()[SHARD] ?? {}
    console.log(`      [figures] valid flood: ${published} bids published in ${floodMs} ms; the victim verified and accepted ${fromFlooder} over ${acceptingMs} ms (allowance ${allowance}), ignored ${String(stats['ignore:rate limit'])} unverified; honest ${String(accepted.get(honest.peerId.toString()))}/${HONEST}; ${JSON.stringify(guardOf(victim).counters)}`)
    assert.ok(fromFlooder <= allowance, `${fromFlooder} accepted from the flooder > ${allowance}`)
    assert.ok(published > limit.burst, `the flood ran: ${published}`)
    recordAttack({ issue: '19.5', attack: `valid-message flood: ${published} validly signed job-shard messages from one key as fast as it can (in-process)`, got: `${fromFlooder} verified and accepted, ${String(stats['ignore:rate limit'])} ignored before verification, then denied and disconnected (redial ${redial}); ${HONEST}/${HONEST} honest messages accepted`, limit: `jobs ${limit.perSecond}/s, bursts of ${limit.burst} per author (test setting; default ${GOSSIP_RATE_LIMITS.jobs.perSecond}/s, ${GOSSIP_RATE_LIMITS.jobs.burst}); ${PEER_GUARD_DEFAULTS.strikes.burst} strikes` })
  })

  /**
   * Random bytes (invalid envelopes) published on the shard, 50 at a time, until `victim` denies
   * `flooder` (20 s at most); how many were sent.
   */
  async function floodUntilDenied (victim: IdlegridNode, flooder: IdlegridNode): Promise<number> {
    let sent = 0
    const started = Date.now()
    while (denial(victim, flooder) == null && Date.now() - started < 20_000) {
      await flooder.libp2p.services.pubsub.publish(SHARD, randomBytes(200)).then(() => { sent++ }, () => {})
      if (sent % 50 === 0) await new Promise(resolve => setTimeout(resolve, 20))
    }
    return sent
  }

  const rejectedOnShard = (victim: IdlegridNode): number =>
    Object.entries(victim.libp2p.services.gossip.stats()[SHARD] ?? {}).filter(([k]) => k.startsWith('reject:')).reduce((sum, [, n]) => sum + n, 0)

  it('red team: a flood of invalid gossip scores the sender far below graylist, and it is denied', async () => {
    // the jobs allowance and the graylisted-RPC allowance lifted above this flood: the score alone
    // must get the flooder denied
    const victim = await start('bootstrap', undefined, { gossipRateLimits: { jobs: { perSecond: 1e6, burst: 1e6 } }, peerGuard: { graylistedRpcs: { perSecond: 1e6, burst: 1e6 } } })
    const flooder = await start('provider', victim)
    await joined(victim, flooder, SHARD)
    const started = Date.now()
    const sent = await floodUntilDenied(victim, flooder)
    const denied = denial(victim, flooder)
    assert.ok(denied != null, `not denied after ${sent} invalid messages`)
    const redial = await refusedAndDisconnected(victim, flooder)
    assert.match(denied.reason, /gossipsub score -\d+ below -1000/)
    const score = (victim.libp2p.services.pubsub as unknown as { getScore: (id: string) => number }).getScore(
      flooder.peerId.toString()
    )
    const rejected = rejectedOnShard(victim)
    console.log(`      [figures] invalid flood: ${sent} sent in ${Date.now() - started} ms, ${rejected} rejected by the victim; denied: ${denied.reason}; score now ${score.toFixed(0)}`)
    recordAttack({ issue: '19.5', attack: 'invalid-message flood: random bytes on a job shard from one peer (in-process)', got: `${rejected} of ${sent} validated (rejected) before: ${denied.reason}; disconnected, redial refused (${redial})`, limit: `gossipsub graylist -80, guard denies below ${PEER_GUARD_DEFAULTS.denyScore}` })
  })

  it('red team: a peer scored just below graylist that keeps sending (gossipsub no longer judges it) is denied all the same', async () => {
    const victim = await start('bootstrap', undefined, { gossipRateLimits: { jobs: { perSecond: 1e6, burst: 1e6 } } })
    const flooder = await start('provider', victim)
    await joined(victim, flooder, SHARD)
    const pubsub = victim.libp2p.services.pubsub as unknown as { getScore: (id: string) => number }
    const score = (): number => pubsub.getScore(flooder.peerId.toString())
    const rejected = (): number => rejectedOnShard(victim)
    // four invalid messages: P4 is quadratic, 4² × -20 = -320, far above the deny bound (-1000)
    for (let i = 0; i < 4; i++) await flooder.libp2p.services.pubsub.publish(SHARD, randomBytes(200))
    await waitFor(() => score() < -80, { timeoutMs: 10_000, what: 'the flooder to be graylisted' })
    const rejectedWhenGraylisted = rejected()
    const started = Date.now()
    const sent = await floodUntilDenied(victim, flooder)
    const denied = denial(victim, flooder)
    assert.ok(denied != null, `not denied after ${sent} messages while graylisted (score ${score().toFixed(0)})`)
    assert.match(denied.reason, /while graylisted/)
    assert.equal(rejected(), rejectedWhenGraylisted, 'gossipsub judged none of the messages sent while graylisted')
    assert.ok(
      guardOf(victim).counters.graylistedRpcs > PEER_GUARD_DEFAULTS.graylistedRpcs.burst,
      JSON.stringify(guardOf(victim).counters)
    )
    const redial = await refusedAndDisconnected(victim, flooder)
    recordAttack({ issue: '19.5', attack: 'gossip from a peer kept just below the graylist (4 invalid messages, then a flood gossipsub drops unread; in-process)', got: `denied after ${sent} messages in ${Date.now() - started} ms (${guardOf(victim).counters.graylistedRpcs} RPCs dropped unread): ${denied.reason}; disconnected, redial refused (${redial})`, limit: `${PEER_GUARD_DEFAULTS.graylistedRpcs.perSecond} RPCs/s while graylisted, bursts of ${PEER_GUARD_DEFAULTS.graylistedRpcs.burst}, then strikes` })
  })

  it('a peer whose clock is ahead: its future-dated heartbeats are ignored, not scored down, and it is never denied', async () => {
    // heartbeats travel on the heartbeat stream (the topic is off); its per-peer rate is the gossip heartbeats class's
    const victim = await start('bootstrap', undefined, { gossipRateLimits: { heartbeats: { perSecond: 1e6, burst: 1e6 } } })
    const skewed = await start('provider', victim)
    await waitFor(() => victim.libp2p.services.heartbeats.presence().some(p => p.peerId === skewed.peerId.toString()), { timeoutMs: 20_000, what: 'the victim to hear the peer on connect' })
    // 5 minutes ahead; 40 messages: as rejects, they would strike it 40 times
    const ahead = BigInt(Date.now() + 5 * 60_000)
    for (let i = 0; i < 40; i++) {
      const payload = Heartbeat.encode({
        role: Heartbeat.Role.PROVIDER,
        seq: ahead + BigInt(i),
        sentAt: ahead,
        expiresAt: ahead + 60_000n,
        slotsTotal: 1,
        slotsBusy: 0
      })
      await sendHeartbeat(
        skewed.libp2p,
        victim.peerId,
        sealEnvelope(skewed.privateKey, skewed.peerId, DOMAIN.heartbeat, payload),
        AbortSignal.timeout(5_000)
      )
    }
    const verdicts = (): Record<string, number> => victim.libp2p.services.heartbeats.stats()
    await waitFor(() => (verdicts()['ignore:heartbeat from the future'] ?? 0) >= 40, { timeoutMs: 10_000, what: 'the victim to ignore the 40 future-dated heartbeats' })
    assert.equal(denial(victim, skewed), undefined)
    assert.ok(victim.libp2p.getConnections(skewed.peerId).length > 0, 'the skewed peer was disconnected')
    assert.equal(Object.keys(verdicts()).filter(k => k.startsWith('reject:')).length, 0, JSON.stringify(verdicts()))
  })

  it('red team: a peer that sends bad heartbeats again and again (within the rate) is struck for each and denied', async () => {
    const victim = await start('bootstrap', undefined, { gossipRateLimits: { heartbeats: { perSecond: 1e6, burst: 1e6 } }, peerGuard: { strikes: { perSecond: 1, burst: 10 } } })
    const liar = await start('provider', victim)
    await waitFor(() => liar.libp2p.getConnections(victim.peerId).length > 0, { what: 'the liar to connect' })
    const payload = Heartbeat.encode({
      role: Heartbeat.Role.PROVIDER,
      seq: BigInt(Date.now()),
      sentAt: BigInt(Date.now()),
      expiresAt: BigInt(Date.now() + 30_000),
      slotsTotal: 1,
      slotsBusy: 0
    })
    const forged = sealEnvelope(liar.privateKey, liar.peerId, DOMAIN.heartbeat, payload)
    forged[forged.length - 1] ^= 0xff
    let sent = 0
    while (denial(victim, liar) == null && sent < 100) {
      await liar.libp2p
        .dialProtocol(victim.peerId, PROTOCOL.heartbeat)
        .then(async s => {
          await s.sink([lp.encode.single(forged)])
        })
        .catch(() => {})
      sent++
      await waitFor(() => (victim.libp2p.services.heartbeats.stats()['reject:bad-signature'] ?? 0) >= sent || denial(victim, liar) != null, { what: 'the victim to judge the forged heartbeat' })
    }
    const denied = denial(victim, liar)
    assert.ok(denied != null, `not denied after ${sent} forged heartbeats`)
    assert.match(denied.reason, /heartbeat stream: bad-signature/)
    const redial = await refusedAndDisconnected(victim, liar)
    recordAttack({ issue: '15.3', attack: 'forged heartbeats (bad signature) on the heartbeat stream, one peer, rate limit lifted', got: `denied after ${sent} (${denied.reason}); disconnected, redial refused (${redial})`, limit: 'each rejected heartbeat is a peer-guard strike (test: 10 forgiven, 1/s)' })
  })

  it('a denial expires: the peer connects again', async () => {
    const victim = await start('bootstrap', undefined, { peerGuard: { denyMs: 2_000 } })
    const peer = await start('provider', victim)
    await waitFor(() => peer.libp2p.getConnections(victim.peerId).length > 0, { what: 'the peer to connect' })
    victim.libp2p.services.peerGuard.guard.deny(peer.peerId, 'test')
    await refusedAndDisconnected(victim, peer)
    await waitFor(async () => {
      await peer.libp2p.dial(victim.peerId, { signal: AbortSignal.timeout(2_000) }).catch(() => {})
      // connected for good: the victim holds the connection too, and a stream works
      return (
        victim.libp2p.getConnections(peer.peerId).length > 0 &&
        (await peer.libp2p.services.ping.ping(victim.peerId).then(
          () => true,
          () => false
        ))
      )
    }, { timeoutMs: 15_000, intervalMs: 500, what: 'the peer to connect again once its denial expired' })
    assert.equal(denial(victim, peer), undefined)
  })
})
