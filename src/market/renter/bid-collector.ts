/**
 * The auction window on the renter: which auctions are open here, the bids that reach each
 * one over the bid stream (/idlegrid/bid/1.0.0) while its window is open (one per signer, bounded
 * in signers), the bidders' addresses kept and the first bidders dialled during the window so the
 * accept stream pays no dial — only for bids that fit the job: an unfit bid costs no dial and no
 * address. Bids for job ids with no auction here are dropped on arrival. Also the wait for peers of
 * the job's shard topic before a job is published.
 */

import { multiaddr } from '@multiformats/multiaddr'
import { equals } from 'uint8arrays/equals'
import type { BidOutcome } from '../shared/bid-stream.js'
import type { JobShardTopic } from '../../../protocols/ids.js'
import { sleep, toHex } from '../../common/index.js'
import { MarketError } from '../errors.js'
import { betterOwnBid, bidFitsJob } from '../shared/ranking.js'
import type { Bid, JobRequest } from '../shared/messages.js'
import type { Signed } from '../../identity/index.js'
import type { GossipSub } from '@chainsafe/libp2p-gossipsub'
import type { Logger, PeerStore } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'

/** Bidders dialled during the window (the first ones whose bids fit the job), and how long each dial may take. */
const PREDIAL_BIDDERS = 16
const PREDIAL_TIMEOUT_MS = 5_000
/** Bidders (signers) kept per auction, one bid each; bids of further signers are counted, not kept. */
export const MAX_BIDDERS_PER_AUCTION = 1_000
/** Bids that do not fit the job kept per auction for the report (one per signer); the rest are only counted. */
export const MAX_UNFIT_BIDS_KEPT = 32
/** Longest wait for a first peer of the job's shard topic before publishing anyway. */
const TOPIC_PEER_WAIT_MS = 5_000

export interface BidCollectorComponents {
  peerStore: PeerStore
  connectionManager: ConnectionManager
  /** gossipsub itself: the mesh is what carries the job out */
  pubsub: GossipSub
}

/** A bid read this long after the window's end is late even while the auction has not closed it yet. */
export const LATE_READ_GRACE_MS = 250

/** What happened to the bids that reached one auction (every one counted once). */
export interface WindowCounts {
  /** bids that became their signer's kept bid (a signer's first, or one better than its kept bid) */
  kept: number
  /** bids of a signer that already had an equal or better bid kept */
  notBetter: number
  /** bids that do not fit the job (bidFitsJob) */
  unfit: number
  /** bids that came after the window closed */
  late: number
  /** bids of signers over the per-auction bound */
  overflow: number
  /** bids for another auction of the same job id (another round, or another signer's job with this id) */
  otherAuction: number
}

/**
 * The bids of one open auction. One bid per signer (issue 13, bid flood): of a provider's bids
 * that fit the job the best is kept (lowest price, then the smaller hash: the one the ranking
 * would keep of them all anyway), so a provider that sends 10,000 bids competes only with
 * itself, in the room of one. At most MAX_BIDDERS_PER_AUCTION signers are kept.
 */
export class AuctionWindow {
  readonly job: JobRequest
  readonly windowEnd: number
  /** each signer's best bid that fits the job, by peer id text */
  readonly best = new Map<string, Signed<Bid>>()
  /** a few bids that do not fit the job (their signer has no fitting bid), for the report's dropped rows */
  readonly unfit = new Map<string, Signed<Bid>>()
  readonly counts: WindowCounts = { kept: 0, notBetter: 0, unfit: 0, late: 0, overflow: 0, otherAuction: 0 }
  readonly onBid?: (bid: Signed<Bid>) => void
  /** the auction closed the window (bids from now on are late); see isLate */
  closed = false

  constructor (job: JobRequest, onBid?: (bid: Signed<Bid>) => void) {
    this.job = job
    this.windowEnd = Number(job.createdAt) + job.bidWindowMs
    this.onBid = onBid
  }

  /**
   * A bid is late once the auction closed the window, or past the window's end by more than
   * LATE_READ_GRACE_MS. The auction closes it when its timer fired and it has read what its
   * connections had already delivered (drainDeliveredBids): a renter whose event loop was
   * busy at the window's end ran its close timer before the socket reads queued behind it, and
   * counted bids that had reached it in time as late (auction bench: all 30 bids of one auction in three).
   */
  isLate (now: number): boolean {
    return this.closed || now > this.windowEnd + LATE_READ_GRACE_MS
  }

  /** The bids kept: each signer's best fitting bid, then the unfit ones kept for the report. */
  get bids (): Array<Signed<Bid>> {
    return [...this.best.values(), ...this.unfit.values()]
  }
}

export class BidCollector {
  private readonly active = new Map<string, AuctionWindow>()
  /** bids that reached no auction of this node (unknown job id), dropped on arrival */
  private unknownJob = 0

  constructor (private readonly components: BidCollectorComponents, private readonly log: Logger) {}

  get running (): number {
    return this.active.size
  }

  /** Bids dropped on arrival because no auction of theirs runs here, and bids held in open windows. */
  stats (): { unknownJob: number, held: number } {
    let held = 0
    for (const w of this.active.values()) held += w.best.size + w.unfit.size
    return { unknownJob: this.unknownJob, held }
  }

  /** Opens the window of `job` (MarketError ERR_AUCTION if an auction for its id already runs here). */
  open (job: JobRequest, onBid?: (bid: Signed<Bid>) => void): AuctionWindow {
    const jobId = toHex(job.jobId)
    if (this.active.has(jobId)) throw new MarketError('ERR_AUCTION', `an auction for job ${jobId} is already running`)
    const window = new AuctionWindow(job, onBid)
    this.active.set(jobId, window)
    return window
  }

  /** Forgets the auction of `job` (bids for it are ignored from now on). */
  close (job: JobRequest): void {
    this.active.delete(toHex(job.jobId))
  }

  /** Feeds a verified bid to the auction it answers, if any runs here; says what became of it. */
  add (bid: Signed<Bid>): BidOutcome {
    const window = this.active.get(toHex(bid.message.jobId))
    if (window == null) { this.unknownJob++; return 'unknown-auction' }
    const counts = window.counts
    // a job id is only ours by its nonce: bids for someone else's job with our id take no room here
    if (!equals(bid.message.jobNonce, window.job.nonce)) { counts.otherAuction++; return 'unknown-auction' }
    const now = Date.now()
    if (window.isLate(now)) { counts.late++; return 'late' }
    const signer = bid.signer.toString()
    // judged as of the window's end: a bid that lapses before it could never be ranked
    const problem = bidFitsJob(bid.message, window.job, Math.max(now, window.windowEnd))
    if (problem != null) {
      counts.unfit++
      if (!window.best.has(signer) && (window.unfit.has(signer) || window.unfit.size < MAX_UNFIT_BIDS_KEPT)) {
        window.unfit.set(signer, bid)
      }
      return 'not-kept'
    }
    const held = window.best.get(signer)
    if (held == null && window.best.size >= MAX_BIDDERS_PER_AUCTION) { counts.overflow++; return 'not-kept' }
    if (held != null && !betterOwnBid(bid, held)) { counts.notBetter++; return 'not-kept' }
    counts.kept++
    window.best.set(signer, bid)
    window.unfit.delete(signer)
    // progress events: one per bidder, however many bids it sends
    if (held != null) return 'kept'
    // a bid that came over the bid stream brought its connection along: then there is no
    // address to learn and nothing to dial (a peer-store write per bid saved)
    if (this.components.connectionManager.getConnections(bid.signer).length > 0) {
      window.onBid?.(bid)
      return 'kept'
    }
    this.learnAddrs(bid)
    // connect while the window is still open, so the winner's accept stream pays no dial
    if (window.best.size <= PREDIAL_BIDDERS) {
      this.components.connectionManager
        .openConnection(bid.signer, { signal: AbortSignal.timeout(PREDIAL_TIMEOUT_MS) })
        .catch(() => {})
    }
    window.onBid?.(bid)
    return 'kept'
  }

  /** Keeps a bidder's advertised addresses so the accept stream needs no DHT lookup. */
  private learnAddrs (bid: Signed<Bid>): void {
    const multiaddrs = bid.message.addrs.flatMap(bytes => { try { return [multiaddr(bytes)] } catch { return [] } })
    if (multiaddrs.length === 0) return
    this.components.peerStore.merge(bid.signer, { multiaddrs }).catch((err) => { this.log('addresses of %p not kept: %e', bid.signer, err) })
  }

  /**
   * A renter publishes to a shard it does not join (gossipsub fanout): a node that just joined
   * may know no subscriber of the shard yet, and its job would reach nobody. Wait (bounded)
   * until some connected peer has announced the shard (a provider serving it, or a bootstrap)
   * and gossipsub's stream to it is open (a publish skips a subscriber it has no stream to).
   */
  async topicPeers (topic: JobShardTopic, signal: AbortSignal): Promise<void> {
    const deadline = Date.now() + TOPIC_PEER_WAIT_MS
    while (shardPeersReachable(this.components.pubsub, topic).length === 0 && Date.now() < deadline) {
      await waitOrCancel(50, signal)
    }
  }
}

/**
 * Peers (text ids) subscribed to `topic` that a publish reaches now: gossipsub has its outbound
 * stream to them open.
 */
export function shardPeersReachable (pubsub: GossipSub, topic: JobShardTopic): string[] {
  return pubsub.getSubscribers(topic).map(p => p.toString()).filter(id => pubsub.streamsOutbound.has(id))
}

/**
 * Lets the event loop read what the connections already delivered (two turns: socket reads,
 * then the TLS, muxer and stream steps they start) before the window closes.
 */
export async function drainDeliveredBids (): Promise<void> {
  for (let turn = 0; turn < 2; turn++) await new Promise(resolve => setImmediate(resolve))
}

/** Sleeps `ms`; MarketError ERR_AUCTION ('auction cancelled') when `signal` aborts first or already has. */
export async function waitOrCancel (ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) throw new MarketError('ERR_AUCTION', 'auction cancelled')
  await sleep(ms, signal)
  if (signal.aborted) throw new MarketError('ERR_AUCTION', 'auction cancelled')
}
