import * as assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { TopicValidatorResult } from '@libp2p/interface'
import { defaultLogger } from '@libp2p/logger'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { DOMAIN, TOPIC } from '../../protocols/ids.js'
import { sealEnvelope } from '../../src/identity/index.js'
import { gossipRouter, TOPIC_RETENTION_MS } from '../../src/node/gossip.js'
import { ReplayCache } from '../../src/node/guard/replay-cache.js'
import { recordAttack } from '../utils/index.js'
import type { Ed25519PrivateKey, Message, PeerId } from '@libp2p/interface'

// The gossip router's replay memory (issue 12 item 4): a message is remembered until it
// expires, and a flood is refused rather than allowed to push earlier messages out. The router
// runs against a stand-in for gossipsub's validator hook; envelopes and signatures are real.

type Validator = (from: PeerId, msg: Message) => Promise<TopicValidatorResult>

interface Sender { key: Ed25519PrivateKey, peerId: PeerId }

async function sender (): Promise<Sender> {
  const key = await generateKeyPair('Ed25519')
  return { key, peerId: peerIdFromPrivateKey(key) }
}

/** the peer every message arrives from (gossip messages name no author: the envelope's signer is it) */
let relay: PeerId

function router (now: () => number): {
  validate: (s: Sender, payload: Uint8Array) => Promise<TopicValidatorResult>
  replay: (msg: Message) => Promise<TopicValidatorResult>
  message: (s: Sender, payload: Uint8Array) => Message
  stats: () => Record<string, number>
} {
  const topicValidators = new Map<string, Validator>()
  const pubsub = { topicValidators, addEventListener: () => {}, removeEventListener: () => {}, subscribe: () => {} }
  // the per-author rate limit (peer-guard.spec.ts) lifted: this spec is about the replay memory behind it
  const service = gossipRouter({ now, rateLimits: { heartbeats: { perSecond: 1e9, burst: 1e9 } } })({
    pubsub: pubsub as any,
    logger: defaultLogger()
  }) as any
  service.start()
  const message = (s: Sender, payload: Uint8Array): Message => ({ type: 'unsigned', topic: TOPIC.heartbeats, data: sealEnvelope(s.key, s.peerId, DOMAIN.heartbeat, payload) })
  const replay = async (msg: Message): Promise<TopicValidatorResult> =>
    await (topicValidators.get(TOPIC.heartbeats) as Validator)(relay, msg)
  return {
    message,
    replay,
    validate: async (s, payload) => await replay(message(s, payload)),
    stats: () => service.stats()[TOPIC.heartbeats] ?? {}
  }
}

const payload = (i: number): Uint8Array => new TextEncoder().encode(`message ${i}`)

describe('gossip replay cache', function () {
  this.timeout(180_000)
  before(async () => { relay = (await sender()).peerId })

  it('red team: flooding 50,000 distinct valid junk messages cannot make an earlier valid message replayable within its lifetime', async () => {
    let clock = 1_000_000
    const r = router(() => clock)
    const honest = await sender()
    const earlier = r.message(honest, payload(-1))
    assert.equal(await r.replay(earlier), TopicValidatorResult.Accept)
    // 50 signers × 1000 messages, all accepted (under every bound), a minute apart in all
    const flooders = await Promise.all(Array.from({ length: 50 }, sender))
    let accepted = 0
    for (let i = 0; i < 50_000; i++) {
      if (await r.validate(flooders[i % 50], payload(i)) === TopicValidatorResult.Accept) accepted++
      if (i % 1000 === 0) clock += 1_000
    }
    assert.equal(accepted, 50_000)
    assert.equal(await r.replay(earlier), TopicValidatorResult.Ignore)
    assert.equal(r.stats()['ignore:replayed'], 1)
    // one signer alone is refused past its bound; the earlier message is still remembered
    const loud = await sender()
    const results = []
    for (let i = 0; i < 4200; i++) results.push(await r.validate(loud, payload(i)))
    const refused = results.filter(v => v === TopicValidatorResult.Ignore).length
    assert.equal(refused, 4200 - 4096)
    assert.equal(r.stats()['ignore:replay cache signer-full'], refused)
    assert.equal(await r.replay(earlier), TopicValidatorResult.Ignore)
    recordAttack({ issue: '12.4', attack: '50,000 distinct valid gossip messages (50 signers), then 4,200 from one signer, to evict an earlier message and replay it', got: `earlier message replayable: no (${accepted + 4096} remembered; ${refused} of the lone signer's refused)`, limit: 'kept until expiry (lifetime + skew); ≤ 4096 live per signer, 200 000 in all' })
  })

  it('forgets a message only once it has expired (the topic\'s lifetime plus the skew): memory is bounded by the lifetime, not by a count', async () => {
    let clock = 0
    const cache = new ReplayCache({ perSigner: 10, total: 20 }, () => clock)
    const retention = TOPIC_RETENTION_MS[TOPIC.heartbeats]
    for (let i = 0; i < 10; i++) cache.remember(`a${i}`, 'alice', retention)
    assert.equal(cache.check('a0', 'alice'), 'replayed')
    assert.equal(cache.check('a10', 'alice'), 'signer-full')
    for (let i = 0; i < 10; i++) cache.remember(`b${i}`, `s${i}`, retention)
    assert.equal(cache.check('c0', 'carol'), 'full')
    clock = retention - 1
    assert.equal(cache.check('a0', 'alice'), 'replayed', 'still within its lifetime')
    clock = retention
    assert.equal(cache.size, 0)
    assert.equal(cache.check('a0', 'alice'), 'fresh')
    assert.equal(cache.check('a10', 'alice'), 'fresh')
  })
})
