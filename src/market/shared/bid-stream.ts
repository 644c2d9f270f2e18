/**
 * Bids go straight to the renter (issue 15): the provider opens /idlegrid/bid/1.0.0 to the
 * peer that signed the job request, sends its SignedEnvelope("bid", Bid) as the one request
 * frame and reads a BidAck. Nobody else sees the bid, so a network of N providers costs each
 * node nothing per bid of others. The renter opens and checks the bid as it did on gossip
 * (envelope, domain, signature, fields, time rules), refuses a bid relayed by anyone other
 * than its signer, and hands it to the bid collector, whose rules (one per signer, caps) hold.
 */

import { multiaddr } from '@multiformats/multiaddr'
import { decodeBounded, envelopeMaxBytes, MAX_BYTES } from '../../../protocols/codec.js'
import { DOMAIN, PROTOCOL } from '../../../protocols/ids.js'
import { dialViaRelays, requestOnce } from '../../node/index.js'
import { isMessageError, messageError } from '../errors.js'
import { BidAck, openMarketEnvelope, readBid, type Bid, type JobRequest } from './messages.js'
import type { Signed } from '../../identity/index.js'
import type { PeerId, PeerStore } from '@libp2p/interface'
import type { ConnectionManager, TransportManager } from '@libp2p/interface-internal'

/** Largest bid request frame: one bid envelope. */
export const MAX_BID_REQUEST_BYTES = envelopeMaxBytes(MAX_BYTES.bid)
/** How long after the window closes a bid stream may still run (the renter's answer is then LATE). */
const BID_SEND_GRACE_MS = 2_000
/**
 * How long a dial to a renter through its relays may go on after its bid's deadline: a connection through a relay
 * can take longer than a bid window when many bidders dial one renter on a loaded relay, and if
 * every such dial were cut at the deadline the renter's next round would find none made (NAT
 * lab, 20 providers and 5 renters behind NAT: auctions with no bid at all). The late connection
 * carries the next bid.
 */
const CONNECT_MS = 30_000
const MAX_DETAIL_CHARS = 128

/** What became of one bid in the renter's auction window (bid-collector.ts); answered as BidAck.status. */
export type BidOutcome = 'kept' | 'not-kept' | 'late' | 'unknown-auction'

const STATUS_OF: Record<BidOutcome, BidAck.Status> = {
  kept: BidAck.Status.KEPT,
  'not-kept': BidAck.Status.NOT_KEPT,
  late: BidAck.Status.LATE,
  'unknown-auction': BidAck.Status.UNKNOWN_AUCTION
}

export interface BidSenderComponents {
  connectionManager: ConnectionManager
  peerStore: PeerStore
  /** dials a renter's relayed addresses at once (dialViaRelays); without it they are tried in turn */
  transportManager?: TransportManager
}

/**
 * Sends `bid` to the renter of `job` (its signer) and returns the renter's answer. When not
 * connected to the renter, the job's `renter_addrs` are recorded first, so the dial needs no
 * lookup. Throws NodeError ERR_REQUEST_RESPONSE when the renter cannot be reached in time,
 * MarketError ERR_MARKET_MESSAGE on an unreadable answer.
 */
export async function sendBid (
  components: BidSenderComponents,
  job: Signed<JobRequest>,
  bid: Signed<Bid>,
  now = Date.now()
): Promise<BidAck> {
  // connected already (the usual case after a first auction): the addresses are not needed, and
  // recording them is a peer-store write (datastore, lock) on the path of every bid
  const windowEnd = Number(job.message.createdAt) + job.message.bidWindowMs
  const signal = AbortSignal.timeout(Math.max(100, windowEnd - now + BID_SEND_GRACE_MS))
  if (components.connectionManager.getConnections(job.signer).length === 0) {
    const multiaddrs = job.message.renterAddrs.flatMap(bytes => {
      try {
        return [multiaddr(bytes)]
      } catch {
        return []
      }
    })
    if (multiaddrs.length > 0) await components.peerStore.merge(job.signer, { multiaddrs }).catch(() => {})
    // a renter behind NAT names its relays: try them all at once, so that one stalled relay
    // does not hold the bid past its window (the request below then takes that connection)
    const relayed = multiaddrs.filter(a => a.toString().includes('/p2p-circuit')).map(a => a.encapsulate(`/p2p/${job.signer.toString()}`))
    // only a dial through relays outlives the bid: a direct one that is slow is to an address that
    // does not answer (a partition, a dead peer), and a hung dial would hold back the next one
    // to that peer, which joins it, for as long (the partition chaos spec: ledgers equal 2 s late)
    const connecting = relayed.length > 0 ? AbortSignal.timeout(CONNECT_MS) : signal
    const dialing = relayed.length > 1 && components.transportManager != null
      ? dialViaRelays(components.transportManager, relayed, connecting)
      : components.connectionManager.openConnection(job.signer, { signal: connecting })
    dialing.catch(() => {})
    // the bid waits for the connection until its own deadline; the dial goes on past it
    await untilAborted(dialing, signal)
  }
  // lazy select: the bid rides with the protocol proposal, saving a round trip inside the window
  const answer = await requestOnce(components.connectionManager, job.signer, {
    protocol: PROTOCOL.bid,
    request: bid.envelope,
    maxResponseBytes: MAX_BYTES.bidAck,
    signal,
    lazy: true
  })
  try {
    return decodeBounded(BidAck, answer, 'bid ack', MAX_BYTES.bidAck)
  } catch (err: any) {
    throw messageError('malformed', `bid ack: ${String(err?.message ?? err)}`)
  }
}

/** `promise`, or a rejection once `signal` aborts (the promise itself goes on). */
async function untilAborted<T> (promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) throw signal.reason
  let onAbort = (): void => {}
  const aborted = new Promise<never>((_resolve, reject) => { onAbort = () => { reject(signal.reason) } })
  signal.addEventListener('abort', onAbort, { once: true })
  try {
    return await Promise.race([promise, aborted])
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}

/**
 * The renter's answer to one bid request from `remote`: opens and checks the bid, then
 * `collect` (the bid collector) says what became of it. Never throws: a bad bid is answered
 * INVALID with the reason, so an honest provider with a stale clock learns why.
 */
export function answerBid (
  request: Uint8Array,
  remote: PeerId,
  collect: (bid: Signed<Bid>) => BidOutcome,
  now = Date.now()
): Uint8Array {
  const ack = (status: BidAck.Status, detail = ''): Uint8Array => BidAck.encode({ status, detail: detail.slice(0, MAX_DETAIL_CHARS) })
  let bid: Signed<Bid>
  try {
    bid = readBid(openMarketEnvelope(request, DOMAIN.bid, MAX_BYTES.bid), now)
  } catch (err: any) {
    return ack(BidAck.Status.INVALID, isMessageError(err) ? `${err.reason}: ${err.message}` : String(err?.message ?? err))
  }
  // only a bidder speaks for its bid: a relayed copy could only crowd out or replay it
  if (!bid.signer.equals(remote)) return ack(BidAck.Status.INVALID, 'wrong-signer: the bid was not sent by its signer')
  return ack(STATUS_OF[collect(bid)])
}

/** "kept", "late" … for logs and counters. */
export function bidAckName (status: BidAck.Status): string {
  return String(status).toLowerCase().replace(/_/g, '-')
}
