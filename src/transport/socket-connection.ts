/**
 * A libp2p MultiaddrConnection over a TCP socket that keeps the socket within reach of the
 * native TLS encrypter (native-tls.ts): libp2p's own TCP transport hides it in closures.
 */
import { TimeoutError, type ComponentLogger, type MultiaddrConnection } from '@libp2p/interface'
import { duplex } from 'stream-to-it'
import type { Multiaddr } from '@multiformats/multiaddr'
import type { Socket } from 'node:net'
import type { Duplex, Source } from 'it-stream-types'
import type { Uint8ArrayList } from 'uint8arraylist'

/** libp2p's TCP defaults: a silent socket closes after 2 minutes, a closing one waits 500 ms to drain */
export const SOCKET_INACTIVITY_TIMEOUT_MS = 2 * 60_000
export const SOCKET_CLOSE_TIMEOUT_MS = 500

/** Where a connection made by this transport keeps its socket. */
export const NATIVE_SOCKET = Symbol.for('idlegrid.transport.native-socket')

export interface NativeSocket {
  socket: Socket
  /** the connection's source as made: another one means bytes were read ahead of the encrypter */
  source: unknown
  /** Moves the connection's close, abort, timeout and close time onto `secured` (a TLS socket over `socket`). */
  adopt: (secured: Socket) => void
}

export interface SocketConnectionInit {
  remoteAddr: Multiaddr
  direction: 'inbound' | 'outbound'
  logger: ComponentLogger
  inactivityTimeoutMs?: number
  closeTimeoutMs?: number
}

type SocketSource = AsyncGenerator<Uint8Array>
type SocketSink = (source: Source<Uint8Array | Uint8ArrayList>) => Promise<void>

/** A socket as a libp2p duplex; yamux's frames (lists) go to the socket piece by piece, uncopied. */
export function socketDuplex (
  socket: Socket,
  onSinkError: (err: unknown) => void
): Duplex<SocketSource, Source<Uint8Array | Uint8ArrayList>, Promise<void>> {
  const streams = duplex<Uint8Array>(socket)
  const sink: SocketSink = async (source) => {
    try {
      await streams.sink((async function * () {
        for await (const chunk of source) {
          if (chunk instanceof Uint8Array) yield chunk
          else yield * chunk
        }
      })())
    } catch (err: any) {
      if (err?.type !== 'aborted') onSinkError(err)
    }
    socket.end()
  }
  return { source: streams.source as SocketSource, sink }
}

export function socketConnection (
  socket: Socket,
  init: SocketConnectionInit
): MultiaddrConnection & { [NATIVE_SOCKET]: NativeSocket } {
  const log = init.logger.forComponent('idlegrid:transport:connection')
  const closeTimeoutMs = init.closeTimeoutMs ?? SOCKET_CLOSE_TIMEOUT_MS
  const inactivityTimeoutMs = init.inactivityTimeoutMs ?? SOCKET_INACTIVITY_TIMEOUT_MS
  /** the socket close and abort act on: the TCP socket, or the TLS socket over it once adopted */
  let current = socket
  let closing: Promise<void> | undefined

  const closed = (): void => { maConn.timeline.close ??= Date.now() }
  const watch = (s: Socket): void => {
    s.on('error', err => {
      log('%s socket error - %e', init.direction, err)
      s.destroy()
      closed()
    })
    s.once('close', closed)
    s.setTimeout(inactivityTimeoutMs)
    s.once('timeout', () => {
      log('%s socket idle too long', init.direction)
      s.destroy(new TimeoutError('socket inactivity timeout'))
      closed()
    })
  }
  watch(socket)
  const streams = socketDuplex(socket, err => { log('%s sink error - %e', init.direction, err) })

  const maConn: MultiaddrConnection & { [NATIVE_SOCKET]: NativeSocket } = {
    remoteAddr: init.remoteAddr,
    timeline: { open: Date.now() },
    log,
    source: streams.source,
    sink: streams.sink,
    async close (options = {}) {
      const s = current
      if (s.destroyed) return
      closing ??= (async () => {
        const signal = options.signal ?? AbortSignal.timeout(closeTimeoutMs)
        s.end()
        try {
          // as libp2p's TCP transport: what is queued goes out, then the socket goes
          if (s.writableLength > 0) await waitFor(s, 'drain', signal)
        } catch {
          // not drained in time: drop what is left
        } finally {
          s.destroy()
          closed()
        }
      })()
      await closing
    },
    abort (err: Error) {
      log('%s socket abort - %e', init.direction, err)
      current.destroy()
      closed()
    },
    [NATIVE_SOCKET]: {
      socket,
      source: streams.source,
      adopt (secured: Socket) {
        current = secured
        socket.setTimeout(0)
        watch(secured)
      }
    }
  }
  return maConn
}

/** Resolves on `event`, rejects when `signal` aborts first or the socket closes. */
export async function waitFor (socket: Socket, event: string, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted()
  await new Promise<void>((resolve, reject) => {
    const done = (err?: unknown): void => {
      socket.off(event, onEvent)
      socket.off('close', onClose)
      signal.removeEventListener('abort', onAbort)
      if (err != null) reject(err)
      else resolve()
    }
    const onEvent = (): void => { done() }
    const onClose = (): void => { done(new Error('socket closed')) }
    const onAbort = (): void => { done(signal.reason) }
    socket.once(event, onEvent)
    socket.once('close', onClose)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}
