/**
 * A renter readies a job shard before its first auction there. A renter that just started is
 * connected to its bootstrap and a few peers: its job reaches the shard's providers through
 * relays, and each provider must then dial the renter to bid (bid-stream.ts). Thirty such
 * dials land at once inside a 300 ms window — TCP, TLS with a fresh certificate each side,
 * yamux, identify, gossipsub and ledger streams on a node that is itself still starting — and
 * the bids arrive after the window closed: the first auctions of a fresh renter went unawarded.
 *
 * So before publishing on a shard not readied lately, the renter finds the providers that can
 * serve the job (capability discovery: DHT index keys, each record asked of the provider
 * itself, which connects to it), connects to those not connected yet, and waits until gossipsub
 * has heard each one's subscription (its streams are up: the job then goes straight to it by
 * flood publish, and its bid comes back over a settled connection). Every step is bounded in
 * peers and time; a shard with nobody found is tried again soon, not on every auction.
 */

import { peerIdFromString } from '@libp2p/peer-id'
import type { JobShardTopic } from '../../../protocols/ids.js'
import type { DiscoveryFilters } from '../../capability/index.js'
import { sleep } from '../../common/index.js'
import { shardPeersReachable } from './bid-collector.js'
import { MarketError } from '../errors.js'
import type { JobRequest } from '../shared/messages.js'
import type { GossipSub } from '@chainsafe/libp2p-gossipsub'
import type { Logger } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'

/** Providers readied per shard (each one connection held by the renter). */
export const MAX_READY_PEERS = 32
/**
 * The whole readying of a shard (discovery, dials, subscriptions) gives up after this. A node's
 * first DHT query waits for kad-dht's initial self-query (started 1 s after start, up to 5 s),
 * so a renter that just started needs about that long to find anyone.
 */
export const READY_TIMEOUT_MS = 8_000
/** Dials in flight at once for providers discovery did not connect already. */
const PARALLEL_DIALS = 8
/** A readied shard is readied again after this (providers come and go); one where nobody got ready, sooner. */
const READY_TTL_MS = 5 * 60_000
const RETRY_EMPTY_MS = 10_000
const POLL_MS = 25

export interface ReadinessComponents {
  connectionManager: ConnectionManager
  pubsub: GossipSub
}

/** Peer ids (text) of providers that can serve jobs matching `filters`, at most `max`. */
export type FindProviders = (filters: DiscoveryFilters, max: number, signal: AbortSignal) => Promise<string[]>

/** What readying a shard did (logs, tests, the bench). */
export interface ReadyReport {
  shard: JobShardTopic
  /** readied lately: nothing was done */
  skipped: boolean
  found: number
  /** of those, connected and known as shard subscribers when readying ended */
  ready: number
  elapsedMs: number
}

/** The discovery filters a job's constraints imply: a superset of the providers bid-declines.ts lets bid. */
export function readinessFilters (job: Pick<JobRequest, 'constraints'>): DiscoveryFilters {
  const c = job.constraints
  const filters: DiscoveryFilters = {}
  if (c == null) return filters
  if (c.residency !== '') filters.residency = c.residency
  if (c.minVramMib > 0) filters.minVramGb = c.minVramMib / 1024
  return filters
}

export class ShardReadiness {
  /** per shard: when it was readied and until when that holds (bounded: one entry per shard topic) */
  private readonly readied = new Map<JobShardTopic, number>()
  /** readyings in progress, by shard */
  private readonly running = new Map<JobShardTopic, Promise<ReadyReport>>()

  constructor (
    private readonly components: ReadinessComponents,
    private readonly find: FindProviders,
    private readonly log: Logger,
    private readonly timeoutMs = READY_TIMEOUT_MS
  ) {}

  /**
   * Readies `shard` for `job` unless done lately; auctions that start on a shard being readied
   * wait for that readying rather than start their own. MarketError ERR_AUCTION ('auction
   * cancelled') if `signal` aborts.
   */
  async ready (shard: JobShardTopic, job: Pick<JobRequest, 'constraints'>, signal: AbortSignal): Promise<ReadyReport> {
    if ((this.readied.get(shard) ?? 0) > Date.now()) return { shard, skipped: true, found: 0, ready: 0, elapsedMs: 0 }
    const running = this.running.get(shard)
    if (running != null) {
      await Promise.race([running.catch(() => {}), sleep(this.timeoutMs, signal)])
      if (signal.aborted) throw new MarketError('ERR_AUCTION', 'auction cancelled')
      return { shard, skipped: true, found: 0, ready: 0, elapsedMs: 0 }
    }
    const readying = this.readyNow(shard, job, signal)
    this.running.set(shard, readying)
    try {
      return await readying
    } finally {
      this.running.delete(shard)
    }
  }

  private async readyNow (shard: JobShardTopic, job: Pick<JobRequest, 'constraints'>, signal: AbortSignal): Promise<ReadyReport> {
    const started = Date.now()
    const bounded = AbortSignal.any([signal, AbortSignal.timeout(this.timeoutMs)])
    const found = (await this.find(readinessFilters(job), MAX_READY_PEERS, bounded).catch((err) => {
      this.log('readying %s: discovery failed: %e', shard, err)
      return []
    })).slice(0, MAX_READY_PEERS)
    await this.connect(found, bounded)
    // a subscription comes in on the peer's stream to us, and gossipsub sends only on its own
    // stream to the peer (a publish skips a subscriber without one): wait for both; a peer we could
    // not connect to is not waited for
    while (!bounded.aborted && this.pending(shard, found).length > 0) await sleep(POLL_MS, bounded)
    if (signal.aborted) throw new MarketError('ERR_AUCTION', 'auction cancelled')
    const ready = this.subscribed(shard, found).length
    this.readied.set(shard, Date.now() + (ready > 0 ? READY_TTL_MS : RETRY_EMPTY_MS))
    const report = { shard, skipped: false, found: found.length, ready, elapsedMs: Date.now() - started }
    this.log('readied %s: %d of %d providers found connected and subscribed in %d ms', shard, ready, found.length, report.elapsedMs)
    return report
  }

  /** Found providers connected to us whose subscription to `shard` gossipsub has not heard yet. */
  private pending (shard: JobShardTopic, found: string[]): string[] {
    const subscribed = new Set(this.subscribed(shard, found))
    return found.filter(
      id => !subscribed.has(id) && this.components.connectionManager.getConnections(peerIdFromString(id)).length > 0
    )
  }

  /**
   * Found providers a publish on `shard` reaches straight away: gossipsub knows their subscription
   * and has its stream to them open.
   */
  private subscribed (shard: JobShardTopic, found: string[]): string[] {
    const reachable = new Set(shardPeersReachable(this.components.pubsub, shard))
    return found.filter(id => reachable.has(id))
  }

  /** Dials the found providers not connected yet, a few at a time, until `signal` aborts. */
  private async connect (found: string[], signal: AbortSignal): Promise<void> {
    const { connectionManager } = this.components
    const queue = found.filter(id => connectionManager.getConnections(peerIdFromString(id)).length === 0)
    await Promise.all(Array.from({ length: Math.min(PARALLEL_DIALS, queue.length) }, async () => {
      for (let id = queue.shift(); id != null && !signal.aborted; id = queue.shift()) {
        await connectionManager.openConnection(peerIdFromString(id), { signal }).catch((err) => { this.log('readying: no connection to %s: %e', id, err) })
      }
    }))
  }
}
