/**
 * The advertiser's timing: when a publish round is retried, how long the first one waits for
 * listen addresses, when a round that saw few DHT peers is repeated, and how often a change in
 * the input cache's public entries republishes the record (advertiser.ts).
 */

/** after a publish round reached nobody, the next one starts at most this much later */
export const RETRY_ROUND_AFTER_MS = 30_000
/**
 * libp2p tells its listen addresses (self:peer:update) about a second after the services have
 * started: a first round at afterStart published a record without addresses, and a second
 * full round (put + every index key) followed at once. The first round waits for them, this
 * long at most (a node with no TCP address still publishes).
 */
export const ADDRESS_WAIT_MS = 5_000
/**
 * Provider records stay at the servers that were closest to each key when they were provided.
 * A provider that published while it saw fewer than k DHT peers (a network starting up, its
 * routing table still filling) misses servers that joined since and sit closer to its keys,
 * where renters ask (discovery bench, 11 servers: one record for gpu/h-100 held by 3, the
 * closest at rank 2). So after such a round it checks every `earlyRepublishMs` and publishes
 * again once its routing table has grown by half, until a round sees k peers.
 */
export const EARLY_REPUBLISH_MS = 30_000
/**
 * Pause between a change in the input cache's public entries and the record that names it, and
 * the least time between two records republished for such changes: renters decide what goes
 * public, and each republish is a DHT put and its index keys.
 */
export const HELD_DATASETS_DELAY_MS = 5_000
export const HELD_DATASETS_MIN_GAP_MS = 60_000
export const K_PEERS = 20
