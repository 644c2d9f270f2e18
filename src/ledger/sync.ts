/**
 * The sync protocol /idlegrid/ledger/sync/1.0.0: one length-prefixed SyncRequest, one
 * SyncResponse per stream (protocols/README.md §7). Both sides bound frame sizes and time;
 * the server never throws into libp2p.
 */

import * as lp from 'it-length-prefixed'
import { pipe } from 'it-pipe'
import { decodeBounded, LIMITS, MAX_BYTES } from '../../protocols/codec.js'
import { SyncRequest, SyncResponse } from '../../protocols/ledger.js'
import { SyncProtocolError } from './errors.js'
import type { PeerId, Stream } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'

export { SyncRequest, SyncResponse }

/** Most entries in one range response (protocols/README.md). */
export const MAX_RANGE_ENTRIES = 256
/** Entries bytes in one response, leaving room for framing within the 4 MiB bound. */
export const MAX_RANGE_BYTES = MAX_BYTES.syncResponse - 64 * 1024
/** Most heads in one response. */
export const MAX_HEADS = 10_000

async function firstFrame (source: AsyncIterable<{ subarray: () => Uint8Array }>): Promise<Uint8Array | undefined> {
  const first = await source[Symbol.asyncIterator]().next()
  return first.done === true ? undefined : first.value.subarray()
}

/** Sends one request to a connected `peer` and returns its decoded response. */
export async function syncRequest (connectionManager: ConnectionManager, protocol: string, peer: PeerId, request: SyncRequest, signal: AbortSignal): Promise<SyncResponse> {
  let stream: Stream | undefined
  const onAbort = (): void => { stream?.abort(new SyncProtocolError(`sync with ${peer.toString()} timed out`)) }
  signal.addEventListener('abort', onAbort, { once: true })
  try {
    const connection = await connectionManager.openConnection(peer, { signal })
    stream = await connection.newStream(protocol, { signal })
    const response = await pipe([SyncRequest.encode(request)], (source) => lp.encode(source), stream, (source) => lp.decode(source, { maxDataLength: MAX_BYTES.syncResponse }), firstFrame)
    if (response == null) throw new SyncProtocolError(`${peer.toString()} closed the sync stream without answering`)
    try {
      return decodeBounded(SyncResponse, response, 'sync response', MAX_BYTES.syncResponse, LIMITS.syncResponse)
    } catch (err) {
      throw new SyncProtocolError(err instanceof Error ? err.message : String(err))
    }
  } catch (err) {
    stream?.abort(err instanceof Error ? err : new Error(String(err)))
    if (signal.aborted && !(err instanceof SyncProtocolError)) throw new SyncProtocolError(`sync with ${peer.toString()} timed out`)
    throw err
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}

export type SyncHandler = (request: SyncRequest, remote: PeerId, signal: AbortSignal) => Promise<SyncResponse>

/** The server side of one stream: read a bounded request, answer, close. */
export function serveSyncStream (stream: Stream, remote: PeerId, timeoutMs: number, handler: SyncHandler, onError: (err: unknown) => void): void {
  const signal = AbortSignal.timeout(timeoutMs)
  const onAbort = (): void => { stream.abort(new SyncProtocolError('sync request timed out')) }
  signal.addEventListener('abort', onAbort, { once: true })
  pipe(
    stream,
    (source) => lp.decode(source, { maxDataLength: MAX_BYTES.syncRequest }),
    async function * (source) {
      const bytes = await firstFrame(source)
      if (bytes == null) return
      let request: SyncRequest
      try {
        request = decodeBounded(SyncRequest, bytes, 'sync request', MAX_BYTES.syncRequest)
      } catch (err) {
        throw new SyncProtocolError(err instanceof Error ? err.message : String(err))
      }
      yield SyncResponse.encode(await handler(request, remote, signal))
    },
    (source) => lp.encode(source),
    stream
  ).catch((err: unknown) => {
    onError(err)
    stream.abort(err instanceof Error ? err : new Error(String(err)))
  }).finally(() => {
    signal.removeEventListener('abort', onAbort)
  })
}
