/**
 * The sync protocol /idlegrid/ledger/sync/4.0.0: one length-prefixed SyncRequest, one
 * SyncResponse per stream (protocols/README.md §7), over node's request-response helper,
 * which bounds frame sizes and time and never throws into libp2p. This file adds the
 * messages' bounded decoding and the protocol's limits.
 */

import { decodeBounded, LIMITS, MAX_BYTES } from '../../../protocols/codec.js'
import { PROTOCOL } from '../../../protocols/ids.js'
import { SyncRequest, SyncResponse } from '../../../protocols/ledger.js'
import { isRequestFailure, requestOnce, serveOnce } from '../../node/index.js'
import { LedgerError } from '../errors.js'
import type { Logger, PeerId } from '@libp2p/interface'
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal'

export { SyncRequest, SyncResponse }

/**
 * Most entries in one range response (protocols/README.md §7 "Range size"). Each range costs a
 * stream, a request and its handler on both sides: ranges of 1,024 instead of 256 cut a fresh
 * sync's CPU an entry by about a sixth (docs/log/scale-runs.md).
 */
export const MAX_RANGE_ENTRIES = 1024
/**
 * What a range request's `limit` 0 asks for, and the most that nodes from before ranges of 1,024
 * ask and decode: a responder never sends more than asked, so they never get a range they refuse.
 */
export const DEFAULT_RANGE_ENTRIES = 256
/** Entries bytes in one response, leaving room for framing within the 4 MiB bound. */
export const MAX_RANGE_BYTES = MAX_BYTES.syncResponse - 64 * 1024
/** Most heads in one response (one page; the client asks for the next after the last author). */
export const MAX_HEADS = 10_000

/**
 * Sends one request to a connected `peer` and returns its decoded response. A late, missing
 * or undecodable answer is a LedgerError ERR_LEDGER_SYNC; a stream that could not be opened or broke
 * stays the NodeError (ERR_REQUEST_RESPONSE) it is.
 */
export async function syncRequest (
  connectionManager: ConnectionManager,
  peer: PeerId,
  request: SyncRequest,
  signal: AbortSignal
): Promise<SyncResponse> {
  let response: Uint8Array
  try {
    response = await requestOnce(connectionManager, peer, {
      protocol: PROTOCOL.ledgerSync,
      request: SyncRequest.encode(request),
      maxResponseBytes: MAX_BYTES.syncResponse,
      signal,
      // the request goes with the protocol proposal, a round trip less a range: a sync asks peers
      // whose identify named the protocol (connect-sync.ts; one that did not identify in time is
      // asked anyway), and a peer that does not speak it closes the stream, a failed request as a
      // refused proposal was
      lazy: true
    })
  } catch (err) {
    if (isRequestFailure(err) && err.reason === 'timeout') throw new LedgerError('ERR_LEDGER_SYNC', `sync with ${peer.toString()} timed out`, { cause: err })
    if (isRequestFailure(err) && err.reason === 'no-response') throw new LedgerError('ERR_LEDGER_SYNC', `${peer.toString()} closed the sync stream without answering`, { cause: err })
    throw err
  }
  try {
    return decodeBounded(SyncResponse, response, 'sync response', MAX_BYTES.syncResponse, LIMITS.syncResponse)
  } catch (err) {
    throw new LedgerError('ERR_LEDGER_SYNC', err instanceof Error ? err.message : String(err), { cause: err })
  }
}

export type SyncHandler = (request: SyncRequest, remote: PeerId, signal: AbortSignal) => Promise<SyncResponse>

/** Serves the sync protocol: each stream's one bounded request answered by `handler`. */
export async function serveSync (
  registrar: Registrar,
  timeoutMs: number,
  handler: SyncHandler,
  log: Logger
): Promise<void> {
  await serveOnce(registrar, PROTOCOL.ledgerSync, async (bytes, remote, signal) => {
    let request: SyncRequest
    try {
      request = decodeBounded(SyncRequest, bytes, 'sync request', MAX_BYTES.syncRequest)
    } catch (err) {
      throw new LedgerError('ERR_LEDGER_SYNC', err instanceof Error ? err.message : String(err), { cause: err })
    }
    return SyncResponse.encode(await handler(request, remote, signal))
  }, { maxRequestBytes: MAX_BYTES.syncRequest, timeoutMs, log })
}
