/**
 * A real node's sync protocol served through a wrapper, for the sync specs: the node's own
 * answers (SyncServer over its store), counted by request kind, optionally as a node from before
 * `ranges` requests (its heads pages do not say `answers_ranges`, and it refuses a `ranges`
 * request as an empty one, which is what such a node's decoder makes of it), or replaced by a
 * lie.
 */
import { logger } from '@libp2p/logger'
import { PROTOCOL } from '../../protocols/ids.js'
import { parseAuthor } from '../../src/ledger/entries/entry.js'
import { LedgerError } from '../../src/ledger/errors.js'
import { serveSync, type SyncRequest, type SyncResponse } from '../../src/ledger/sync/protocol.js'
import { SyncServer } from '../../src/ledger/sync/server.js'
import type { LedgerService } from '../../src/ledger/service/ledger-service.js'
import type { SyncClient } from '../../src/ledger/sync/client.js'
import type { IdlegridNode } from '../../src/node/index.js'
import type { PeerId } from '@libp2p/interface'
import type { Registrar } from '@libp2p/interface-internal'

export interface SyncRequestCounts {
  heads: number
  range: number
  ranges: number
  rangesOfRanges: number
  /** the authors (peer ids) asked in single range requests, with how often */
  rangeAuthors: Map<string, number>
}

export interface WrapOptions {
  /** answer as a node from before `ranges` requests */
  beforeRanges?: boolean
  /** replaces the node's answer to a `ranges` request */
  lieToRanges?: (request: SyncRequest.Ranges, honest: SyncResponse) => SyncResponse
  /** answers a single `range` request this much later (a slow holder) */
  delayRangeMs?: number
}

/** Serves `node`'s sync protocol through the wrapper; returns the live counts of what it was asked. */
export async function wrapSync (node: IdlegridNode, opts: WrapOptions = {}): Promise<SyncRequestCounts> {
  const ledger = (node.libp2p.services as unknown as { ledger: LedgerService }).ledger
  // its own answers; a heads request's hint (the asker's own feed) is not followed up here
  const server = new SyncServer(() => ledger.store, { considerHint: () => false } as unknown as SyncClient)
  const counts: SyncRequestCounts = { heads: 0, range: 0, ranges: 0, rangesOfRanges: 0, rangeAuthors: new Map() }
  await node.libp2p.unhandle(PROTOCOL.ledgerSync)
  await serveSync(
    node.libp2p as unknown as Registrar,
    10_000,
    async (request: SyncRequest, remote: PeerId): Promise<SyncResponse> => {
      if (request.heads != null) counts.heads++
      if (request.range != null) {
        counts.range++
        const author = parseAuthor(request.range.author)?.id ?? '?'
        counts.rangeAuthors.set(author, (counts.rangeAuthors.get(author) ?? 0) + 1)
        if (opts.delayRangeMs != null) await new Promise(resolve => setTimeout(resolve, opts.delayRangeMs))
      }
      if (request.ranges != null) {
        counts.ranges++
        counts.rangesOfRanges += request.ranges.ranges.length
        if (opts.beforeRanges === true) throw new LedgerError('ERR_LEDGER_SYNC', 'empty sync request')
      }
      const answer = await server.answer(request, remote)
      if (answer.heads != null && opts.beforeRanges === true) answer.heads.answersRanges = false
      if (request.ranges != null && opts.lieToRanges != null) return opts.lieToRanges(request.ranges, answer)
      return answer
    },
    logger('test:sync-responder')
  )
  return counts
}
