/**
 * One request, one response over a libp2p stream, length-prefixed (protocols/README.md §7):
 * the accept and explain protocols. Both sides bound the frame size and the time; the
 * server never throws into libp2p, it aborts the stream instead.
 */

import * as lp from 'it-length-prefixed'
import { pipe } from 'it-pipe'
import { MarketStreamError } from './errors.js'
import type { Logger, PeerId, Stream } from '@libp2p/interface'
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal'

export interface StreamComponents {
  registrar: Registrar
  connectionManager: ConnectionManager
}

/** Streams a node serves or opens at once per protocol. */
const MAX_STREAMS = 64

async function firstFrame (source: AsyncIterable<{ subarray: () => Uint8Array }>): Promise<Uint8Array | undefined> {
  const first = await source[Symbol.asyncIterator]().next()
  return first.done === true ? undefined : first.value.subarray()
}

/** Sends `request` to `peer` on `protocol` and returns the one response frame. */
export async function requestOnce (components: StreamComponents, peer: PeerId, protocol: string, request: Uint8Array, maxResponseBytes: number, signal: AbortSignal): Promise<Uint8Array> {
  let stream: Stream | undefined
  try {
    const connection = await components.connectionManager.openConnection(peer, { signal })
    stream = await connection.newStream(protocol, { signal })
    const opened = stream
    const onAbort = (): void => { opened.abort(new MarketStreamError('timeout', `${protocol} to ${peer.toString()} timed out`)) }
    signal.addEventListener('abort', onAbort, { once: true })
    try {
      const response = await pipe([request], (source) => lp.encode(source), opened, (source) => lp.decode(source, { maxDataLength: maxResponseBytes }), firstFrame)
      if (response == null) throw new MarketStreamError('no-response', `${peer.toString()} closed ${protocol} without answering`)
      return response
    } finally {
      signal.removeEventListener('abort', onAbort)
    }
  } catch (err: any) {
    stream?.abort(err)
    if (err instanceof MarketStreamError) throw err
    if (signal.aborted) throw new MarketStreamError('timeout', `${protocol} to ${peer.toString()} timed out`, { cause: err })
    throw new MarketStreamError('failed', `${protocol} to ${peer.toString()} failed: ${String(err?.message ?? err)}`, { cause: err })
  }
}

export type OnceHandler = (request: Uint8Array, remote: PeerId, signal: AbortSignal) => Promise<Uint8Array>

/** Serves `protocol`: reads one bounded frame, answers with `handler`'s bytes, closes. */
export async function serveOnce (components: StreamComponents, protocol: string, maxRequestBytes: number, timeoutMs: number, handler: OnceHandler, log: Logger): Promise<void> {
  await components.registrar.handle(protocol, ({ stream, connection }) => {
    const signal = AbortSignal.timeout(timeoutMs)
    const onAbort = (): void => { stream.abort(new MarketStreamError('timeout', `${protocol} request timed out`)) }
    signal.addEventListener('abort', onAbort, { once: true })
    pipe(
      stream,
      (source) => lp.decode(source, { maxDataLength: maxRequestBytes }),
      async function * (source) {
        const request = await firstFrame(source)
        if (request == null) return
        yield await handler(request, connection.remotePeer, signal)
      },
      (source) => lp.encode(source),
      stream
    ).catch((err: any) => {
      log('%s from %p failed: %e', protocol, connection.remotePeer, err)
      stream.abort(err)
    }).finally(() => {
      signal.removeEventListener('abort', onAbort)
    })
  }, { maxInboundStreams: MAX_STREAMS, maxOutboundStreams: MAX_STREAMS })
}
