import { serviceCapabilities, TopicValidatorResult } from '@libp2p/interface'
import { isEnvelopeError, openEnvelope, type OpenedEnvelope } from '../identity/index.js'
import { ALL_TOPICS, DOMAIN, TOPIC, TOPIC_DOMAIN, TOPIC_MAX_BYTES, type TopicName } from '../../protocols/ids.js'
import { MAX_CLOCK_SKEW_MS, MAX_LIFETIME_MS } from '../../protocols/codec.js'
import { GOSSIP_RATE_LIMITS, topicClass, type TopicClass } from './guard/gossip-limits.js'
import { ReplayCache, type ReplayCacheLimits } from './guard/replay-cache.js'
import { TokenBuckets, type RateLimit } from './guard/token-bucket.js'
import type { PeerGuard } from './guard/peer-guard.js'
import type { GossipsubEvents } from '@chainsafe/libp2p-gossipsub'
import type { ComponentLogger, Logger, Message, PeerId, PubSub, Startable } from '@libp2p/interface'

/**
 * What a topic validator decides: ACCEPT, IGNORE ("not useful now": duplicates, stale) or
 * REJECT ("the sender misbehaved": gossipsub scores it down).
 */
export type GossipVerdict =
  | { action: 'accept' }
  | { action: 'ignore' | 'reject', reason: string }

export const ACCEPT: GossipVerdict = { action: 'accept' }
export const ignore = (reason: string): GossipVerdict => ({ action: 'ignore', reason })
export const reject = (reason: string): GossipVerdict => ({ action: 'reject', reason })

/**
 * Checks a verified envelope's payload for one topic (decode with bounds, expiry, replay…);
 * `author` is the envelope's signer.
 */
export type PayloadValidator = (envelope: OpenedEnvelope, author: PeerId) => GossipVerdict | Promise<GossipVerdict>
export type GossipHandler = (envelope: OpenedEnvelope, author: PeerId) => void

export interface GossipRouter {
  /** the payload check of `topic` (one per topic; later registrations replace earlier ones) */
  setValidator(topic: TopicName, validator: PayloadValidator): void
  /** called with every accepted message on `topic`, after validation */
  onMessage(topic: TopicName, handler: GossipHandler): () => void
  /** counts of verdicts per topic and reason, for status and tests */
  stats(): Record<string, Record<string, number>>
}

interface GossipRouterComponents {
  pubsub: PubSub<GossipsubEvents>
  logger: ComponentLogger
}

/**
 * How long an accepted message is remembered (replay-cache.ts): the longest it can stay
 * valid. Ledger entries never expire, but a replayed one is a duplicate the store ignores:
 * the router remembers them only briefly, to skip re-checking a burst of copies.
 */
export const TOPIC_RETENTION_MS: Record<TopicName, number> = Object.fromEntries(
  ALL_TOPICS.map(topic => [
    topic,
    topic === TOPIC.ledger
      ? 2 * 60_000
      : TOPIC_DOMAIN[topic] === DOMAIN.heartbeat
        ? MAX_LIFETIME_MS.heartbeat + MAX_CLOCK_SKEW_MS
        : MAX_LIFETIME_MS.jobRequest + MAX_CLOCK_SKEW_MS
  ])
) as Record<TopicName, number>

export interface GossipRouterInit {
  /** the clock (tests move it) */
  now?: () => number
  replayLimits?: Partial<ReplayCacheLimits>
  /** messages validated per author and topic class (gossip-limits.ts has the defaults) */
  rateLimits?: Partial<Record<TopicClass, RateLimit>>
  /** authors whose rate buckets are kept (least recently seen dropped past it; default 10 000) */
  maxRateKeys?: number
  /** told of authors over their rate limit, and strikes the ones that flood us directly */
  guard?: PeerGuard
}

/** The gossip router's name in a node's services, and what it provides to `serviceDependencies`. */
export const GOSSIP_SERVICE = 'gossip'
export const GOSSIP_CAPABILITY = '@idlegrid/gossip'

class GossipRouterService implements GossipRouter, Startable {
  readonly [Symbol.toStringTag] = GOSSIP_CAPABILITY
  readonly [serviceCapabilities]: string[] = [GOSSIP_CAPABILITY]
  private readonly pubsub: PubSub<GossipsubEvents>
  private readonly log: Logger
  private readonly validators = new Map<TopicName, PayloadValidator>()
  private readonly handlers = new Map<TopicName, Set<GossipHandler>>()
  private readonly seen: ReplayCache
  private readonly rates: TokenBuckets
  private readonly rateLimits: Record<TopicClass, RateLimit>
  private readonly guard?: PeerGuard
  /** envelopes opened during validation, handed to handlers without verifying twice */
  private readonly accepted = new WeakMap<Message, OpenedEnvelope>()
  private readonly counts: Record<string, Record<string, number>> = {}
  private readonly onPubsubMessage = (evt: CustomEvent<Message>): void => { this.deliver(evt.detail) }

  constructor (components: GossipRouterComponents, init: GossipRouterInit = {}) {
    this.pubsub = components.pubsub
    this.log = components.logger.forComponent('idlegrid:gossip')
    this.seen = new ReplayCache(init.replayLimits, init.now)
    this.rates = new TokenBuckets(init.maxRateKeys ?? 10_000, init.now)
    this.rateLimits = { ...GOSSIP_RATE_LIMITS, ...init.rateLimits }
    this.guard = init.guard
  }

  start (): void {
    for (const topic of ALL_TOPICS) {
      this.pubsub.topicValidators.set(topic, async (from, msg) => await this.validate(topic, from, msg))
    }
    this.pubsub.addEventListener('message', this.onPubsubMessage)
  }

  // The router joins no topic itself: job shard topics are joined by the market services
  // (providers: those they serve), the legacy ledger and heartbeat topics only by a ledger or
  // heartbeat service that turns them on (both off by default: issue 15 item 3)

  stop (): void {
    this.pubsub.removeEventListener('message', this.onPubsubMessage)
    for (const topic of ALL_TOPICS) this.pubsub.topicValidators.delete(topic)
  }

  setValidator (topic: TopicName, validator: PayloadValidator): void {
    this.validators.set(topic, validator)
  }

  onMessage (topic: TopicName, handler: GossipHandler): () => void {
    let set = this.handlers.get(topic)
    if (set == null) this.handlers.set(topic, set = new Set())
    set.add(handler)
    return () => set.delete(handler)
  }

  stats (): Record<string, Record<string, number>> {
    return structuredClone(this.counts)
  }

  private async validate (topic: TopicName, propagationSource: PeerId, msg: Message): Promise<TopicValidatorResult> {
    const verdict = await this.check(topic, propagationSource, msg).catch((err: Error): GossipVerdict => reject(`validator failed: ${err.message}`))
    const key = verdict.action === 'accept' ? 'accept' : `${verdict.action}:${verdict.reason}`
    const topicCounts = this.counts[topic] ??= {}
    topicCounts[key] = (topicCounts[key] ?? 0) + 1
    if (verdict.action !== 'accept') {
      this.log('%s %s from %p: %s', verdict.action, topic, propagationSource, verdict.reason)
    }
    return verdict.action === 'accept'
      ? TopicValidatorResult.Accept
      : verdict.action === 'ignore' ? TopicValidatorResult.Ignore : TopicValidatorResult.Reject
  }

  private async check (topic: TopicName, propagationSource: PeerId, msg: Message): Promise<GossipVerdict> {
    if (msg.data.byteLength > TOPIC_MAX_BYTES[topic]) return reject(`oversized (${msg.data.byteLength} > ${TOPIC_MAX_BYTES[topic]} bytes)`)
    // StrictNoSign (protocols/README.md §2): the envelope's signature is the message's only
    // one, and gossipsub refuses a message that carries its own author, sequence number or signature
    if (msg.type !== 'unsigned') return reject('signed gossip message')
    // the one signature check comes first: the author it proves is the rate limit's key, so
    // nobody can spend another author's allowance with forgeries
    let envelope: OpenedEnvelope
    try {
      envelope = openEnvelope(msg.data, { domain: TOPIC_DOMAIN[topic], maxBytes: TOPIC_MAX_BYTES[topic] })
    } catch (err) {
      if (isEnvelopeError(err)) return reject(err.reason)
      throw err
    }
    const author = envelope.signer
    const cls = topicClass(topic)
    const bucket = `${cls}:${author.toString()}`
    if (!this.rates.take(bucket, this.rateLimits[cls])) {
      this.guard?.messageOverLimit(author, author.equals(propagationSource), cls)
      // IGNORE, not REJECT: REJECT scores down the peer that delivered the message, which may
      // be an honest relay whose own bucket for this author was not empty; the message itself
      // may be valid. The author, when it floods us directly, is struck by the guard instead.
      return ignore('rate limit')
    }
    const id = signatureKey(envelope)
    const seen = this.seen.check(id, author.toString())
    if (seen === 'replayed') {
      // a replay costs the author nothing: it may be a third party's, and must not spend the author's allowance
      this.rates.refund(bucket, this.rateLimits[cls])
      return ignore('replayed')
    }
    // remembered until they expire, so a flood is refused rather than allowed to push them out
    if (seen !== 'fresh') return ignore(`replay cache ${seen}`)
    const validator = this.validators.get(topic)
    const verdict = validator == null ? ACCEPT : await validator(envelope, author)
    if (verdict.action === 'accept') {
      this.seen.remember(id, author.toString(), TOPIC_RETENTION_MS[topic])
      this.accepted.set(msg, envelope)
    }
    return verdict
  }

  private deliver (msg: Message): void {
    // gossipsub hands the validated message object to 'message' listeners
    const envelope = this.accepted.get(msg)
    const handlers = this.handlers.get(msg.topic as TopicName)
    if (envelope == null || handlers == null) return
    for (const handler of handlers) {
      try {
        handler(envelope, envelope.signer)
      } catch (err: any) {
        this.log.error('handler on %s failed: %e', msg.topic, err)
      }
    }
  }
}

function signatureKey (envelope: OpenedEnvelope): string {
  return Buffer.from(envelope.signature).toString('base64')
}

/** The gossip validation and dispatch service: one validator per idlegrid topic. */
export function gossipRouter (init: GossipRouterInit = {}): (components: GossipRouterComponents) => GossipRouter {
  return (components) => new GossipRouterService(components, init)
}
