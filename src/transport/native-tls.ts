/**
 * libp2p's TLS encrypter (`/tls/1.0.0`), run natively when it can be: on a connection of this
 * folder's TCP transport whose socket libp2p's negotiation left unread, Node's TLS takes the
 * socket itself (secure.ts), so records are encrypted and decrypted in C++, not through the JS
 * stream @libp2p/tls wraps. On any other connection (WebSockets; a TCP one whose peer sent
 * bytes ahead of the answer, which libp2p then holds) it is @libp2p/tls itself. The wire is the
 * same either way.
 */
import { tls } from '@libp2p/tls'
import { createSecureContext, type SecureContext } from 'node:tls'
import { createCertificate } from './certificate.js'
import { checkDialedPeer } from './dialed-peer.js'
import { secureSocket, TLS_PROTOCOL } from './secure.js'
import { NATIVE_SOCKET, socketDuplex, waitFor, type NativeSocket } from './socket-connection.js'
import type { ComponentLogger, ConnectionEncrypter, Logger, MultiaddrConnection, PrivateKey, SecureConnectionOptions, SecuredConnection, Upgrader } from '@libp2p/interface'

export interface NativeTlsComponents {
  privateKey: PrivateKey
  logger: ComponentLogger
  upgrader: Upgrader
}

/** a handshake given no signal (libp2p's upgrader always gives one) ends after this */
const HANDSHAKE_TIMEOUT_MS = 30_000

/** The encrypter, told on each dial the peer the dialed address names (dialed-peer.ts), on both of its paths. */
export function nativeTls (): (components: NativeTlsComponents) => ConnectionEncrypter {
  return checkDialedPeer((components: NativeTlsComponents) => new NativeTls(components))
}

/**
 * Signatures a handshake may carry, either way: ECDSA and Ed25519, not RSA. Every libp2p TLS
 * implementation makes ECDSA P-256 certificates (ours too: certificate.ts); an RSA key is
 * chosen only by a peer that wants its listener to verify with a huge public exponent (each
 * handshake then cost ~6x the CPU). Offered no RSA scheme, such a peer cannot sign at all, and
 * no RSA signature is ever checked.
 */
export const TLS_SIGNATURE_ALGORITHMS = 'ecdsa_secp256r1_sha256:ecdsa_secp384r1_sha384:ecdsa_secp521r1_sha512:ed25519'

/** The TLS context of a node's native handshakes: TLS 1.3 only, with its certificate, no RSA. */
export function tlsContext (cert: string, key: string): SecureContext {
  return createSecureContext({ cert, key, minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3', sigalgs: TLS_SIGNATURE_ALGORITHMS })
}

/** How many handshakes took each path in this process (the transport spec reads it). */
export const nativeTlsStats = { native: 0, stream: 0 }

class NativeTls implements ConnectionEncrypter {
  readonly protocol = TLS_PROTOCOL
  private readonly log: Logger
  private readonly stock: ConnectionEncrypter
  private context: Promise<SecureContext> | undefined

  constructor (private readonly components: NativeTlsComponents) {
    this.log = components.logger.forComponent('idlegrid:transport:tls')
    this.stock = tls()(components as Parameters<ReturnType<typeof tls>>[0])
    // made now, while the node starts (its key pair is generated off the main thread), not on
    // the first handshake: a fresh node's first connection, and a peer's first answer to one,
    // waited ~25 ms for it
    this.context = this.makeContext()
    this.context.catch(() => {})
  }

  /** One certificate and TLS context per node; made again on use if making it failed. */
  private async secureContext (): Promise<SecureContext> {
    this.context = this.context ?? this.makeContext()
    try {
      return await this.context
    } catch (err) {
      this.context = undefined
      throw err
    }
  }

  private async makeContext (): Promise<SecureContext> {
    const { cert, key } = await createCertificate(this.components.privateKey)
    return tlsContext(cert, key)
  }

  async secureInbound<Stream extends object = MultiaddrConnection> (
    conn: Stream,
    options?: SecureConnectionOptions
  ): Promise<SecuredConnection<Stream>> {
    return await this.secure(conn, true, options)
  }

  async secureOutbound<Stream extends object = MultiaddrConnection> (
    conn: Stream,
    options?: SecureConnectionOptions
  ): Promise<SecuredConnection<Stream>> {
    return await this.secure(conn, false, options)
  }

  private async secure<Stream extends object> (
    conn: Stream,
    isServer: boolean,
    options: SecureConnectionOptions = {}
  ): Promise<SecuredConnection<Stream>> {
    const native = untouchedSocket(conn)
    if (native == null) {
      nativeTlsStats.stream++
      // options.remotePeer goes along: a listener that sends its TLS bytes with its answer puts
      // a dialer here, and must prove the peer the address names all the same
      // @libp2p/tls pushes each chunk into a Node stream, which takes only bytes: a relayed
      // connection (circuit relay v2: a yamux stream) yields Uint8ArrayLists, which stalled
      // every handshake over a relay until its time-out
      const bytes = {
        ...conn,
        source: flatChunks(
          (conn as unknown as { source: AsyncIterable<Uint8Array | { subarray: () => Uint8Array }> }).source
        )
      }
      return isServer
        ? await this.stock.secureInbound(bytes as any, options)
        : await this.stock.secureOutbound(bytes as any, options)
    }
    nativeTlsStats.native++
    const signal = options.signal ?? AbortSignal.timeout(HANDSHAKE_TIMEOUT_MS)
    // libp2p wrote its negotiation answer through the stream: let it reach the socket first
    await new Promise(resolve => setImmediate(resolve))
    if (native.socket.writableLength > 0) await waitFor(native.socket, 'drain', signal)
    const muxers = options.skipStreamMuxerNegotiation === true ? new Map() : this.components.upgrader.getStreamMuxers()
    const secured = await secureSocket(native.socket, isServer, {
      secureContext: await this.secureContext(),
      muxers: [...muxers.keys()],
      expected: options.remotePeer,
      signal
    })
    native.adopt(secured.socket)
    this.log('%s TLS on the socket with %p, muxer %s', isServer ? 'inbound' : 'outbound', secured.remotePeer, secured.muxer ?? 'to negotiate')
    const streams = socketDuplex(secured.socket, err => { this.log('TLS sink error - %e', err) })
    return {
      conn: { ...conn, source: streams.source, sink: streams.sink },
      remotePeer: secured.remotePeer,
      streamMuxer: secured.muxer != null ? muxers.get(secured.muxer) : undefined
    }
  }
}

/** The connection's TCP socket, when nothing has read from it ahead of the encrypter. */
function untouchedSocket (conn: object): NativeSocket | undefined {
  const native = (conn as { [NATIVE_SOCKET]?: NativeSocket })[NATIVE_SOCKET]
  if (native == null || (conn as { source?: unknown }).source !== native.source) return undefined
  return native
}

/** Each chunk of `source` as one Uint8Array (a Uint8ArrayList is copied into one). */
async function * flatChunks (
  source: AsyncIterable<Uint8Array | { subarray: () => Uint8Array }>
): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) yield chunk instanceof Uint8Array ? chunk : chunk.subarray()
}
