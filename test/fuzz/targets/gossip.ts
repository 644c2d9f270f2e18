/**
 * Every gossip topic through the node's real gossip router (src/node/gossip.ts) with the real
 * payload validators installed: market (job requests on their shard; bids and awards travel on
 * streams since version 2, see bid-stream.ts), heartbeats and the ledger (whose
 * validator ingests into a real LevelDB store). Two modes per topic:
 *   raw     the mutated bytes are the gossip message (envelope layer: size, domain, signer, signature)
 *   signed  the mutated bytes are the payload, sealed by the fuzzer with the sender's real key,
 *           so every input reaches the payload validator
 * A validator answers with a verdict and must never throw; a "validator error" verdict (the
 * market's catch-all for an untyped throw) counts as a crash too.
 */
import { defaultLogger } from '@libp2p/logger'
import type { Message } from '@libp2p/interface'
import { jobShardOf, TOPIC, TOPIC_DOMAIN, TOPIC_MAX_BYTES, type TopicName } from '../../../protocols/ids.js'
import { sealEnvelope } from '../../../src/identity/index.js'
import { LedgerGossip } from '../../../src/ledger/sync/gossip.js'
import { LedgerIngest } from '../../../src/ledger/ingest/ingest.js'
import { marketValidation } from '../../../src/market/shared/validation.js'
import { gossipRouter, type GossipRouter, type GossipVerdict } from '../../../src/node/gossip.js'
import { GOSSIP_RATE_LIMITS } from '../../../src/node/guard/gossip-limits.js'
import { heartbeatService } from '../../../src/node/presence/heartbeat.js'
import { tempDir } from '../../utils/wait.js'
import { fixtures, type Fixtures } from '../fixtures.js'
import { bytesInput } from '../mutate.js'
import { NotAccepted, VerdictError, type FuzzTarget, type TargetFactory } from '../target.js'
import type { Signer } from '../../../src/ledger/dev.js'

interface NodeUnderTest {
  router: GossipRouter
  check: (topic: TopicName, msg: Message) => Promise<GossipVerdict>
  close: () => Promise<void>
}

/** A gossip router with every idlegrid validator, on a stand-in pubsub (only its validator table is used). */
async function nodeUnderTest (fx: Fixtures): Promise<NodeUnderTest> {
  const logger = defaultLogger()
  const pubsub: any = {
    topicValidators: new Map(),
    addEventListener () {},
    removeEventListener () {},
    subscribe () {},
    publish: async () => ({ recipients: [] })
  }
  // every input validated: the per-author rate limit would otherwise ignore most of them unchecked
  const rateLimits = Object.fromEntries(Object.keys(GOSSIP_RATE_LIMITS).map(c => [c, { perSecond: 1e9, burst: 1e9 }]))
  const router = gossipRouter({ rateLimits })({ pubsub, logger })
  ;(router as any).start()
  ;(marketValidation()({ gossip: router, pubsub }) as any).start()
  const me = fx.other
  // the legacy topic's validator (off by default; a node that opts in runs the same heartbeat rules as the stream)
  const streamSide: any = {
    registrar: { handle: async () => {}, unhandle: async () => {} },
    connectionManager: { getConnections: () => [] },
    events: new EventTarget()
  }
  await (heartbeatService({ role: 'renter', intervalMs: 10_000, privateKey: me.key, gossip: true })({ peerId: me.peerId, pubsub, gossip: router, logger, ...streamSide }) as any).start()
  const dir = await tempDir('idlegrid-fuzz-gossip-')
  const store = await LedgerIngest.open(dir.path, { privateKey: me.key, peerId: me.peerId, syncWrites: false })
  // part of the provider's feed is held, so mutated later entries meet a chain (and forks of it)
  await store.ingest(fx.feeds.provider.slice(0, 2).map(r => r.envelope))
  const abort = new AbortController()
  new LedgerGossip({ pubsub: () => pubsub, gossip: () => router, ledger: () => store, signal: abort.signal, onBehind: () => {}, log: logger.forComponent('fuzz') }).start()
  return {
    router,
    // the router's own check, so that a throw anywhere in it surfaces (validate() would turn it into a reject)
    check: async (topic, msg) => await (router as any).check(topic, me.peerId, msg),
    close: async () => { abort.abort(); await store.close(); await dir.cleanup() }
  }
}

function checkVerdict (verdict: GossipVerdict): void {
  if (verdict == null || !['accept', 'ignore', 'reject'].includes(verdict.action)) throw new VerdictError(`not a verdict: ${JSON.stringify(verdict)}`)
  if (verdict.action !== 'accept' && /validator (error|failed)/.test(verdict.reason)) throw new VerdictError(verdict.reason)
}

/** the shard of the fixtures' job request (test/fuzz/fixtures.ts: residency eu, 40 GiB) */
const JOB_SHARD = jobShardOf({ residency: 'eu', minVramMib: 40_960 })

const TOPICS: Array<[string, TopicName, string]> = [
  ['jobs', JOB_SHARD, 'JobRequest'],
  ['heartbeats', TOPIC.heartbeats, 'Heartbeat'],
  ['ledger', TOPIC.ledger, 'LedgerEntry']
]

/** Who signs each topic's seeds (the gossip sender, except on the relayed ledger topic). */
function senderOf (fx: Fixtures, topic: TopicName): Signer {
  return topic === JOB_SHARD ? fx.renter : fx.provider
}

function gossipTarget ([label, topic, message]: typeof TOPICS[number], mode: 'raw' | 'signed'): TargetFactory {
  const name = `gossip-${mode}/${label}`
  return {
    name,
    build: async () => {
      const fx = await fixtures()
      const node = await nodeUnderTest(fx)
      const sender = senderOf(fx, topic)
      const domain = TOPIC_DOMAIN[topic]
      const seeds = mode === 'raw' ? fx.envelopes[domain] : fx.payloads[message]
      return {
        name,
        what: `gossip router + ${label} validator (${mode === 'raw' ? 'mutated envelope' : 'mutated payload, re-signed'})`,
        typed: [NotAccepted],
        arbitrary: bytesInput(seeds, { maxBytes: TOPIC_MAX_BYTES[topic] + 64 }),
        async: true,
        weight: mode === 'raw' ? 1 : (topic === TOPIC.ledger ? 2 : 3),
        run: async (input) => {
          const data = mode === 'raw' ? input : sealEnvelope(sender.key, sender.peerId, domain, input)
          const msg = { type: 'unsigned', topic, data } satisfies Message
          const verdict = await node.check(topic, msg)
          checkVerdict(verdict)
          if (verdict.action !== 'accept') throw new NotAccepted(verdict.action, verdict.reason)
        },
        close: node.close
      } satisfies FuzzTarget
    }
  }
}

export const gossipTargets: TargetFactory[] = [
  ...TOPICS.map(t => gossipTarget(t, 'signed')),
  ...TOPICS.map(t => gossipTarget(t, 'raw'))
]
