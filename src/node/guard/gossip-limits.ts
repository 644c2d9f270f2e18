/**
 * Local policy (not a wire rule; protocols/README.md "Gossip rate limits"): how many messages
 * a second, and in a burst, the gossip router validates from one author on each class of topic.
 * Limits are keyed by topic *class*, so per-shard topics of one class (e.g. bids split by
 * shard) share one allowance per author: sharding cannot multiply a flooder's rate.
 */
import { JOB_TOPIC_PREFIX, TOPIC } from '../../../protocols/ids.js'
import type { RateLimit } from './token-bucket.js'

/** Job shards are one class ("jobs"); every other idlegrid topic is its own class. */
export type TopicClass = 'jobs' | keyof typeof TOPIC | 'other'

/** The class of a topic: "jobs" for every job shard, else its own name or the idlegrid topic it extends. */
export function topicClass (topic: string): TopicClass {
  if (topic.startsWith(JOB_TOPIC_PREFIX)) return 'jobs'
  for (const [name, base] of Object.entries(TOPIC) as Array<[keyof typeof TOPIC, string]>) {
    if (topic === base || topic.startsWith(base + '/') || topic.startsWith(base + '-')) return name
  }
  return 'other'
}

/**
 * Per author. Sized for an honest busy peer with room to spare: a renter submitting a hundred
 * jobs at once (each a job request and its awards), ledger entries for each job on both sides, heartbeats every
 * second or more. Every message validated costs a signature check and is forwarded to the
 * mesh: a flooder's burst is that cost at every node it reaches, so bursts stay near 100.
 * What is over is ignored, not rejected (gossip.ts says why).
 */
export const GOSSIP_RATE_LIMITS: Record<TopicClass, RateLimit> = {
  jobs: { perSecond: 10, burst: 100 },
  ledger: { perSecond: 50, burst: 200 },
  // also the heartbeat stream's bound per sending peer (heartbeat-stream.ts): the topic is off by default
  heartbeats: { perSecond: 2, burst: 10 },
  other: { perSecond: 10, burst: 100 }
}
