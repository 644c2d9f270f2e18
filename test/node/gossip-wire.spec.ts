/**
 * Gossip on the wire (protocols/README.md §2 "Gossip topics"): messages carry no gossip
 * signature of their own (StrictNoSign), their ids are SHA-256(u32be(len(topic)) ‖ topic ‖
 * data), and a peer still sending StrictSign messages is refused and scored down.
 */
import * as assert from 'node:assert/strict'
import { join } from 'node:path'
import { gossipsub } from '@chainsafe/libp2p-gossipsub'
import { identify } from '@libp2p/identify'
import { tcp } from '@libp2p/tcp'
import { tls } from '@libp2p/tls'
import { yamux } from '@chainsafe/libp2p-yamux'
import { createLibp2p, type Libp2p } from 'libp2p'
import { DOMAIN, jobShardOf } from '../../protocols/ids.js'
import { resolveConfig, type Role } from '../../src/config/config.js'
import { sealEnvelope } from '../../src/identity/index.js'
import { createNode, gossipMessageId, type IdlegridNode } from '../../src/node/create-node.js'
import { tempDir, waitFor } from '../utils/index.js'
import type { Message } from '@libp2p/interface'

const TOPIC = jobShardOf(undefined)

describe('node: gossip on the wire (StrictNoSign, message ids)', function () {
  this.timeout(60_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  const nodes: IdlegridNode[] = []
  const plain: Libp2p[] = []

  before(async () => { dir = await tempDir('idlegrid-gossip-wire-') })
  after(async () => {
    await Promise.all(plain.splice(0).map(async n => { await n.stop() }))
    await Promise.all(nodes.splice(0).map(async n => { await n.stop() }))
    await dir.cleanup()
  })

  async function start (role: Role, bootstrap?: IdlegridNode): Promise<IdlegridNode> {
    const config = resolveConfig({
      role,
      flags: { dataDir: join(dir.path, `${role}-${nodes.length}`), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: bootstrap == null ? [] : [bootstrap.libp2p.getMultiaddrs()[0]?.toString() as string] }
    })
    const node = await createNode(config)
    nodes.push(node)
    return node
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
    const seed = await start('bootstrap')
    const publisher = await start('renter', seed)
    const seen = received(seed)
    seed.libp2p.services.pubsub.subscribe(TOPIC)
    await waitFor(() => publisher.libp2p.services.pubsub.getSubscribers(TOPIC).some(p => p.equals(seed.peerId)), { timeoutMs: 20_000, what: 'the publisher to see the seed on the topic' })
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
    const seed = await start('bootstrap')
    const seen = received(seed)
    seed.libp2p.services.pubsub.subscribe(TOPIC)
    const old = await createLibp2p({
      addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
      transports: [tcp()],
      connectionEncrypters: [tls()],
      streamMuxers: [yamux()],
      services: { identify: identify(), pubsub: gossipsub({ globalSignaturePolicy: 'StrictSign', allowPublishToZeroTopicPeers: true }) }
    })
    plain.push(old)
    old.services.pubsub.subscribe(TOPIC)
    await old.dial(seed.libp2p.getMultiaddrs()[0])
    await waitFor(() => old.services.pubsub.getSubscribers(TOPIC).some(p => p.equals(seed.peerId)), { timeoutMs: 20_000, what: 'the old peer to see the seed on the topic' })
    // a valid envelope inside: only the gossip signature around it is wrong now
    const key = old.services.pubsub as unknown as { components: { privateKey: Parameters<typeof sealEnvelope>[0] } }
    await old.services.pubsub.publish(TOPIC, sealEnvelope(key.components.privateKey, old.peerId, DOMAIN.jobRequest, Uint8Array.of(7)))
    const score = (): number => (seed.libp2p.services.pubsub as unknown as { getScore(id: string): number }).getScore(old.peerId.toString())
    await waitFor(() => score() < 0, { timeoutMs: 10_000, what: `a negative gossipsub score for the old peer (now ${score()})` })
    assert.equal(seen.length, 0, 'the signed message was not accepted')
    assert.equal(seed.libp2p.services.gossip.stats()[TOPIC], undefined, 'gossipsub refused it before any idlegrid check')
  })
})
