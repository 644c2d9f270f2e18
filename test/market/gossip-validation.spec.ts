import * as assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { TopicValidatorResult, type Message, type PeerId } from '@libp2p/interface'
import { Heartbeat } from '../../protocols/heartbeat.js'
import { DOMAIN, TOPIC } from '../../protocols/ids.js'
import { sealEnvelope } from '../../src/identity/index.js'
import { startInProcessNetwork, UNLIMITED_GOSSIP_RATES, waitFor, waitForTopicMesh, type InProcessNetwork } from '../utils/index.js'
import type { IdlegridNode } from '../../src/node/index.js'

function heartbeat (fields: Partial<Heartbeat> = {}): Uint8Array {
  const now = BigInt(Date.now())
  return Heartbeat.encode({
    role: Heartbeat.Role.PROVIDER,
    seq: now,
    sentAt: now,
    expiresAt: now + 30_000n,
    slotsTotal: 1,
    slotsBusy: 0,
    ...fields
  })
}

function verdicts (node: IdlegridNode): Record<string, number> {
  return node.libp2p.services.gossip.stats()[TOPIC.heartbeats] ?? {}
}

describe('gossip validation', function () {
  this.timeout(60_000)
  let net: InProcessNetwork
  let sender: IdlegridNode
  let receiver: IdlegridNode

  before(async () => {
    // long heartbeat interval: the test publishes every message itself
    // these specs validate many heartbeats of one author: the per-author rate limit (its own
    // specs are test/node/peer-guard*.spec.ts) would ignore them before the checks under test
    // the router's rules are checked on the legacy heartbeat topic, which these nodes join (off by default)
    net = await startInProcessNetwork({
      providers: 2,
      renters: 1,
      heartbeatSeconds: 3600,
      heartbeatGossip: true,
      extensions: () => ({ gossipRateLimits: UNLIMITED_GOSSIP_RATES })
    })
    sender = net.providers[0]
    receiver = net.renters[0]
    await waitForTopicMesh(net.all, TOPIC.heartbeats)
  })

  after(async () => { await net.stop() })

  const own = (payload: Uint8Array, domain: string = DOMAIN.heartbeat): Uint8Array =>
    sealEnvelope(sender.privateKey, sender.peerId, domain, payload)

  /** Runs the receiver's installed topic validator on a message as gossipsub would hand it over. */
  async function validate (
    data: Uint8Array,
    from: PeerId = sender.peerId
  ): Promise<{ result: TopicValidatorResult, counted: string }> {
    const before = verdicts(receiver)
    const validator = receiver.libp2p.services.pubsub.topicValidators.get(TOPIC.heartbeats)
    assert.ok(validator != null, 'a validator is installed on the topic')
    const msg: Message = { type: 'unsigned', topic: TOPIC.heartbeats, data }
    const result = await validator(from, msg)
    const after = verdicts(receiver)
    const counted = Object.keys(after).find(k => after[k] !== (before[k] ?? 0)) ?? '(nothing)'
    return { result, counted }
  }

  const REJECT = TopicValidatorResult.Reject
  const IGNORE = TopicValidatorResult.Ignore

  it('accepts an honest signed heartbeat', async () => {
    assert.deepEqual(await validate(own(heartbeat())), { result: TopicValidatorResult.Accept, counted: 'accept' })
  })

  it('rejects garbage bytes, oversized data, other domains, forged signatures, gossip-signed messages; the author is the envelope\'s signer', async () => {
    assert.deepEqual(await validate(Uint8Array.from([1, 2, 3, 4, 5, 0xff])), { result: REJECT, counted: 'reject:malformed' })
    assert.deepEqual(await validate(new Uint8Array(3 * 1024)), { result: REJECT, counted: 'reject:oversized (3072 > 2048 bytes)' })
    assert.deepEqual(await validate(own(heartbeat(), DOMAIN.bid)), { result: REJECT, counted: 'reject:wrong-domain' })
    const forged = own(heartbeat())
    forged[forged.length - 1] ^= 0x01
    assert.deepEqual(await validate(forged), { result: REJECT, counted: 'reject:bad-signature' })
    // StrictNoSign: a message carrying a gossip author, sequence number and signature of its own is not ours
    const validator = receiver.libp2p.services.pubsub.topicValidators.get(TOPIC.heartbeats)
    const gossipSigned = await validator?.(sender.peerId, { type: 'signed', from: sender.peerId, topic: TOPIC.heartbeats, data: own(heartbeat()), sequenceNumber: 1n, signature: new Uint8Array(64), key: sender.peerId.publicKey as never })
    assert.equal(gossipSigned, REJECT)
    assert.equal(verdicts(receiver)['reject:signed gossip message'], 1)
    // a heartbeat relayed by a peer that did not sign it is its author's, and valid
    const other = await generateKeyPair('Ed25519')
    assert.deepEqual(await validate(sealEnvelope(other, peerIdFromPrivateKey(other), DOMAIN.heartbeat, heartbeat())), { result: TopicValidatorResult.Accept, counted: 'accept' })
  })

  it('ignores a replayed envelope and a stale sequence number', async () => {
    const envelope = own(heartbeat())
    assert.equal((await validate(envelope)).result, TopicValidatorResult.Accept)
    assert.deepEqual(await validate(envelope), { result: IGNORE, counted: 'ignore:replayed' })
  })

  it('ignores an expired heartbeat and one from the future (clock rules); rejects one living too long, or not decoding', async () => {
    const now = BigInt(Date.now())
    assert.deepEqual(await validate(own(heartbeat({ seq: now + 10n, sentAt: now - 60_000n, expiresAt: now - 1_000n }))), { result: IGNORE, counted: 'ignore:expired' })
    assert.deepEqual(await validate(own(heartbeat({ seq: now + 11n, sentAt: now + 120_000n, expiresAt: now + 150_000n }))), { result: IGNORE, counted: 'ignore:heartbeat from the future' })
    assert.deepEqual(await validate(own(heartbeat({ seq: now + 12n, sentAt: now, expiresAt: now + 24n * 3600_000n }))), { result: REJECT, counted: 'reject:heartbeat lifetime too long' })
    assert.deepEqual(await validate(own(Uint8Array.from([0x08, 0xff]))), { result: REJECT, counted: 'reject:malformed heartbeat' })
  })

  it('over real gossip: a forged message is rejected, its sender scored down, honest traffic still flows', async () => {
    const honest = net.providers[1]
    const forged = own(heartbeat())
    forged[forged.length - 1] ^= 0x01
    // the receiver may have heard the sender already (heartbeats also go on the stream on connect)
    const heardFrom = (node: IdlegridNode): number =>
      receiver.libp2p.services.heartbeats.presence().find(h => h.peerId === node.peerId.toString())?.count ?? 0
    const senderHeard = heardFrom(sender)
    const rejectedBefore = verdicts(receiver)['reject:bad-signature'] ?? 0
    await sender.libp2p.services.pubsub.publish(TOPIC.heartbeats, forged)
    await waitFor(() => (verdicts(receiver)['reject:bad-signature'] ?? 0) > rejectedBefore, { what: 'the receiver to reject the forged heartbeat' })
    // scores are cached between gossipsub heartbeats (1 s)
    const score = (): number =>
      (receiver.libp2p.services.pubsub as unknown as { getScore(id: string): number }).getScore(
        sender.peerId.toString()
      )
    await waitFor(() => score() < 0, { timeoutMs: 10_000, what: `a negative gossipsub score for the sender (now ${score()})` })
    assert.equal(heardFrom(sender), senderHeard, 'the forged heartbeat was recorded')

    // honest gossip still flows (beat() also sends on the stream: the topic's own count is what tells)
    const acceptedBefore = verdicts(receiver).accept ?? 0
    await honest.libp2p.services.heartbeats.beat()
    await waitFor(() => (verdicts(receiver).accept ?? 0) > acceptedBefore, { what: 'the honest heartbeat to arrive over gossip' })
  })
})
