/**
 * A libp2p MultiaddrConnection over a Node socket: a TLS socket once the handshake is done, or
 * the TCP socket itself while another encrypter runs over it.
 */
import { TimeoutError, type ComponentLogger, type MultiaddrConnection } from '@libp2p/interface'
import { duplex } from 'stream-to-it'
import type { Multiaddr } from '@multiformats/multiaddr'
import type { Socket } from 'node:net'
import type { Uint8ArrayList } from 'uint8arraylist'

/** libp2p's TCP defaults: a silent socket closes after 2 minutes, a closing one waits 500 ms for the peer */
export const SOCKET_INACTIVITY_TIMEOUT_MS = 2 * 60_000
export const SOCKET_CLOSE_TIMEOUT_MS = 500

export interface SocketConnectionInit {
  remoteAddr: Multiaddr
  direction: 'inbound' | 'outbound'
  logger: ComponentLogger
  inactivityTimeoutMs?: number
  closeTimeoutMs?: number
}

export function socketConnection (socket: Socket, init: SocketConnectionInit): MultiaddrConnection {
  const log = init.logger.forComponent('idlegrid:transport:connection')
  const closeTimeoutMs = init.closeTimeoutMs ?? SOCKET_CLOSE_TIMEOUT_MS
  const streams = duplex<Uint8Array>(socket)
  let closing: Promise<void> | undefined

  const closed = (): void => { maConn.timeline.close ??= Date.now() }
  socket.on('error', err => {
    log('%s socket error - %e', init.direction, err)
    socket.destroy()
    closed()
  })
  socket.once('close', closed)
  socket.setTimeout(init.inactivityTimeoutMs ?? SOCKET_INACTIVITY_TIMEOUT_MS)
  socket.once('timeout', () => {
    log('%s socket idle too long', init.direction)
    socket.destroy(new TimeoutError('socket inactivity timeout'))
    closed()
  })

  const maConn: MultiaddrConnection = {
    remoteAddr: init.remoteAddr,
    timeline: { open: Date.now() },
    log,
    source: streams.source,
    async sink (source: AsyncIterable<Uint8Array | Uint8ArrayList> | Iterable<Uint8Array | Uint8ArrayList>) {
      try {
        // yamux hands over frames as lists: each piece goes to the socket as it is, uncopied
        await streams.sink((async function * () {
          for await (const chunk of source) {
            if (chunk instanceof Uint8Array) yield chunk
            else yield * chunk
          }
        })())
      } catch (err: any) {
        if (err?.type !== 'aborted') log('%s sink error - %e', init.direction, err)
      }
      socket.end()
    },
    async close (options = {}) {
      if (socket.destroyed) return
      closing ??= (async () => {
        const signal = options.signal ?? AbortSignal.timeout(closeTimeoutMs)
        socket.end()
        try {
          // as libp2p's TCP transport: what is queued goes out, then the socket goes
          if (socket.writableLength > 0) await waitFor(socket, 'drain', signal)
        } catch {
          // not drained in time: drop what is left
        } finally {
          socket.destroy()
          closed()
        }
      })()
      await closing
    },
    abort (err: Error) {
      log('%s socket abort - %e', init.direction, err)
      socket.destroy()
      closed()
    }
  }
  return maConn
}

/** Resolves on `event`, rejects when `signal` aborts first or the socket closes. */
async function waitFor (socket: Socket, event: string, signal: AbortSignal): Promise<void> {
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
