/**
 * Pulls of many short feeds from one peer, several ranges to a request (README §7 "Range size"):
 * a node that lacks a few entries of each of thousands of feeds (a renter at horizon 2 lacks 9,000)
 * asked one request per feed, at most 40 a second of one peer; a `ranges` request carries up to 64.
 * Each range is still one feed's, verified under its own last entry's signature and settled as a
 * single range is (pull.ts). A feed the peer holds more of than fit goes on as a pull of its own.
 */

import { MAX_BYTES } from '../../../protocols/codec.js'
import { LedgerError } from '../errors.js'
import { MAX_RANGE_ENTRIES, type SyncResponse } from './protocol.js'
import { ingestRange, rangeStart, settleBatch, type Batch, type FeedSpan, type RangeSource } from './pull.js'
import type { LedgerIngest } from '../ingest/ingest.js'
import type { PeerId } from '@libp2p/interface'

/** Most ranges in one request (the proto's bound). */
export const MAX_RANGES_PER_REQUEST = 64
/** A feed lacking at most this many entries is pulled in a `ranges` request with others. */
export const SHORT_FEED_ENTRIES = 256
/** What a range adds to an encoded request besides its author's bytes, at most (tags, lengths, two varints). */
const RANGE_OVERHEAD_BYTES = 24

export interface ShortFeedSource extends RangeSource {
  /** several ranges in one request, one answer each in order (checked against what was asked) */
  rangesRequest: (peer: PeerId, spans: FeedSpan[], signal: AbortSignal) => Promise<SyncResponse.Entries[]>
}

/**
 * `spans` in requests: at most 64 ranges, their limits together at most 1,024 entries, and the
 * encoded request within its byte bound.
 */
export function groupSpans (spans: readonly FeedSpan[]): FeedSpan[][] {
  const groups: FeedSpan[][] = []
  let group: FeedSpan[] = []
  let entries = 0
  let bytes = 0
  for (const span of spans) {
    const limit = Math.min(span.limit, MAX_RANGE_ENTRIES)
    const size = span.author.length + RANGE_OVERHEAD_BYTES
    if (
      group.length > 0 &&
      (group.length >= MAX_RANGES_PER_REQUEST ||
        entries + limit > MAX_RANGE_ENTRIES ||
        bytes + size > MAX_BYTES.syncRequest)
    ) {
      groups.push(group)
      group = []
      entries = 0
      bytes = 0
    }
    group.push({ ...span, limit })
    entries += limit
    bytes += size
  }
  if (group.length > 0) groups.push(group)
  return groups
}

/** Checks a `ranges` answer against the request: one range each, none longer than asked, 1,024 entries in all. */
export function checkRangesAnswer (
  peer: PeerId,
  spans: readonly FeedSpan[],
  answer: SyncResponse.Ranges | undefined
): SyncResponse.Entries[] {
  if (answer == null) throw new LedgerError('ERR_LEDGER_SYNC', `${peer.toString()} answered a ranges request with something else`)
  if (answer.ranges.length !== spans.length) throw new LedgerError('ERR_LEDGER_SYNC', `${peer.toString()} answered ${answer.ranges.length} ranges of the ${spans.length} asked`)
  let total = 0
  for (const [i, range] of answer.ranges.entries()) {
    if (range.entries.length > spans[i].limit) throw new LedgerError('ERR_LEDGER_SYNC', `${peer.toString()} sent ${range.entries.length} entries for a range of at most ${spans[i].limit}`)
    total += range.entries.length
  }
  if (total > MAX_RANGE_ENTRIES) throw new LedgerError('ERR_LEDGER_SYNC', `${peer.toString()} sent ${total} entries in one response, more than ${MAX_RANGE_ENTRIES}`)
  return answer.ranges
}

export interface ShortPulls {
  /** entries added */
  added: number
  /**
   * feeds the peer holds more of than its answers carried, to pull on their own: the `author`
   * arrays of their spans (the same objects)
   */
  unfinished: Uint8Array[]
}

/** A feed a peer holds: its author's id, and the peer's head of it (author bytes and seq). */
export interface HeldHead { id: string, remote: { author: Uint8Array, seq: bigint } }

/**
 * Of the feeds in `heads`, those we lack 1 to SHORT_FEED_ENTRIES entries of, as spans from the
 * seq after ours, with their heads by the author array the span carries (it comes back in
 * `unfinished`); the rest (longer, or none lacking: a fork check) apart.
 */
export function shortSpans<H extends HeldHead> (
  ledger: LedgerIngest,
  heads: readonly H[]
): { short: FeedSpan[], byAuthor: Map<Uint8Array, H>, rest: H[] } {
  const short: FeedSpan[] = []
  const rest: H[] = []
  const byAuthor = new Map<Uint8Array, H>()
  for (const head of heads) {
    const held = ledger.store.head(head.id)?.seq ?? 0
    const lacking = Number(head.remote.seq) - held
    if (lacking < 1 || lacking > SHORT_FEED_ENTRIES) {
      rest.push(head)
      continue
    }
    short.push({ author: head.remote.author, fromSeq: held + 1, limit: lacking })
    byAuthor.set(head.remote.author, head)
  }
  return { short, byAuthor, rest }
}

/**
 * Pulls `spans` (each a feed lacking a few entries) in `ranges` requests, the next request in
 * flight while the last answer is verified and written, until `maxAdded` were added.
 */
export async function pullShortFeeds (
  source: ShortFeedSource,
  ledger: LedgerIngest,
  { peer, spans, maxAdded }: { peer: PeerId, spans: readonly FeedSpan[], maxAdded: number },
  signal: AbortSignal
): Promise<ShortPulls> {
  const groups = groupSpans(spans)
  const result: ShortPulls = { added: 0, unfinished: [] }
  let next = 0
  let inflight: Promise<SyncResponse.Entries[]> | undefined
  const ask = (): void => {
    inflight = next < groups.length ? source.rangesRequest(peer, groups[next], signal) : undefined
    inflight?.catch(() => {})
  }
  ask()
  // the previous answer's ranges, still being written while the next one is asked
  let writing: Array<{ span: FeedSpan, batch: Batch }> = []
  const settleAll = async (): Promise<void> => {
    for (const { span, batch } of writing) {
      const outcome = await settleBatch(source, { peer, author: span.author }, batch, signal)
      if (outcome !== 'over-quota') result.added += outcome
    }
    writing = []
  }
  try {
    // eslint-disable-next-line no-unmodified-loop-condition -- ask() sets `inflight`
    while (inflight != null && !signal.aborted && result.added < maxAdded) {
      const answers = await inflight
      const group = groups[next++]
      ask()
      const current: typeof writing = []
      for (const [i, answer] of answers.entries()) {
        const span = group[i]
        const from = rangeStart(span.fromSeq, answer.entries)
        if (answer.entries.length > 0) {
          current.push({
            span,
            batch: ingestRange(ledger, { author: span.author, asked: span.fromSeq, from, entries: answer.entries })
          })
        }
        if (answer.more) result.unfinished.push(span.author)
      }
      await settleAll()
      writing = current
    }
    await settleAll()
  } finally {
    inflight?.catch(() => {})
  }
  return result
}
