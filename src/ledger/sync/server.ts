/**
 * The sync protocol's server side: answers a heads request with one page of the heads we hold
 * as regular feeds (the quarantine is never served), in key order after the requester's
 * cursor, and pulls the requester's own feed when its hint says it holds more of it than we
 * do; a range request with the entries we hold, within the response bounds.
 */

import { parseAuthor } from '../entries/entry.js'
import { ledgerClosed, LedgerError } from '../errors.js'
import { DEFAULT_RANGE_ENTRIES, MAX_HEADS, MAX_RANGE_BYTES, MAX_RANGE_ENTRIES, type SyncRequest, type SyncResponse } from './protocol.js'
import type { LedgerStore } from '../store/store.js'
import type { SyncClient } from './client.js'
import type { PeerId } from '@libp2p/interface'

export class SyncServer {
  private readonly store: () => LedgerStore | undefined
  private readonly client: SyncClient

  constructor (store: () => LedgerStore | undefined, client: SyncClient) {
    this.store = store
    this.client = client
  }

  async answer (request: SyncRequest, remote: PeerId): Promise<SyncResponse> {
    const store = this.store()
    if (store == null) throw ledgerClosed()
    if (request.heads != null) {
      const hint = request.heads
      if (hint.ownAuthor.length > 0) this.client.considerHint(remote, hint.ownAuthor, Number(hint.ownSeq))
      if (hint.afterAuthor.length > 0 && parseAuthor(hint.afterAuthor) == null) throw new LedgerError('ERR_LEDGER_SYNC', 'bad heads request: after_author is not a peer id')
      const limit = hint.limit === 0 ? MAX_HEADS : Math.min(MAX_HEADS, hint.limit)
      const page = await store.headsPage(hint.afterAuthor, limit)
      return {
        heads: {
          heads: page.heads.map(h => ({ author: h.author, seq: BigInt(h.seq), hash: h.hash })),
          more: page.more,
          answersRanges: true
        }
      }
    }
    if (request.range != null) {
      return {
        entries: await answerRange(store, request.range, checkRange(request.range), {
          entries: MAX_RANGE_ENTRIES,
          bytes: MAX_RANGE_BYTES
        })
      }
    }
    if (request.ranges != null) {
      const asked = request.ranges.ranges
      if (asked.length === 0) throw new LedgerError('ERR_LEDGER_SYNC', 'bad ranges request: no range')
      // every range checked before any is read: a bad one refuses the request whole
      const authorIds = asked.map(checkRange)
      // one response's bounds, shared in the request's order: a range past them gets what is left
      // (maybe nothing, with `more` when we hold its entries)
      const budget = { entries: MAX_RANGE_ENTRIES, bytes: MAX_RANGE_BYTES }
      const ranges: SyncResponse.Entries[] = []
      for (const [i, range] of asked.entries()) ranges.push(await answerRange(store, range, authorIds[i], budget))
      return { ranges: { ranges } }
    }
    throw new LedgerError('ERR_LEDGER_SYNC', 'empty sync request')
  }
}

/** A range request must name an author and a seq of 1 or more. Returns the author's id. */
function checkRange (range: SyncRequest.Range): string {
  const author = parseAuthor(range.author)
  if (author == null || range.fromSeq < 1n) throw new LedgerError('ERR_LEDGER_SYNC', 'bad range request')
  return author.id
}

/**
 * The entries we hold of one range (checked: `authorId` is its author's), within what is left of
 * the response's `budget` (taken from it). Never more than asked: a node from before ranges of
 * 1,024 decodes at most 256.
 */
async function answerRange (
  store: LedgerStore,
  range: SyncRequest.Range,
  authorId: string,
  budget: { entries: number, bytes: number }
): Promise<SyncResponse.Entries> {
  const from = range.fromSeq > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(range.fromSeq)
  const asked = Math.min(MAX_RANGE_ENTRIES, Math.max(1, range.limit === 0 ? DEFAULT_RANGE_ENTRIES : range.limit))
  const limit = Math.min(asked, budget.entries)
  if (limit <= 0 || budget.bytes <= 0) {
    const head = store.head(authorId)
    return { entries: [], more: head != null && from <= head.seq }
  }
  const answer = await store.range(range.author, from, limit, budget.bytes)
  budget.entries -= answer.entries.length
  for (const entry of answer.entries) budget.bytes -= entry.length
  return answer
}
