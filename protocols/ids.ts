/**
 * Every protocol id, gossip topic, DHT key prefix and signing domain idlegrid uses on the
 * wire, in one place. protocols/README.md documents each of them for other implementations.
 */

/** Prefix of every signed message: the signature covers SIGNING_PREFIX + domain + 0x00 + payload. */
export const SIGNING_PREFIX = 'idlegrid/v1/'

export const PROTOCOL = {
  /** kad-dht, run on its own protocol so idlegrid never joins a public DHT */
  kad: '/idlegrid/kad/1.0.0',
  /** why-not-bid request/response */
  explain: '/idlegrid/explain/1.0.0',
  /** job transfer and execution stream */
  job: '/idlegrid/job/1.0.0',
  /**
   * the same stream where the provider answers a Start with what its input cache holds (Held), and
   * the renter sends only the rest
   */
  jobCached: '/idlegrid/job/1.1.0',
  /** award acceptance */
  accept: '/idlegrid/accept/1.0.0',
  /** a provider's bid, straight to the renter named in the job request (replaces the bids topic) */
  bid: '/idlegrid/bid/1.0.0',
  /** the bids an award was chosen from, served by its renter to anyone holding the award */
  bidsAudit: '/idlegrid/bids-audit/1.0.0',
  /**
   * ledger head exchange and range pulls (2: only equivocation proofs, receipt and feed-time rules;
   * 3: USAGE bodies; 4: chain-2 entries, ranges under one signature)
   */
  ledgerSync: '/idlegrid/ledger/sync/4.0.0',
  /** a provider's own signed capability record, fetched from it directly after an index lookup */
  capability: '/idlegrid/cap/1.0.0',
  /** HTTP requests to a service replica (a lease), one after another on a stream, and their streamed answers */
  serve: '/idlegrid/serve/1.1.0',
  /** one request per stream; still served for 1.0.0 gateways (a 1.1.0 provider's handler is the same) */
  serveV1: '/idlegrid/serve/1.0.0',
  /** a lease's usage over an interval: the provider proposes, the renter countersigns its own figures */
  usage: '/idlegrid/usage/1.0.0',
  /** a node's signed heartbeat, pushed to each connected peer (replaces the heartbeats topic, now legacy and off) */
  heartbeat: '/idlegrid/heartbeat/1.0.0',
  /** two peers joined only through a relay agree on a direct TCP connection: connection reversal or a hole punch */
  punch: '/idlegrid/punch/1.0.0',
  /** AutoNAT (libp2p's v1 messages): "dial this public address of mine back" (src/node/connectivity/autonat.ts) */
  autonat: '/idlegrid/autonat/1.0.0'
} as const

export const TOPIC = {
  /**
   * legacy, off by default; 4: gossip without its own signature (StrictNoSign), entries as
   * PROTOCOL.ledgerSync 3.0.0 carries them
   */
  ledger: '/idlegrid/5/ledger',
  /**
   * legacy: off by default (heartbeats go to connected peers on PROTOCOL.heartbeat);
   * --heartbeat-gossip joins it. 2: StrictNoSign
   */
  heartbeats: '/idlegrid/2/heartbeats'
} as const

/**
 * Job requests travel on shard topics, JOB_TOPIC_PREFIX + zone + '/' + VRAM class
 * (protocols/README.md §2 "Job shards"): a job goes to the one shard its hard constraints
 * (residency, minimum VRAM) name; a provider subscribes to the shards it can serve. Bids go
 * straight to the renter (PROTOCOL.bid) and awards to the winner (PROTOCOL.accept): there is
 * no bids or awards topic in version 2.
 */
export const JOB_TOPIC_PREFIX = '/idlegrid/3/jobs/'
// 3: gossip without its own signature (StrictNoSign): the envelope signs every message
/** Residency zones with a shard of their own; "any" carries jobs without residency, "other" every other zone. */
export const SHARD_ZONES = ['any', 'eu', 'us', 'ap', 'other'] as const
/**
 * Lower bounds of the VRAM classes, GiB ("N GB" counts from 93 % of N GiB, as job specs and the
 * DHT's VRAM index do).
 */
export const VRAM_CLASSES_GIB = [0, 16, 24, 40, 48, 80] as const
/** Most job shards a provider subscribes to: its zone and "any", times every VRAM class. */
export const MAX_PROVIDER_SHARDS = 2 * VRAM_CLASSES_GIB.length

export type ShardZone = typeof SHARD_ZONES[number]
export type JobShardTopic = `/idlegrid/3/jobs/${string}/vram-${number}`

export function jobShardTopic (zone: ShardZone, vramClassGib: number): JobShardTopic {
  return `${JOB_TOPIC_PREFIX}${zone}/vram-${vramClassGib}` as JobShardTopic
}

/** Every job shard topic: SHARD_ZONES × VRAM_CLASSES_GIB (30). */
export const JOB_SHARD_TOPICS: readonly JobShardTopic[] = SHARD_ZONES.flatMap(z =>
  VRAM_CLASSES_GIB.map(g => jobShardTopic(z, g))
)

/** The zone of a residency: "" → any, a zone with a shard → itself, anything else → other. */
export function shardZoneOf (residency: string): ShardZone {
  if (residency === '') return 'any'
  return (SHARD_ZONES as readonly string[]).includes(residency) && residency !== 'any' && residency !== 'other' ? residency as ShardZone : 'other'
}

function vramClassMib (gib: number): number {
  return Math.floor(gib * 1024 * 93 / 100)
}

/** The VRAM class (GiB) of a job's min_vram_mib: the highest class whose lower bound it reaches. */
export function vramClassOf (minVramMib: number): number {
  let cls: number = VRAM_CLASSES_GIB[0]
  for (const g of VRAM_CLASSES_GIB) if (vramClassMib(g) <= minVramMib) cls = g
  return cls
}

/** The one shard a job request is published on, from its normalised hard constraints. */
export function jobShardOf (constraints: { residency: string, minVramMib: number } | undefined): JobShardTopic {
  return jobShardTopic(shardZoneOf(constraints?.residency ?? ''), vramClassOf(constraints?.minVramMib ?? 0))
}

/**
 * The shards a provider subscribes to: "any" and its own residency's zone, each with every
 * VRAM class its largest GPU reaches. Every job it can serve is on one of them (at most
 * MAX_PROVIDER_SHARDS); matching (src/market/provider/bid-declines.ts) stays the judge of each job.
 */
export function providerShards (residency: string, maxVramMib: number): JobShardTopic[] {
  const zones = [...new Set<ShardZone>(['any', shardZoneOf(residency)])]
  const classes = VRAM_CLASSES_GIB.filter(g => vramClassMib(g) <= maxVramMib)
  return zones.flatMap(z => classes.map(g => jobShardTopic(z, g)))
}

export type GlobalTopic = typeof TOPIC[keyof typeof TOPIC]
export type TopicName = GlobalTopic | JobShardTopic
/**
 * The legacy global topics: each is off by default, joined only by a node that opts in (job shards
 * are joined by role: providers by capability, bootstraps all).
 */
export const GLOBAL_TOPICS: readonly GlobalTopic[] = Object.values(TOPIC)
export const ALL_TOPICS: readonly TopicName[] = [...GLOBAL_TOPICS, ...JOB_SHARD_TOPICS]

export function isJobShardTopic (topic: string): topic is JobShardTopic {
  return (JOB_SHARD_TOPICS as readonly string[]).includes(topic)
}

/** Signing domains: one per signed message type. */
export const DOMAIN = {
  heartbeat: 'heartbeat',
  capability: 'capability',
  jobRequest: 'job-request',
  bid: 'bid',
  award: 'award',
  accept: 'accept',
  decline: 'decline',
  attestation: 'attestation',
  receipt: 'receipt',
  ledgerEntry: 'ledger-entry',
  fraudProof: 'fraud-proof',
  /** a UsageStatement, signed by both its provider and its renter (CoSignedUsage) */
  usage: 'usage',
  /** a TrustList, signed by a network operator's key (protocols/trust.proto) */
  trustList: 'trust-list'
} as const

export type Domain = typeof DOMAIN[keyof typeof DOMAIN]

/** The one domain each topic carries; a message signed for another domain is rejected. */
export const TOPIC_DOMAIN: Record<TopicName, Domain> = {
  [TOPIC.ledger]: DOMAIN.ledgerEntry,
  [TOPIC.heartbeats]: DOMAIN.heartbeat,
  ...Object.fromEntries(JOB_SHARD_TOPICS.map(t => [t, DOMAIN.jobRequest]))
}

/** Upper bound, in bytes, of one gossip message on each topic (checked before decoding). */
export const TOPIC_MAX_BYTES: Record<TopicName, number> = {
  [TOPIC.ledger]: 64 * 1024,
  [TOPIC.heartbeats]: 2 * 1024,
  ...Object.fromEntries(JOB_SHARD_TOPICS.map(t => [t, 16 * 1024]))
}

/** DHT record key of a provider's capability record: CAPABILITY_KEY_PREFIX + peerId (base58). */
export const CAPABILITY_KEY_PREFIX = '/idlegrid/cap/'

/** DHT index keys are CIDs (raw codec, sha2-256) of INDEX_KEY_PREFIX + dimension + '/' + value. */
export const INDEX_KEY_PREFIX = 'idlegrid/v1/'
