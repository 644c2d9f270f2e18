/**
 * A pull of one feed from one peer (the sync client's, client.ts): range requests in batches,
 * the next one in flight while the last batch is verified and written by the ingest step.
 */

import { equals } from 'uint8arrays/equals'
import { claimedSeqOf } from '../entries/entry.js'
import { LedgerError } from '../errors.js'
import { MAX_RANGE_ENTRIES, type SyncResponse } from './protocol.js'
import { isCoded } from '../../common/index.js'
import type { IngestOutcome, LedgerIngest } from '../ingest/ingest.js'
import type { PeerId } from '@libp2p/interface'

/** A run of one feed's entries: `limit` of them from `fromSeq` on. */
export interface FeedSpan { author: Uint8Array, fromSeq: number, limit: number }

/**
 * A range handed to the ingest step: the seq asked for, the seq its first entry claims, and what
 * became of each entry.
 */
export interface Batch { asked: number, from: number, outcomes: Promise<IngestOutcome[]> }

/** The requests a pull makes of the peer (the sync client's, with its timeouts). */
export interface RangeSource {
  /** one range of a feed, as the peer answers it */
  rangeRequest: (peer: PeerId, span: FeedSpan, signal: AbortSignal) => Promise<SyncResponse.Entries>
  /** one range handed to the ingest step as it comes (a conflicting entry, for the fork proof) */
  fetchAndIngest: (peer: PeerId, span: FeedSpan, signal: AbortSignal) => Promise<void>
}

/**
 * What became of one range of `author`'s feed: the entries added, or 'over-quota' when the feed is
 * over its quota in our view (stop pulling it: not the peer's fault). An entry we refuse, another
 * author's or one out of place ends the session (LedgerError ERR_LEDGER_SYNC); a chain break right
 * after our head first fetches the peer's entry at our head's seq, so that an equivocation is proven.
 */
export async function settleBatch (
  source: RangeSource,
  { peer, author }: { peer: PeerId, author: Uint8Array },
  batch: Batch,
  signal: AbortSignal
): Promise<number | 'over-quota'> {
  let added = 0
  for (const [i, outcome] of (await batch.outcomes).entries()) {
    if (outcome.status === 'rejected' && isCoded(outcome.error, LedgerError, 'ERR_LEDGER_QUOTA')) return 'over-quota'
    if (outcome.status === 'rejected') {
      // a chain break right after our head: the peer holds another history; compare our head's seq
      if (isCoded(outcome.error, LedgerError, 'ERR_LEDGER_CHAIN') && i === 0 && batch.from > 1 && batch.from === batch.asked) await source.fetchAndIngest(peer, { author, fromSeq: batch.from - 1, limit: 1 }, signal)
      throw new LedgerError('ERR_LEDGER_SYNC', `${peer.toString()} sent an entry we refuse: ${outcome.error.message}`)
    }
    // a range answers for the author we asked about: another author's entries end the session
    if (!equals(outcome.record.author, author)) throw new LedgerError('ERR_LEDGER_SYNC', `${peer.toString()} answered a range of one author with another's entries`)
    if (outcome.record.seq !== batch.from + i) throw new LedgerError('ERR_LEDGER_SYNC', `${peer.toString()} sent a range that is not contiguous`)
    if (outcome.status === 'added') added++
  }
  return added
}

/**
 * The seq a range asked from `asked` starts at: the holder may start later, at its retention base
 * (README §7 "Retention"); the ingest step takes that only at an entry older than the horizon, and
 * refuses the range else.
 */
export function rangeStart (asked: number, entries: readonly Uint8Array[]): number {
  return entries.length === 0 ? asked : Math.max(asked, claimedSeqOf(entries[0]) ?? asked)
}

/** A range of `author`'s feed asked from `asked` on (starting at `from`), handed to the ingest step. */
export function ingestRange (
  ledger: LedgerIngest,
  { author, asked, from, entries }: { author: Uint8Array, asked: number, from: number, entries: Uint8Array[] }
): Batch {
  // a range is one feed's: its chain-2 entries verify under the last one's signature
  const outcomes = ledger.ingest(entries, { range: { author, fromSeq: asked } })
  outcomes.catch(() => {})
  return { from, asked, outcomes }
}

/**
 * Pulls `author`'s feed from `fromSeq` on, in ranges of at most MAX_RANGE_ENTRIES, the next request in
 * flight while the last batch is verified, until `maxAdded` were added. Returns the entries added.
 */
export async function pullFeed (
  source: RangeSource,
  ledger: LedgerIngest,
  { peer, author, fromSeq, maxAdded }: { peer: PeerId, author: Uint8Array, fromSeq: number, maxAdded: number },
  signal: AbortSignal
): Promise<number> {
  let next = fromSeq
  let added = 0
  let inflight: Promise<SyncResponse.Entries> | undefined = source.rangeRequest(
    peer,
    { author, fromSeq: next, limit: MAX_RANGE_ENTRIES },
    signal
  )
  // the previous batch's ingest, still writing while this one verifies
  let writing: Batch | undefined
  // the feed is over its quota in our view: stop pulling it (not the peer's fault)
  let overQuota = false
  const settle = async (batch: Batch): Promise<void> => {
    const outcome = await settleBatch(source, { peer, author }, batch, signal)
    if (outcome === 'over-quota') overQuota = true
    else added += outcome
  }
  try {
    // eslint-disable-next-line no-unmodified-loop-condition -- `added` grows inside settle()
    while (inflight != null && !signal.aborted && added < maxAdded && !overQuota) {
      const response: SyncResponse.Entries = await inflight
      inflight = undefined
      if (response.entries.length === 0) break
      const from = rangeStart(next, response.entries)
      const after = from + response.entries.length
      if (response.more) {
        inflight = source.rangeRequest(peer, { author, fromSeq: after, limit: MAX_RANGE_ENTRIES }, signal)
      }
      const batch = ingestRange(ledger, { author, asked: next, from, entries: response.entries })
      if (writing != null) await settle(writing)
      writing = batch
      next = after
    }
    if (writing != null) await settle(writing)
  } finally {
    inflight?.catch(() => {})
  }
  return added
}
