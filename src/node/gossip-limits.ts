/**
 * Local policy (not a wire rule; protocols/README.md "Gossip rate limits"): how many messages
 * a second, and in a burst, the gossip router validates from one author on each class of topic.
 * Limits are keyed by topic *class*, so per-shard topics of one class (e.g. bids split by
 * shard) share one allowance per author: sharding cannot multiply a flooder's rate.
 */
import { TOPIC } from '../../protocols/ids.js'
import type { RateLimit } from './token-bucket.js'

export type TopicClass = keyof typeof TOPIC | 'other'

/** The class of a topic: its own name, or the name of an idlegrid topic it extends (a shard). */
export function topicClass (topic: string): TopicClass {
  for (const [name, base] of Object.entries(TOPIC) as Array<[keyof typeof TOPIC, string]>) {
    if (topic === base || topic.startsWith(base + '/') || topic.startsWith(base + '-')) return name
  }
  return 'other'
}

/**
 * Per author. Sized for an honest busy peer with room to spare: a renter submitting a few
 * hundred jobs at once (each a job request and its awards), a provider bidding on every job of
 * a busy network, ledger entries for each job on both sides, heartbeats every second or more.
 * What is over is ignored, not rejected (gossip.ts says why).
 */
export const GOSSIP_RATE_LIMITS: Record<TopicClass, RateLimit> = {
  jobs: { perSecond: 20, burst: 200 },
  bids: { perSecond: 50, burst: 500 },
  awards: { perSecond: 20, burst: 200 },
  ledger: { perSecond: 50, burst: 500 },
  heartbeats: { perSecond: 2, burst: 20 },
  other: { perSecond: 10, burst: 100 }
}
