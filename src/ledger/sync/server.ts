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
          more: page.more
        }
      }
    }
    if (request.range != null) {
      const author = parseAuthor(request.range.author)
      if (author == null || request.range.fromSeq < 1n) throw new LedgerError('ERR_LEDGER_SYNC', 'bad range request')
      // never more than asked: a node from before ranges of 1,024 decodes at most 256
      const limit = Math.min(
        MAX_RANGE_ENTRIES,
        Math.max(1, request.range.limit === 0 ? DEFAULT_RANGE_ENTRIES : request.range.limit)
      )
      const from =
        request.range.fromSeq > BigInt(Number.MAX_SAFE_INTEGER)
          ? Number.MAX_SAFE_INTEGER
          : Number(request.range.fromSeq)
      const { entries, more } = await store.range(request.range.author, from, limit, MAX_RANGE_BYTES)
      return { entries: { entries, more } }
    }
    throw new LedgerError('ERR_LEDGER_SYNC', 'empty sync request')
  }
}
