/**
 * libp2p's TLS 1.3 handshake (https://github.com/libp2p/specs/blob/master/tls/tls.md) done by
 * Node's TLS on the TCP socket itself, so records are encrypted and decrypted natively, never
 * through a JS stream. Both sides present the certificate of certificate.ts and check the
 * other's; ALPN carries the stream muxer's choice (the "early muxer negotiation" of
 * @libp2p/tls), with "libp2p" meaning the muxer is negotiated afterwards.
 */
import { connect as tlsConnect, TLSSocket, type SecureContext } from 'node:tls'
import { verifyPeerCertificate } from './certificate.js'
import { TransportError } from './errors.js'
import type { PeerId } from '@libp2p/interface'
import type { Socket } from 'node:net'

export const TLS_PROTOCOL = '/tls/1.0.0'
/** the ALPN value of a peer that negotiates its muxer after the handshake */
const ALPN_LIBP2P = 'libp2p'

export interface SecureInit {
  secureContext: SecureContext
  /** the muxers this node speaks, in its order of preference */
  muxers: readonly string[]
  /** the peer the dialer meant to reach (from the address), when it knows */
  expected?: PeerId
  signal: AbortSignal
}

export interface Secured {
  socket: TLSSocket
  remotePeer: PeerId
  /** the muxer ALPN chose, or undefined when it is negotiated afterwards */
  muxer?: string
}

/** Runs the handshake on `socket` as the dialer (client) or listener (server). */
export async function secureSocket (socket: Socket, isServer: boolean, init: SecureInit): Promise<Secured> {
  init.signal.throwIfAborted()
  const options = {
    secureContext: init.secureContext,
    // the certificate is self-signed by design: certificate.ts checks it instead of a CA
    rejectUnauthorized: false
  }
  const tlsSocket = isServer
    ? new TLSSocket(socket, {
      ...options,
      isServer: true,
      requestCert: true,
      ALPNCallback: ({ protocols }: { protocols: string[] }) =>
        protocols.find(p => init.muxers.includes(p)) ?? (protocols.includes(ALPN_LIBP2P) ? ALPN_LIBP2P : undefined)
    })
    : tlsConnect({ ...options, socket, ALPNProtocols: [...init.muxers, ALPN_LIBP2P] })
  try {
    await handshake(tlsSocket, isServer, init.signal)
    const remotePeer = await verifyPeerCertificate(peerCertificate(tlsSocket), init.expected)
    const alpn = tlsSocket.alpnProtocol
    const muxer = typeof alpn === 'string' && init.muxers.includes(alpn) ? alpn : undefined
    if (typeof alpn === 'string' && alpn !== ALPN_LIBP2P && muxer == null) throw new TransportError('ERR_TLS_HANDSHAKE', `the peer chose ALPN "${alpn.slice(0, 64)}", which is neither a muxer of ours nor "${ALPN_LIBP2P}"`)
    return { socket: tlsSocket, remotePeer, muxer }
  } catch (err) {
    tlsSocket.destroy()
    socket.destroy()
    throw err
  }
}

async function handshake (socket: TLSSocket, isServer: boolean, signal: AbortSignal): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const done = (err?: Error): void => {
      socket.off(isServer ? 'secure' : 'secureConnect', onSecure)
      socket.off('error', onError)
      socket.off('close', onClose)
      signal.removeEventListener('abort', onAbort)
      if (err != null) reject(err)
      else resolve()
    }
    const onSecure = (): void => { done() }
    const onError = (err: Error): void => { done(new TransportError('ERR_TLS_HANDSHAKE', `TLS handshake failed: ${err.message}`, { cause: err })) }
    const onClose = (): void => { done(new TransportError('ERR_TLS_HANDSHAKE', 'the connection closed during the TLS handshake')) }
    const onAbort = (): void => { done(signal.reason instanceof Error ? signal.reason : new TransportError('ERR_TLS_HANDSHAKE', 'the TLS handshake was aborted')) }
    socket.once(isServer ? 'secure' : 'secureConnect', onSecure)
    socket.once('error', onError)
    socket.once('close', onClose)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/** The peer's one certificate, DER; the spec asks to abort when a peer sends a chain. */
function peerCertificate (socket: TLSSocket): Uint8Array {
  const cert = socket.getPeerCertificate(true)
  if (cert == null || cert.raw == null) throw new TransportError('ERR_TLS_HANDSHAKE', 'the peer sent no certificate')
  const issuer = cert.issuerCertificate
  if (issuer != null && issuer !== cert && !issuer.raw.equals(cert.raw)) throw new TransportError('ERR_TLS_HANDSHAKE', 'the peer sent more than one certificate')
  return cert.raw
}
