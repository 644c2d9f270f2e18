/**
 * The sync client's requests to one peer (client.ts): each a stream, paced per peer within its
 * guard's stream limit, each answer checked for its kind; and which peers answer `ranges` requests.
 */

import { setTimeout as sleep } from 'node:timers/promises'
import { LedgerError } from '../errors.js'
import { PEER_GUARD_DEFAULTS, TokenBuckets, type RateLimit } from '../../node/index.js'
import { syncRequest, type SyncRequest, type SyncResponse } from './protocol.js'
import { checkRangesAnswer, type ShortFeedSource } from './pull-short.js'
import type { FeedSpan } from './pull.js'
import type { LedgerIngest } from '../ingest/ingest.js'
import type { PeerId } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'

/** One request's answer must come within this. */
export const REQUEST_TIMEOUT_MS = 10_000
/**
 * Sync requests opened to one peer, at most: each is a stream, and a peer's guard refuses inbound
 * streams past its rate (by default 50 a second, bursts of 500), a strike each. Unpaced, a node
 * pulling many short feeds was refused after ~600. Four fifths leaves room for other protocols.
 */
export const SYNC_PACE: RateLimit = {
  perSecond: PEER_GUARD_DEFAULTS.streams.perSecond * 4 / 5,
  burst: PEER_GUARD_DEFAULTS.streams.burst * 4 / 5
}
/** Peers whose pace, and whether they answer `ranges` requests, is kept (the least recent dropped past it). */
const KEPT_PEERS = 10_000

export class SyncRequests implements ShortFeedSource {
  /** per peer: the requests opened to it, paced */
  private readonly paced = new TokenBuckets(KEPT_PEERS)
  /** peers whose last heads page said they answer `ranges` requests, least recent first */
  private readonly answersRanges = new Set<string>()

  constructor (
    private readonly connectionManager: ConnectionManager,
    private readonly ledger: () => LedgerIngest,
    private readonly pace: RateLimit = SYNC_PACE
  ) {}

  /** Whether `peer`'s last heads page said it answers `ranges` requests. */
  answersRangesOf (peer: PeerId): boolean {
    return this.answersRanges.has(peer.toString())
  }

  /** One request to `peer`, paced; its answer decoded (protocol.ts). */
  async request (peer: PeerId, request: SyncRequest, signal: AbortSignal): Promise<SyncResponse> {
    const wait = this.paced.reserve(peer.toString(), this.pace)
    if (wait > 0) await sleep(wait, undefined, { signal })
    const response = await syncRequest(
      this.connectionManager,
      peer,
      request,
      AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)])
    )
    if (response.heads != null) this.noteHeads(peer, response.heads.answersRanges)
    return response
  }

  async rangeRequest (
    peer: PeerId,
    { author, fromSeq, limit }: FeedSpan,
    signal: AbortSignal
  ): Promise<SyncResponse.Entries> {
    const response = await this.request(peer, { range: { author, fromSeq: BigInt(fromSeq), limit } }, signal)
    if (response.entries == null) throw new LedgerError('ERR_LEDGER_SYNC', `${peer.toString()} answered a range request with something else`)
    return response.entries
  }

  async rangesRequest (peer: PeerId, spans: FeedSpan[], signal: AbortSignal): Promise<SyncResponse.Entries[]> {
    const ranges = spans.map(({ author, fromSeq, limit }) => ({ author, fromSeq: BigInt(fromSeq), limit }))
    const response = await this.request(peer, { ranges: { ranges } }, signal)
    return checkRangesAnswer(peer, spans, response.ranges)
  }

  async fetchAndIngest (peer: PeerId, span: FeedSpan, signal: AbortSignal): Promise<void> {
    const entries = await this.rangeRequest(peer, span, signal)
    await this.ledger().ingest(entries.entries)
  }

  private noteHeads (peer: PeerId, answersRanges: boolean): void {
    const id = peer.toString()
    this.answersRanges.delete(id)
    if (!answersRanges) return
    this.answersRanges.add(id)
    if (this.answersRanges.size > KEPT_PEERS) {
      this.answersRanges.delete(this.answersRanges.values().next().value as string)
    }
  }
}
