/**
 * Heartbeats on /idlegrid/heartbeat/1.0.0 (issue 15 item 3), real nodes on 127.0.0.1: a new
 * connection hears a heartbeat at once, with no global topic joined; each kind of bad input is
 * refused with its reason and its stream closed; a flood of streams is bounded per peer and
 * gets the flooder denied while an honest peer is still heard.
 */
import * as assert from 'node:assert/strict'
import * as lp from 'it-length-prefixed'
import { Heartbeat } from '../../protocols/heartbeat.js'
import { DOMAIN, PROTOCOL, TOPIC } from '../../protocols/ids.js'
import { sealEnvelope } from '../../src/identity/index.js'
import { GOSSIP_RATE_LIMITS, type IdlegridNode } from '../../src/node/index.js'
import { MAX_HEARTBEAT_FRAME_BYTES } from '../../src/node/presence/heartbeat-stream.js'
import { recordAttack, startInProcessNetwork, waitFor, type InProcessNetwork } from '../utils/index.js'

function heartbeat (fields: Partial<Heartbeat> = {}): Uint8Array {
  const now = BigInt(Date.now())
  return Heartbeat.encode({
    role: Heartbeat.Role.RENTER,
    seq: now,
    sentAt: now,
    expiresAt: now + 30_000n,
    slotsTotal: 0,
    slotsBusy: 0,
    ledgerSeq: 0n,
    ...fields
  })
}

describe('heartbeats on the heartbeat stream, no global topic (issue 15 item 3)', function () {
  this.timeout(60_000)
  let net: InProcessNetwork
  // the bootstrap is the victim: the renters are not among its trusted peers, so its guard strikes them
  const victim = (): IdlegridNode => net.bootstrap
  const sender = (): IdlegridNode => net.renters[0] as IdlegridNode
  const honest = (): IdlegridNode => net.renters[1] as IdlegridNode
  const verdicts = (): Record<string, number> => victim().libp2p.services.heartbeats.stats()
  const heard = (from: IdlegridNode): number | undefined =>
    victim()
      .libp2p.services.heartbeats.presence()
      .find(p => p.peerId === from.peerId.toString())?.count

  before(async () => {
    // an interval longer than the spec: every heartbeat is the connection's first or one the test sends
    net = await startInProcessNetwork({ providers: 0, renters: 2, heartbeatSeconds: 3600 })
  })
  after(async () => { await net?.stop() })

  /**
   * Writes `frame` (already framed) on a new heartbeat stream to the victim; resolves with how the
   * stream ended on our side.
   */
  async function push (frame: Uint8Array, from: IdlegridNode = sender()): Promise<'closed' | 'reset'> {
    // an attacker sets its own outbound limit: ours (2 at once) must not be what stops the flood
    const stream = await from.libp2p.dialProtocol(victim().peerId, PROTOCOL.heartbeat, { maxOutboundStreams: 1_000 })
    try {
      await stream.sink([frame])
      for await (const _ of stream.source) { /* the victim answers nothing */ }
      return 'closed'
    } catch {
      return 'reset'
    }
  }
  const framed = (bytes: Uint8Array): Uint8Array => lp.encode.single(bytes).subarray()
  const own = (payload: Uint8Array, domain: string = DOMAIN.heartbeat, from: IdlegridNode = sender()): Uint8Array =>
    sealEnvelope(from.privateKey, from.peerId, domain, payload)

  it('a new connection hears the peer at once (identify, not the interval), and nobody joins or reads the heartbeat topic', async () => {
    await waitFor(() => heard(sender()) != null && heard(honest()) != null, { timeoutMs: 20_000, what: 'the bootstrap to hear both renters on connect' })
    const renterHears = await waitFor(() => sender().libp2p.services.heartbeats.presence().find(p => p.peerId === victim().peerId.toString()), { timeoutMs: 20_000, what: 'a renter to hear the bootstrap' })
    assert.equal(renterHears.role, 'bootstrap')
    for (const node of net.all) {
      assert.equal(node.libp2p.services.pubsub.getTopics().includes(TOPIC.heartbeats), false, 'the legacy topic is joined')
      assert.equal(node.libp2p.services.gossip.stats()[TOPIC.heartbeats], undefined, 'a heartbeat went through gossip')
    }
    assert.ok((verdicts().accept ?? 0) >= 2)
  })

  it('beat() sends a newer heartbeat to each connected peer; a replayed older one is ignored as stale', async () => {
    const before = heard(sender()) ?? 0
    const old = own(heartbeat({ seq: 1n }))
    await sender().libp2p.services.heartbeats.beat()
    await waitFor(() => (heard(sender()) ?? 0) > before, { what: 'the beat to arrive' })
    const stale = verdicts()['ignore:stale sequence'] ?? 0
    assert.equal(await push(framed(old)), 'closed', 'an ignored heartbeat closes the stream without blame')
    await waitFor(() => (verdicts()['ignore:stale sequence'] ?? 0) > stale, { what: 'the stale heartbeat to be ignored' })
  })

  const rejections: Array<[string, () => Uint8Array, string]> = [
    ['a frame that is no envelope', () => framed(Uint8Array.from([0x0a, 0xff, 0x01])), 'reject:malformed'],
    ['a bad signature', () => { const e = own(heartbeat()); e[e.length - 1] ^= 0xff; return framed(e) }, 'reject:bad-signature'],
    ['the wrong domain', () => framed(own(heartbeat(), DOMAIN.bid)), 'reject:wrong-domain'],
    ['a heartbeat signed by another peer (relayed)', () => framed(own(heartbeat(), DOMAIN.heartbeat, honest())), 'reject:wrong-signer'],
    ['a payload that is no heartbeat', () => framed(own(Uint8Array.from([0x08, 0xff]))), 'reject:malformed heartbeat'],
    ['a lifetime past 10 minutes', () => framed(own(heartbeat({ expiresAt: BigInt(Date.now()) + 3_600_000n }))), 'reject:heartbeat lifetime too long'],
    ['a frame over the bound', () => framed(new Uint8Array(MAX_HEARTBEAT_FRAME_BYTES + 1)), `reject:oversized (over ${MAX_HEARTBEAT_FRAME_BYTES} bytes)`]
  ]
  for (const [what, frame, reason] of rejections) {
    it(`rejects ${what}: counted as "${reason}", stream reset, nothing recorded, the node goes on`, async () => {
      const before = verdicts()[reason] ?? 0
      const count = heard(sender())
      assert.equal(await push(frame()), 'reset')
      await waitFor(() => (verdicts()[reason] ?? 0) === before + 1, { what: `the victim to count ${reason}` })
      assert.equal(heard(sender()), count, 'a rejected heartbeat was recorded')
    })
  }

  it('rejects a stream closed without a frame and a truncated frame (from the other renter: the sender spent its burst)', async () => {
    const before = { empty: verdicts()['reject:no heartbeat frame'] ?? 0, truncated: verdicts()['reject:malformed frame'] ?? 0 }
    assert.equal(await push(new Uint8Array(0), honest()), 'reset')
    // a length prefix of 100, then 2 bytes and the end of the stream
    assert.equal(await push(Uint8Array.from([100, 1, 2]), honest()), 'reset')
    await waitFor(() => (verdicts()['reject:no heartbeat frame'] ?? 0) === before.empty + 1 && (verdicts()['reject:malformed frame'] ?? 0) === before.truncated + 1, { what: 'both rejections counted' })
  })

  it('rejects a heartbeat relaying five feed heads (the bound is 4; short ones, well within the byte bound) as malformed (from the other renter: the sender spent its burst)', async () => {
    const reason = 'reject:malformed heartbeat'
    const before = verdicts()[reason] ?? 0
    const count = heard(honest())
    const relayedHeads = Array.from({ length: 5 }, (_, i) => ({ author: Uint8Array.of(i), seq: BigInt(i + 1) }))
    assert.equal(await push(framed(own(heartbeat({ seq: BigInt(Date.now()) * 1000n, relayedHeads }), DOMAIN.heartbeat, honest())), honest()), 'reset')
    await waitFor(() => (verdicts()[reason] ?? 0) === before + 1, { what: `the victim to count ${reason}` })
    assert.equal(heard(honest()), count, 'a rejected heartbeat was recorded')
  })

  it('ignores a heartbeat from the future and an expired one (clock rules), without striking the sender', async () => {
    // from the honest renter: the sender spent its burst on the rejections above
    const now = BigInt(Date.now())
    const deniedBefore = victim().libp2p.services.peerGuard.snapshot().counters.denied
    assert.equal(await push(framed(own(heartbeat({ seq: now + 100n, sentAt: now + 120_000n, expiresAt: now + 150_000n }), DOMAIN.heartbeat, honest())), honest()), 'closed')
    assert.equal(await push(framed(own(heartbeat({ seq: now + 101n, sentAt: now - 60_000n, expiresAt: now - 1_000n }), DOMAIN.heartbeat, honest())), honest()), 'closed')
    await waitFor(() => (verdicts()['ignore:heartbeat from the future'] ?? 0) >= 1 && (verdicts()['ignore:expired'] ?? 0) >= 1, { what: 'both clock verdicts' })
    assert.equal(victim().libp2p.services.peerGuard.snapshot().counters.denied, deniedBefore)
  })

  it('red team: a flood of heartbeat streams is validated at the per-peer rate, the flooder is denied, an honest peer is still heard', async () => {
    const limit = GOSSIP_RATE_LIMITS.heartbeats
    await waitFor(() => heard(sender()) != null && heard(honest()) != null, { timeoutMs: 20_000, what: 'both renters connected and heard' })
    const acceptedBefore = verdicts().accept ?? 0
    const started = Date.now()
    const FLOOD = 400
    const isDenied = (): boolean =>
      victim()
        .libp2p.services.peerGuard.snapshot()
        .denied.some(d => d.peerId === sender().peerId.toString())
    let sent = 0
    let refused = 0
    for (let i = 0; i < FLOOD && !isDenied(); i++) {
      const ended = await push(framed(own(heartbeat({ seq: BigInt(Date.now()) * 1000n + BigInt(i) })))).catch(() => 'refused')
      if (ended === 'refused') refused++
      else sent++
    }
    const elapsedS = (Date.now() - started) / 1000
    const validated = (verdicts().accept ?? 0) - acceptedBefore
    assert.ok(validated <= limit.burst + Math.ceil(limit.perSecond * elapsedS) + 1, `${validated} heartbeats validated in ${elapsedS} s`)
    assert.ok(isDenied(), `the flooder was not denied (${sent} streams, ${refused} refused, ${JSON.stringify(verdicts())})`)
    // the honest renter is still heard
    const count = heard(honest()) ?? 0
    await honest().libp2p.services.heartbeats.beat()
    await waitFor(() => (heard(honest()) ?? 0) > count, { what: 'the honest renter\'s heartbeat after the flood' })
    recordAttack({ issue: '15.3', attack: `${FLOOD} heartbeat streams from one peer, as fast as it can open them`, got: `${sent} streams opened (${refused} failed) before it was denied, ${validated} heartbeats validated in ${elapsedS.toFixed(1)} s, flooder denied; honest peer heard`, limit: `${limit.perSecond}/s per peer, bursts of ${limit.burst}; over-rate streams strike the peer (denied past 50)` })
  })
})
