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
  /** award acceptance */
  accept: '/idlegrid/accept/1.0.0',
  /** ledger head exchange and range pulls (2: only equivocation proofs, receipt and feed-time rules) */
  ledgerSync: '/idlegrid/ledger/sync/2.0.0',
  /** one HTTP request to a service replica (a lease) and its streamed answer */
  serve: '/idlegrid/serve/1.0.0'
} as const

export const TOPIC = {
  jobs: '/idlegrid/1/jobs',
  bids: '/idlegrid/1/bids',
  awards: '/idlegrid/1/awards',
  /** 2: see PROTOCOL.ledgerSync */
  ledger: '/idlegrid/2/ledger',
  heartbeats: '/idlegrid/1/heartbeats'
} as const

export type TopicName = typeof TOPIC[keyof typeof TOPIC]
export const ALL_TOPICS: readonly TopicName[] = Object.values(TOPIC)

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
  fraudProof: 'fraud-proof'
} as const

export type Domain = typeof DOMAIN[keyof typeof DOMAIN]

/** The one domain each topic carries; a message signed for another domain is rejected. */
export const TOPIC_DOMAIN: Record<TopicName, Domain> = {
  [TOPIC.jobs]: DOMAIN.jobRequest,
  [TOPIC.bids]: DOMAIN.bid,
  [TOPIC.awards]: DOMAIN.award,
  [TOPIC.ledger]: DOMAIN.ledgerEntry,
  [TOPIC.heartbeats]: DOMAIN.heartbeat
}

/** Upper bound, in bytes, of one gossip message on each topic (checked before decoding). */
export const TOPIC_MAX_BYTES: Record<TopicName, number> = {
  [TOPIC.jobs]: 16 * 1024,
  [TOPIC.bids]: 4 * 1024,
  [TOPIC.awards]: 16 * 1024,
  [TOPIC.ledger]: 64 * 1024,
  [TOPIC.heartbeats]: 2 * 1024
}

/** DHT record key of a provider's capability record: CAPABILITY_KEY_PREFIX + peerId (base58). */
export const CAPABILITY_KEY_PREFIX = '/idlegrid/cap/'

/** DHT index keys are CIDs (raw codec, sha2-256) of INDEX_KEY_PREFIX + dimension + '/' + value. */
export const INDEX_KEY_PREFIX = 'idlegrid/v1/'
