/**
 * One request, one response over a libp2p stream, each a length-prefixed frame
 * (protocols/README.md §7): the market's accept and explain protocols and the ledger's sync
 * protocol all use it. Both sides bound the frame size and the time; the server never throws
 * into libp2p, it aborts the stream instead. Payloads are bytes: decoding (bounded) is the
 * caller's, so wire formats stay in protocols/.
 */

import * as lp from 'it-length-prefixed'
import { pipe } from 'it-pipe'
import { isRequestFailure, requestFailed, type RequestFailedError } from '../errors.js'
import type { Connection, Logger, PeerId, Stream } from '@libp2p/interface'
import type { Multiaddr } from '@multiformats/multiaddr'
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal'

export interface RequestResponseComponents {
  registrar: Registrar
  connectionManager: ConnectionManager
}

/** Streams a node serves or opens at once per protocol. */
export const MAX_STREAMS_PER_PROTOCOL = 64

async function firstFrame (source: AsyncIterable<{ subarray: () => Uint8Array }>): Promise<Uint8Array | undefined> {
  const first = await source[Symbol.asyncIterator]().next()
  return first.done === true ? undefined : first.value.subarray()
}

export interface RequestOptions {
  /** the protocol to ask on */
  protocol: string
  /** the request frame */
  request: Uint8Array
  /** largest response frame accepted */
  maxResponseBytes: number
  /** bounds the whole request: dial, stream, both frames */
  signal: AbortSignal
  /**
   * send the request with the protocol proposal instead of after its acceptance (multistream
   * "lazy" select): one round trip less, for a protocol the remote is expected to speak (a
   * remote that does not closes the stream, which reads as a failed request)
   */
  lazy?: boolean
  /**
   * addresses to reach the peer at when not connected (each ending in /p2p/<peer>), e.g. from a
   * DHT provider record; without them the peer store's are used
   */
  dial?: Multiaddr[]
}

/**
 * What a request dials with: libp2p's connection manager, or a dialer that only opens connections
 * (a spec's attacker: libp2p.dial).
 */
export type RequestDialer = Pick<ConnectionManager, 'openConnection'> & Partial<Pick<ConnectionManager, 'getConnections'>>

/** Sends `request` to `peer` on `protocol` and returns the one response frame (at most `maxResponseBytes`). */
export async function requestOnce (
  connectionManager: RequestDialer,
  peer: PeerId,
  options: RequestOptions
): Promise<Uint8Array> {
  const { protocol, request, maxResponseBytes, signal } = options
  let stream: Stream | undefined
  const timedOut = (): RequestFailedError => requestFailed('timeout', `${protocol} to ${peer.toString()} timed out`)
  const onAbort = (): void => { stream?.abort(timedOut()) }
  signal.addEventListener('abort', onAbort, { once: true })
  try {
    const dial = options.dial
    const connection = await connectionFor(
      connectionManager,
      peer,
      dial != null && dial.length > 0 ? dial : undefined,
      signal
    )
    // small bounded frames: they may cross a relay's limited circuit (relay.ts) when no direct connection exists
    stream = await connection.newStream(protocol, {
      signal,
      runOnLimitedConnection: true,
      ...(options.lazy === true ? { negotiateFully: false } : {})
    })
    const response = await pipe(
      [request],
      source => lp.encode(source),
      stream,
      source => lp.decode(source, { maxDataLength: maxResponseBytes }),
      firstFrame
    )
    if (response == null) throw requestFailed('no-response', `${peer.toString()} closed ${protocol} without answering`)
    return response
  } catch (err: any) {
    stream?.abort(err instanceof Error ? err : new Error(String(err)))
    if (isRequestFailure(err)) throw err
    if (signal.aborted) throw requestFailed('timeout', timedOut().message, { cause: err })
    throw requestFailed('failed', `${protocol} to ${peer.toString()} failed: ${String(err?.message ?? err)}`, { cause: err })
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}

/**
 * An open connection to `peer` for a small request: an unlimited one if there is one, else a
 * relay's limited circuit when that is what is open (small frames fit its bounds; long streams
 * ask for a direct path themselves, direct-path.ts), else a new dial. Dialing again while a
 * circuit is open would let libp2p try the peer's relayed addresses one by one under this
 * request's whole time limit, and a stalled relay among them would spend all of it.
 */
async function connectionFor (
  connections: RequestDialer,
  peer: PeerId,
  dial: Multiaddr[] | undefined,
  signal: AbortSignal
): Promise<Connection> {
  const open = (connections.getConnections?.(peer) ?? []).filter(c => c.status === 'open')
  const existing = open.find(c => c.limits == null) ?? open[0]
  if (existing != null) return existing
  return await connections.openConnection(dial ?? peer, { signal })
}

export type RequestHandler = (request: Uint8Array, remote: PeerId, signal: AbortSignal) => Promise<Uint8Array>

export interface ServeOptions {
  /** largest request frame accepted */
  maxRequestBytes: number
  /** time for reading the request and answering it */
  timeoutMs: number
  log: Logger
}

/**
 * Serves `protocol`: reads one bounded frame, answers with `handler`'s bytes, closes. A handler
 * error aborts the stream.
 */
export async function serveOnce (
  registrar: Registrar,
  protocol: string,
  handler: RequestHandler,
  opts: ServeOptions
): Promise<void> {
  await registrar.handle(
    protocol,
    ({ stream, connection }) => {
      const signal = AbortSignal.timeout(opts.timeoutMs)
      const onAbort = (): void => { stream.abort(requestFailed('timeout', `${protocol} request timed out`)) }
      signal.addEventListener('abort', onAbort, { once: true })
      pipe(
        stream,
        (source) => lp.decode(source, { maxDataLength: opts.maxRequestBytes }),
        async function * (source) {
          const request = await firstFrame(source)
          if (request == null) return
          yield await handler(request, connection.remotePeer, signal)
        },
        (source) => lp.encode(source),
        stream
      ).catch((err: unknown) => {
        opts.log('%s from %p failed: %e', protocol, connection.remotePeer, err)
        stream.abort(err instanceof Error ? err : new Error(String(err)))
      }).finally(() => {
        signal.removeEventListener('abort', onAbort)
      })
    },
    {
      maxInboundStreams: MAX_STREAMS_PER_PROTOCOL,
      maxOutboundStreams: MAX_STREAMS_PER_PROTOCOL,
      runOnLimitedConnection: true
    }
  )
}
