/**
 * Gossip on the wire (protocols/README.md §2 "Gossip topics"): messages carry no gossip
 * signature of their own (StrictNoSign), their ids are SHA-256(u32be(len(topic)) ‖ topic ‖
 * data), and a peer still sending StrictSign messages is refused and scored down.
 */
import * as assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { gossipsub } from '@chainsafe/libp2p-gossipsub'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { identify } from '@libp2p/identify'
import { tcp } from '@libp2p/tcp'
import { tls } from '@libp2p/tls'
import { yamux } from '@chainsafe/libp2p-yamux'
import { createLibp2p, type Libp2p } from 'libp2p'
import { SignedEnvelope } from '../../protocols/envelope.js'
import { DOMAIN, jobShardOf } from '../../protocols/ids.js'
import { sealEnvelope } from '../../src/identity/index.js'
import { gossipMessageId, type IdlegridNode } from '../../src/node/create-node.js'
import { startInProcessNetwork, waitFor, type InProcessNetwork, type InProcessOptions } from '../utils/index.js'
import type { Message } from '@libp2p/interface'

const TOPIC = jobShardOf(undefined)

describe('node: gossip on the wire (StrictNoSign, message ids)', function () {
  this.timeout(60_000)
  const nets: InProcessNetwork[] = []
  const plain: Libp2p[] = []

  after(async () => {
    await Promise.all(plain.splice(0).map(async n => { await n.stop() }))
    await Promise.all(nets.splice(0).map(async n => { await n.stop() }))
  })

  /** A bootstrap (the "seed", which joins TOPIC) and `renters` renters connected to it. */
  async function start (renters: number, extensions?: InProcessOptions['extensions']): Promise<InProcessNetwork> {
    const net = await startInProcessNetwork({ providers: 0, renters, extensions })
    nets.push(net)
    net.bootstrap.libp2p.services.pubsub.subscribe(TOPIC)
    return net
  }

  /** Waits until `node` has the seed as a gossipsub peer on TOPIC. */
  async function seesSeed (
    node: { services: { pubsub: { getSubscribers: (topic: string) => Array<{ equals: (p: unknown) => boolean }> } } },
    seed: IdlegridNode
  ): Promise<void> {
    await waitFor(() => node.services.pubsub.getSubscribers(TOPIC).some(p => p.equals(seed.peerId)), { timeoutMs: 20_000, what: 'the seed on the topic' })
  }

  /** Messages the node's gossipsub accepted on TOPIC, with the id it gave each. */
  function received (node: IdlegridNode): Array<{ msgId: string, msg: Message }> {
    const seen: Array<{ msgId: string, msg: Message }> = []
    node.libp2p.services.pubsub.addEventListener('gossipsub:message', (evt) => { if (evt.detail.msg.topic === TOPIC) seen.push(evt.detail) })
    return seen
  }

  it('a message id is SHA-256 of the topic\'s length (u32 big-endian), the topic and the data', () => {
    // computed apart from this code (Python's hashlib over struct.pack('>I', len(topic)) + topic + data)
    const id = gossipMessageId({ topic: '/idlegrid/3/jobs/eu/vram-24', data: Uint8Array.of(1, 2, 3) })
    assert.equal(Buffer.from(id).toString('hex'), '5999a15ea282e442851be1237a4b8b05c22c5ad83266f9e9a9bbf8eb69cddb6f')
    assert.notDeepEqual(gossipMessageId({ topic: '/idlegrid/3/jobs/eu/vram-2', data: Uint8Array.of(4, 1, 2, 3) }), id, 'the length keeps topic and data apart')
  })

  it('carries no author, sequence number or signature of its own, and has the specified id', async () => {
    const net = await start(1)
    const [seed, publisher] = [net.bootstrap, net.renters[0] as IdlegridNode]
    const seen = received(seed)
    await seesSeed(publisher.libp2p, seed)
    const data = sealEnvelope(publisher.privateKey, publisher.peerId, DOMAIN.jobRequest, Uint8Array.of(1, 2, 3))
    await publisher.libp2p.services.pubsub.publish(TOPIC, data)
    await waitFor(() => seen.length > 0, { timeoutMs: 10_000, what: 'the seed to accept the message' })
    const [{ msgId, msg }] = seen
    assert.equal(msg.type, 'unsigned')
    assert.deepEqual(Object.keys(msg).sort(), ['data', 'topic', 'type'])
    // gossipsub spells ids in base64 without padding
    assert.equal(msgId, Buffer.from(gossipMessageId({ topic: TOPIC, data })).toString('base64').replace(/=+$/, ''))
    assert.equal(seed.libp2p.services.gossip.stats()[TOPIC]?.accept, 1)
  })

  it('red team: a peer still signing its gossip (StrictSign, the version 2 topics\' rule) is refused and scored down', async () => {
    const seed = (await start(0)).bootstrap
    const seen = received(seed)
    const oldKey = await generateKeyPair('Ed25519')
    const old = await createLibp2p({
      privateKey: oldKey,
      addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
      transports: [tcp()],
      connectionEncrypters: [tls()],
      streamMuxers: [yamux()],
      services: { identify: identify(), pubsub: gossipsub({ globalSignaturePolicy: 'StrictSign', allowPublishToZeroTopicPeers: true }) }
    })
    plain.push(old)
    old.services.pubsub.subscribe(TOPIC)
    await old.dial(seed.libp2p.getMultiaddrs()[0])
    await seesSeed(old, seed)
    // a valid envelope inside: only the gossip signature around it is wrong now
    await old.services.pubsub.publish(TOPIC, sealEnvelope(oldKey, old.peerId, DOMAIN.jobRequest, Uint8Array.of(7)))
    const score = (): number =>
      (seed.libp2p.services.pubsub as unknown as { getScore(id: string): number }).getScore(old.peerId.toString())
    await waitFor(() => score() < 0, { timeoutMs: 10_000, what: `a negative gossipsub score for the old peer (now ${score()})` })
    assert.equal(seen.length, 0, 'the signed message was not accepted')
    assert.equal(seed.libp2p.services.gossip.stats()[TOPIC], undefined, 'gossipsub refused it before any idlegrid check')
  })

  it('red team: forgeries naming an honest author do not spend its allowance (the rate limit keys on the verified signer)', async () => {
    // the seed allows 2 job requests per author, hardly refilled: under an unverified key, 3 forgeries would use it up
    const net = await start(2, (role) => role === 'bootstrap' ? { gossipRateLimits: { jobs: { perSecond: 0.001, burst: 2 } } } : {})
    const [seed, honest, attacker] = [net.bootstrap, net.renters[0] as IdlegridNode, net.renters[1] as IdlegridNode]
    const seen = received(seed)
    await seesSeed(honest.libp2p, seed)
    await seesSeed(attacker.libp2p, seed)
    // three envelopes signed "by" the honest renter with random signatures: under the graylist (-80) at -20 each
    for (let i = 0; i < 3; i++) {
      await attacker.libp2p.services.pubsub.publish(
        TOPIC,
        SignedEnvelope.encode({
          domain: DOMAIN.jobRequest,
          signer: honest.peerId.toMultihash().bytes,
          payload: Uint8Array.of(i),
          signature: randomBytes(64)
        })
      )
    }
    const stats = (): Record<string, number> => seed.libp2p.services.gossip.stats()[TOPIC] ?? {}
    // under a key taken before the signature check, the third would be ignored for the rate instead
    await waitFor(() => stats()['reject:bad-signature'] === 3, { timeoutMs: 10_000, what: 'the seed to reject all three forgeries' }).catch((err: Error) => { throw new Error(`${err.message}: ${JSON.stringify(stats())}`) })
    await honest.libp2p.services.pubsub.publish(
      TOPIC,
      sealEnvelope(honest.privateKey, honest.peerId, DOMAIN.jobRequest, Uint8Array.of(9))
    )
    await waitFor(() => seen.length === 1, { timeoutMs: 10_000, what: 'the honest author\'s message accepted' }).catch((err: Error) => { throw new Error(`${err.message}: ${JSON.stringify(stats())}`) })
    assert.equal(stats()['ignore:rate limit'], undefined)
  })
})
