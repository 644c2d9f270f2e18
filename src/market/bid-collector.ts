/**
 * The auction window on the renter: which auctions are open here, the bids that reach each
 * one from gossip while its window is open (bounded in count), the bidders' addresses kept
 * and the first bidders dialled during the window so the accept stream pays no dial. Also
 * the wait for gossip peers before a job is published.
 */

import { multiaddr } from '@multiformats/multiaddr'
import { equals } from 'uint8arrays/equals'
import { TOPIC } from '../../protocols/ids.js'
import { sleep, toHex } from '../common/index.js'
import { AuctionError } from './errors.js'
import type { Bid, JobRequest } from './messages.js'
import type { Signed } from '../identity/index.js'
import type { GossipSub } from '@chainsafe/libp2p-gossipsub'
import type { Logger, PeerStore } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'

/** Bidders dialled during the window (the first ones), and how long each dial may take. */
const PREDIAL_BIDDERS = 16
const PREDIAL_TIMEOUT_MS = 5_000
/** Bids accepted per auction; more are counted but not kept. */
const MAX_BIDS_PER_AUCTION = 1_000
/** Longest wait for a first jobs-topic peer before publishing anyway. */
const TOPIC_PEER_WAIT_MS = 5_000

export interface BidCollectorComponents {
  peerStore: PeerStore
  connectionManager: ConnectionManager
  /** gossipsub itself: the mesh is what carries the job out */
  pubsub: GossipSub
}

/** The bids of one open auction. */
export interface AuctionWindow {
  job: JobRequest
  windowEnd: number
  bids: Array<Signed<Bid>>
  /** bids that came after the window closed */
  late: number
  /** bids over the per-auction bound */
  overflow: number
  /** bids for another auction of the same job id (another round, or another signer's job with this id) */
  otherAuction: number
  onBid?: (bid: Signed<Bid>) => void
}

export class BidCollector {
  private readonly active = new Map<string, AuctionWindow>()

  constructor (private readonly components: BidCollectorComponents, private readonly log: Logger) {}

  get running (): number {
    return this.active.size
  }

  /** Opens the window of `job` (AuctionError if an auction for its id already runs here). */
  open (job: JobRequest, onBid?: (bid: Signed<Bid>) => void): AuctionWindow {
    const jobId = toHex(job.jobId)
    if (this.active.has(jobId)) throw new AuctionError(`an auction for job ${jobId} is already running`)
    const window: AuctionWindow = { job, windowEnd: Number(job.createdAt) + job.bidWindowMs, bids: [], late: 0, overflow: 0, otherAuction: 0, onBid }
    this.active.set(jobId, window)
    return window
  }

  /** Forgets the auction of `job` (bids for it are ignored from now on). */
  close (job: JobRequest): void {
    this.active.delete(toHex(job.jobId))
  }

  /** Feeds a verified bid from gossip to the auction it answers, if any runs here. */
  add (bid: Signed<Bid>): void {
    const window = this.active.get(toHex(bid.message.jobId))
    if (window == null) return
    // a job id is only ours by its nonce: bids for someone else's job with our id take no room here
    if (!equals(bid.message.jobNonce, window.job.nonce)) { window.otherAuction++; return }
    if (Date.now() > window.windowEnd) { window.late++; return }
    if (window.bids.length >= MAX_BIDS_PER_AUCTION) { window.overflow++; return }
    window.bids.push(bid)
    this.learnAddrs(bid)
    // connect while the window is still open, so the winner's accept stream pays no dial
    if (window.bids.length <= PREDIAL_BIDDERS) {
      this.components.connectionManager.openConnection(bid.signer, { signal: AbortSignal.timeout(PREDIAL_TIMEOUT_MS) }).catch(() => {})
    }
    window.onBid?.(bid)
  }

  /** Keeps a bidder's advertised addresses so the accept stream needs no DHT lookup. */
  private learnAddrs (bid: Signed<Bid>): void {
    const multiaddrs = bid.message.addrs.flatMap(bytes => { try { return [multiaddr(bytes)] } catch { return [] } })
    if (multiaddrs.length === 0) return
    this.components.peerStore.merge(bid.signer, { multiaddrs }).catch((err) => { this.log('addresses of %p not kept: %e', bid.signer, err) })
  }

  /**
   * A node that just joined may not be in any gossip mesh yet: its job would reach nobody and
   * bids would not come back. Wait (bounded) until it has mesh peers on the jobs and bids topics.
   */
  async topicPeers (signal: AbortSignal): Promise<void> {
    const deadline = Date.now() + TOPIC_PEER_WAIT_MS
    const ready = (topic: string): boolean => this.components.pubsub.getMeshPeers(topic).length > 0
    while (!(ready(TOPIC.jobs) && ready(TOPIC.bids)) && Date.now() < deadline) {
      await waitOrCancel(50, signal)
    }
  }
}

/** Sleeps `ms`; AuctionError('auction cancelled') when `signal` aborts first or already has. */
export async function waitOrCancel (ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) throw new AuctionError('auction cancelled')
  await sleep(ms, signal)
  if (signal.aborted) throw new AuctionError('auction cancelled')
}
