/**
 * libp2p over TCP, as @libp2p/tcp, except that each connection keeps its socket where the
 * native TLS encrypter (native-tls.ts) can take it. Everything else of the upgrade (the
 * negotiation, the connection manager's limits, the connection gater, the muxer) is libp2p's
 * own, in libp2p's order: nothing is negotiated or decrypted before libp2p has accepted the socket.
 */
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net'
import {
  AbortError, AlreadyStartedError, InvalidParametersError, serviceCapabilities, transportSymbol,
  type ComponentLogger, type Connection, type CreateListenerOptions, type DialTransportOptions,
  type Listener, type ListenerEvents, type Logger, type Transport, type Upgrader
} from '@libp2p/interface'
import { getThinWaistAddresses } from '@libp2p/utils/get-thin-waist-addresses'
import { ipPortToMultiaddr } from '@libp2p/utils/ip-port-to-multiaddr'
import { TCP as TCPMatcher } from '@multiformats/multiaddr-matcher'
import { TypedEventEmitter } from 'main-event'
import { socketConnection } from './socket-connection.js'
import { SERVICE_STOPPED } from '../common/index.js'
import type { DialPort } from './dial-port.js'
import type { Multiaddr } from '@multiformats/multiaddr'

export interface TlsTcpInit {
  /** close a connection silent this long (default 2 min, as libp2p's TCP) */
  socketInactivityTimeoutMs?: number
  /**
   * dial from this local port when it can (falling back to any port when the system refuses
   * it, e.g. a connection to the same address still closing), and punch from it (dial-port.ts)
   */
  dialPort?: DialPort
}

export interface TlsTcpComponents {
  logger: ComponentLogger
  /** libp2p's (a punch upgrades a connection no dial asked for) */
  upgrader: Upgrader
}

export function tlsTcp (init: TlsTcpInit = {}): (components: TlsTcpComponents) => Transport {
  return (components) => new TlsTcp(components, init)
}

class TlsTcp implements Transport {
  readonly [transportSymbol] = true
  readonly [Symbol.toStringTag] = '@idlegrid/tls-tcp'
  readonly [serviceCapabilities] = ['@libp2p/transport']
  private readonly log: Logger

  constructor (private readonly components: TlsTcpComponents, private readonly init: TlsTcpInit) {
    this.log = components.logger.forComponent('idlegrid:transport')
    init.dialPort?.attach(async (ma, initiator, signal) => await this.punch(ma, initiator, signal))
  }

  async dial (ma: Multiaddr, options: DialTransportOptions): Promise<Connection> {
    const dialPort = this.init.dialPort
    let fromPort = dialPort != null
    const socket = dialPort == null
      ? await this.connect(ma, options.signal)
      : await this.connect(ma, options.signal, dialPort.port).catch(async (err: any) => {
        if (options.signal.aborted || !PORT_REFUSED.has(err?.cause?.code)) throw err
        fromPort = false
        return await this.connect(ma, options.signal)
      })
    const connection = await this.upgrade(socket, ma, options.upgrader, options)
    if (fromPort) dialPort?.mark(connection)
    return connection
  }

  /**
   * One side of a TCP simultaneous open: `ma`'s peer dials us from its own dial port at the
   * same time (src/node/connectivity/direct-path.ts). The connection both connects make is one; the
   * initiator runs TLS and the muxer negotiation as client, the other as server.
   */
  private async punch (ma: Multiaddr, initiator: boolean, signal: AbortSignal): Promise<Connection> {
    const dialPort = this.init.dialPort
    if (dialPort == null) throw new InvalidParametersError('this transport has no dial port')
    const socket = await this.connect(ma, signal, dialPort.port)
    const connection = await this.upgrade(socket, ma, this.components.upgrader, { signal, initiator })
    dialPort.mark(connection)
    return connection
  }

  private async upgrade (
    socket: Socket,
    ma: Multiaddr,
    upgrader: Upgrader,
    options: { signal: AbortSignal, initiator?: boolean }
  ): Promise<Connection> {
    const maConn = socketConnection(socket, { remoteAddr: ma, direction: 'outbound', logger: this.components.logger, inactivityTimeoutMs: this.init.socketInactivityTimeoutMs })
    try {
      return await upgrader.upgradeOutbound(maConn, options)
    } catch (err: any) {
      maConn.abort(err)
      throw err
    }
  }

  private async connect (ma: Multiaddr, signal: AbortSignal, localPort?: number): Promise<Socket> {
    signal.throwIfAborted()
    const { host, port, transport, family } = ma.toOptions()
    if (transport !== 'tcp') throw new InvalidParametersError(`${ma.toString()} is not a TCP address`)
    this.log('dialing %a%s', ma, localPort != null ? ` from port ${localPort}` : '')
    const local = localPort != null ? { localPort, localAddress: family === 6 ? '::' : '0.0.0.0' } : {}
    const socket = netConnect({ host, port, noDelay: true, keepAlive: true, ...local })
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

  createListener (options: CreateListenerOptions): Listener {
    return new TlsTcpListener(options.upgrader, this.components.logger, this.init)
  }

  listenFilter (multiaddrs: Multiaddr[]): Multiaddr[] {
    return multiaddrs.filter(ma => TCPMatcher.exactMatch(ma))
  }

  dialFilter (multiaddrs: Multiaddr[]): Multiaddr[] {
    return this.listenFilter(multiaddrs)
  }
}

/** Why a connect from the dial port can fail where one from any port would not (the port's fault, not the peer's). */
const PORT_REFUSED = new Set(['EADDRINUSE', 'EADDRNOTAVAIL', 'EINVAL'])

class TlsTcpListener extends TypedEventEmitter<ListenerEvents> implements Listener {
  private readonly server: Server
  /** open connections' sockets, destroyed when the listener closes */
  private readonly sockets = new Set<Socket>()
  private readonly shutdown = new AbortController()
  private readonly log: Logger
  private listeningAddr: Multiaddr | undefined

  constructor (
    private readonly upgrader: Upgrader,
    private readonly logger: ComponentLogger,
    private readonly init: TlsTcpInit
  ) {
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
    const maConn = socketConnection(socket, {
      remoteAddr: ipPortToMultiaddr(socket.remoteAddress, socket.remotePort),
      direction: 'inbound',
      logger: this.logger,
      inactivityTimeoutMs: this.init.socketInactivityTimeoutMs
    })
    this.upgrader.upgradeInbound(maConn, { signal: this.shutdown.signal })
      .catch(err => {
        this.log('inbound connection from %a failed - %e', maConn.remoteAddr, err)
        maConn.abort(err)
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
    this.shutdown.abort(SERVICE_STOPPED)
    const closed = this.server.listening
      ? new Promise<void>(resolve =>
        this.server.close(() => {
          resolve()
        })
      )
      : Promise.resolve()
    for (const socket of this.sockets) socket.destroy()
    await closed
  }
}
