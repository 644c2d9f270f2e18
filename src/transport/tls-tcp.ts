/**
 * TCP with libp2p's TLS done natively: the transport negotiates the security protocol itself on
 * the socket (multistream.ts) and, when both sides pick /tls/1.0.0, hands the socket to Node's
 * TLS (secure.ts), so no byte passes through a JS stream before it is decrypted. Stock libp2p
 * peers (TCP + @libp2p/tls or noise) connect both ways: the wire is the same as theirs. When the
 * other side does not speak TLS, the node's other encrypters (noise) run over the socket as
 * libp2p would run them.
 *
 * The upgrader is told the connection is already encrypted (`skipEncryption`), so this transport
 * asks the connection gater about the now-known peer itself, as the upgrader would have.
 */
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net'
import { createSecureContext, type SecureContext } from 'node:tls'
import {
  AbortError, AlreadyStartedError, InvalidParametersError, serviceCapabilities, transportSymbol,
  type ComponentLogger, type Connection, type ConnectionGater, type CreateListenerOptions, type DialTransportOptions,
  type Listener, type ListenerEvents, type Logger, type MultiaddrConnection, type PeerId, type PrivateKey, type StreamMuxerFactory, type Transport, type Upgrader
} from '@libp2p/interface'
import { getThinWaistAddresses } from '@libp2p/utils/get-thin-waist-addresses'
import { ipPortToMultiaddr } from '@libp2p/utils/ip-port-to-multiaddr'
import { peerIdFromString } from '@libp2p/peer-id'
import { TCP as TCPMatcher } from '@multiformats/multiaddr-matcher'
import { TypedEventEmitter } from 'main-event'
import { createCertificate } from './certificate.js'
import { handleProtocol, NegotiationError, selectProtocol } from './multistream.js'
import { secureSocket, TLS_PROTOCOL } from './secure.js'
import { socketConnection } from './socket-connection.js'
import type { Multiaddr } from '@multiformats/multiaddr'

export interface TlsTcpInit {
  /** close a connection silent this long (default 2 min, as libp2p's TCP) */
  socketInactivityTimeoutMs?: number
}

export interface TlsTcpComponents {
  privateKey: PrivateKey
  logger: ComponentLogger
  connectionGater: ConnectionGater
}

/** The connection gater refused the peer once its identity was known. */
export class PeerRefusedError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'PeerRefusedError'
  }
}

export function tlsTcp (init: TlsTcpInit = {}): (components: TlsTcpComponents) => Transport {
  return (components) => new TlsTcp(components, init)
}

type Direction = 'inbound' | 'outbound'

class TlsTcp implements Transport {
  readonly [transportSymbol] = true
  readonly [Symbol.toStringTag] = '@idlegrid/tls-tcp'
  readonly [serviceCapabilities] = ['@libp2p/transport']
  private readonly log: Logger
  private context: Promise<SecureContext> | undefined

  constructor (private readonly components: TlsTcpComponents, private readonly init: TlsTcpInit) {
    this.log = components.logger.forComponent('idlegrid:transport')
  }

  /** One certificate and TLS context per node, made on first use. */
  private async secureContext (): Promise<SecureContext> {
    this.context ??= createCertificate(this.components.privateKey).then(({ cert, key }) =>
      createSecureContext({ cert, key, minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' }))
    return await this.context
  }

  async dial (ma: Multiaddr, options: DialTransportOptions): Promise<Connection> {
    const socket = await this.connect(ma, options.signal)
    try {
      const idStr = ma.getPeerId()
      const expected = idStr != null ? peerIdFromString(idStr) : undefined
      const secured = await this.secure(socket, 'outbound', ma, options.upgrader, options.signal, expected)
      try {
        return await options.upgrader.upgradeOutbound(secured.conn, { ...options, skipEncryption: true, muxerFactory: secured.muxerFactory })
      } catch (err: any) {
        secured.conn.abort(err)
        throw err
      }
    } catch (err) {
      socket.destroy()
      throw err
    }
  }

  private async connect (ma: Multiaddr, signal: AbortSignal): Promise<Socket> {
    signal.throwIfAborted()
    const { host, port, transport } = ma.toOptions()
    if (transport !== 'tcp') throw new InvalidParametersError(`${ma.toString()} is not a TCP address`)
    const socket = netConnect({ host, port, noDelay: true, keepAlive: true })
    await new Promise<void>((resolve, reject) => {
      const done = (err?: Error): void => {
        socket.off('connect', onConnect)
        socket.off('error', onError)
        signal.removeEventListener('abort', onAbort)
        if (err == null) { resolve(); return }
        socket.destroy()
        reject(err)
      }
      const onConnect = (): void => { done() }
      const onError = (err: Error): void => { done(new Error(`connection error ${host}:${port}: ${err.message}`, { cause: err })) }
      const onAbort = (): void => { done(new AbortError(`dial to ${host}:${port} aborted`)) }
      socket.once('connect', onConnect)
      socket.once('error', onError)
      signal.addEventListener('abort', onAbort, { once: true })
    })
    return socket
  }

  /**
   * Negotiates and runs the encrypter on a fresh socket: TLS natively, another encrypter of the
   * node's over the socket as a stream. Returns a connection whose remote address names the peer.
   */
  async secure (socket: Socket, direction: Direction, remoteAddr: Multiaddr, upgrader: Upgrader, signal: AbortSignal, expected?: PeerId): Promise<SecuredConnection> {
    const encrypters = upgrader.getConnectionEncrypters()
    const protocols = [TLS_PROTOCOL, ...[...encrypters.keys()].filter(p => p !== TLS_PROTOCOL)]
    const negotiated = direction === 'outbound'
      ? await selectProtocol(socket, protocols, signal)
      : await handleProtocol(socket, protocols, signal)
    const muxers = upgrader.getStreamMuxers()
    const connInit = { direction, logger: this.components.logger, inactivityTimeoutMs: this.init.socketInactivityTimeoutMs }
    let conn: MultiaddrConnection
    let remotePeer: PeerId
    let muxerFactory: StreamMuxerFactory | undefined
    let carrier: Socket
    if (negotiated.protocol === TLS_PROTOCOL) {
      // a conforming dialer waits for our answer before its ClientHello, and a listener says
      // nothing after its answer until then: bytes here would be lost to the native handshake
      if (negotiated.leftover.length > 0) throw new NegotiationError(`the peer sent ${negotiated.leftover.length} bytes before the TLS handshake`)
      const secured = await secureSocket(socket, direction === 'inbound', { secureContext: await this.secureContext(), muxers: [...muxers.keys()], expected, signal })
      remotePeer = secured.remotePeer
      muxerFactory = secured.muxer != null ? muxers.get(secured.muxer) : undefined
      carrier = secured.socket
      conn = socketConnection(secured.socket, { ...connInit, remoteAddr: withPeer(remoteAddr, remotePeer) })
    } else {
      const encrypter = encrypters.get(negotiated.protocol)
      if (encrypter == null) throw new NegotiationError(`negotiated ${negotiated.protocol}, which this node cannot run`)
      // the stream reads the socket from here (it stays paused until then)
      if (negotiated.leftover.length > 0) socket.unshift(negotiated.leftover)
      const plain = socketConnection(socket, { ...connInit, remoteAddr })
      const secured = direction === 'outbound'
        ? await encrypter.secureOutbound(plain, { remotePeer: expected, signal })
        : await encrypter.secureInbound(plain, { signal })
      remotePeer = secured.remotePeer
      muxerFactory = secured.streamMuxer
      carrier = socket
      // the same object, not a copy: its close handlers update its timeline, which the
      // upgrader watches to learn that the connection closed
      conn = Object.assign(plain, { source: secured.conn.source, sink: secured.conn.sink, remoteAddr: withPeer(remoteAddr, remotePeer) })
    }
    const gater = this.components.connectionGater
    const refused = direction === 'inbound'
      ? await gater.denyInboundEncryptedConnection?.(remotePeer, conn)
      : await gater.denyOutboundEncryptedConnection?.(remotePeer, conn)
    if (refused === true) {
      conn.abort(new PeerRefusedError(`the connection gater refused ${remotePeer.toString()}`))
      throw new PeerRefusedError(`the connection gater refused ${remotePeer.toString()}`)
    }
    return { conn, muxerFactory, socket: carrier }
  }

  createListener (options: CreateListenerOptions): Listener {
    return new TlsTcpListener(this, options.upgrader, this.components.logger)
  }

  listenFilter (multiaddrs: Multiaddr[]): Multiaddr[] {
    return multiaddrs.filter(ma => TCPMatcher.exactMatch(ma))
  }

  dialFilter (multiaddrs: Multiaddr[]): Multiaddr[] {
    return this.listenFilter(multiaddrs)
  }
}

interface SecuredConnection {
  conn: MultiaddrConnection
  /** the muxer the encrypter's handshake chose, if it did */
  muxerFactory?: StreamMuxerFactory
  /** the socket the connection runs on (the TLS socket, or the TCP socket under another encrypter) */
  socket: Socket
}

function withPeer (addr: Multiaddr, peer: PeerId): Multiaddr {
  return addr.getPeerId() != null ? addr : addr.encapsulate(`/p2p/${peer.toString()}`)
}

class TlsTcpListener extends TypedEventEmitter<ListenerEvents> implements Listener {
  private readonly server: Server
  private readonly sockets = new Set<Socket>()
  private readonly shutdown = new AbortController()
  private readonly log: Logger
  private listeningAddr: Multiaddr | undefined

  constructor (private readonly transport: TlsTcp, private readonly upgrader: Upgrader, logger: ComponentLogger) {
    super()
    this.log = logger.forComponent('idlegrid:transport:listener')
    this.server = createServer({ noDelay: true, keepAlive: true }, socket => { this.onSocket(socket) })
    this.server.on('error', err => { this.safeDispatchEvent('error', { detail: err }) })
    this.server.on('close', () => { this.safeDispatchEvent('close') })
  }

  private onSocket (socket: Socket): void {
    if (socket.remoteAddress == null || socket.remotePort == null) {
      socket.destroy()
      return
    }
    this.sockets.add(socket)
    socket.once('close', () => this.sockets.delete(socket))
    // swallowed here: the negotiation and the connection report their own errors
    socket.on('error', () => {})
    const remoteAddr = ipPortToMultiaddr(socket.remoteAddress, socket.remotePort)
    // the upgrader's inbound timeout covers our part of the upgrade too
    const signal = this.upgrader.createInboundAbortSignal(this.shutdown.signal)
    this.transport.secure(socket, 'inbound', remoteAddr, this.upgrader, signal)
      .then(async ({ conn, muxerFactory, socket: secured }) => {
        signal.clear()
        if (secured !== socket) {
          this.sockets.add(secured)
          secured.once('close', () => this.sockets.delete(secured))
        }
        try {
          await this.upgrader.upgradeInbound(conn, { signal: this.shutdown.signal, skipEncryption: true, muxerFactory })
        } catch (err: any) {
          conn.abort(err)
          throw err
        }
      })
      .catch(err => {
        signal.clear()
        this.log('inbound connection from %a failed - %e', remoteAddr, err)
        socket.destroy()
      })
  }

  async listen (ma: Multiaddr): Promise<void> {
    if (this.server.listening) throw new AlreadyStartedError('already listening')
    const { host, port, family } = ma.toOptions()
    this.listeningAddr = ma
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen({ host, port, ipv6Only: family === 6 }, () => {
        this.server.off('error', reject)
        resolve()
      })
    })
    this.log('listening on %s', this.server.address())
    this.safeDispatchEvent('listening')
  }

  getAddrs (): Multiaddr[] {
    const address = this.server.address()
    if (this.listeningAddr == null || address == null || typeof address === 'string') return []
    return getThinWaistAddresses(this.listeningAddr, address.port)
  }

  updateAnnounceAddrs (): void {}

  async close (): Promise<void> {
    this.shutdown.abort()
    const closed = this.server.listening ? new Promise<void>(resolve => this.server.close(() => { resolve() })) : Promise.resolve()
    for (const socket of this.sockets) socket.destroy()
    await closed
  }
}
