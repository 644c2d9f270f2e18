/**
 * A direct connection between two peers that a relay joined (issue 37 item 4), on
 * `/idlegrid/punch/1.0.0` over the relayed connection (protocols/README.md §7 "Direct path").
 * The peer that wants the path (a renter about to ship a job) sends CONNECT with its public
 * listen addresses and the public addresses its dial port was seen at (src/transport/dial-port.ts);
 * the other answers CONNECT with its own. Then, by the same rule on both sides:
 *
 * - the responder listens publicly: the initiator dials it;
 * - the initiator listens publicly: the responder dials it (connection reversal);
 * - both are behind NAT and both were seen at a port: the initiator sends SYNC, waits half the
 *   round trip it measured and dials the responder's seen address from its dial port, while the
 *   responder, on SYNC, dials the initiator's at once. Through endpoint-independent NATs the two
 *   SYNs open one TCP connection (a simultaneous open); the initiator is its TLS client;
 * - else there is no direct path, and the relay is all there is.
 *
 * Nothing here is trusted to the peer: addresses must be public TCP ones (a peer naming a
 * third party's address costs that party one SYN, at most four, at most one round per peer per
 * PEER_COOLDOWN_MS), frames are bounded, every step has a time limit, and the connection a punch
 * makes must prove the peer the relay named.
 */
import { isPeerId, LimitedConnectionError, serviceCapabilities, type AbortOptions, type ComponentLogger, type Connection, type Libp2p, type Libp2pEvents, type Logger, type PeerId, type Startable, type Stream, type TypedEventTarget } from '@libp2p/interface'
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import { lpStream, type LengthPrefixedStream } from 'it-length-prefixed-stream'
import { MAX_BYTES } from '../../../protocols/codec.js'
import { PROTOCOL } from '../../../protocols/ids.js'
import { Punch } from '../../../protocols/punch.js'
import { isRelayed, MAX_MESSAGE_ADDR_BYTES, MAX_MESSAGE_ADDRS } from './addresses.js'
import { directPathFailed, isDirectPathFailure } from '../errors.js'
import { encodeOffer, noPathWhy, planDirectPath, readOffer, usableAddress, type DirectOffer, type NatMapping } from './direct-path-offer.js'
import type { DialPort } from '../../transport/index.js'
import type { AddressManager, ConnectionManager, Registrar } from '@libp2p/interface-internal'

export { planDirectPath } from './direct-path-offer.js'
export type { DirectOffer, DirectPlan, NatMapping } from './direct-path-offer.js'

/** The whole exchange, from the first CONNECT to a direct connection, ends within this. */
export const DIRECT_PATH_TIMEOUT_MS = 12_000
/** One punch dial: long enough for the SYN retransmits at 1 s and 3 s (the first SYN meets a closed NAT). */
const PUNCH_DIAL_MS = 6_000
/** A responder takes one request per peer this often, and this many at once from everyone. */
const PEER_COOLDOWN_MS = 10_000
const MAX_CONCURRENT = 8
/** Peers whose last request is remembered for the cooldown (the oldest are forgotten first). */
const MAX_REMEMBERED = 1_024
/** Observers of the dial port's public address kept (the newest). */
const MAX_OBSERVERS = 16
/** Seen addresses offered for a punch (the most often seen first). */
const MAX_PUNCH_ADDRS = 2

export interface DirectPathStatus {
  /** the local port outbound connections leave from (behind NAT), if any */
  dialPort?: number
  /** the public addresses peers saw the dial port at, most often seen first */
  seenAt: string[]
  /** how the NAT maps the dial port, as far as the observers tell */
  mapping: NatMapping
  /** paths this node asked for, and how they ended */
  asked: { direct: number, failed: number }
  /** paths peers asked this node for, and how they ended */
  served: { direct: number, failed: number, refused: number }
  /** why the last path this node asked for failed, if one did */
  lastFailure?: string
}

export interface DirectPathService {
  /** A direct (unlimited, not relayed) connection to `peer`, made through the relayed one if need be. */
  connect(peer: PeerId, options?: AbortOptions): Promise<Connection>
  /** libp2p's dialProtocol for long streams (jobs, services): a direct path first, a relay that carries them after. */
  dialProtocol: Libp2p['dialProtocol']
  status(): DirectPathStatus
}

export interface DirectPathInit {
  /** the transport's dial port (behind NAT); without one this node never punches */
  dialPort?: DialPort
  /** take private addresses in offers (a test on one machine); never on a real network */
  allowPrivate?: boolean
  timeoutMs?: number
}

interface DirectPathComponents {
  registrar: Registrar
  connectionManager: ConnectionManager
  addressManager: AddressManager
  events: TypedEventTarget<Libp2pEvents>
  logger: ComponentLogger
}

export function directPath (
  init: DirectPathInit = {}
): (components: DirectPathComponents) => DirectPathService & Startable {
  return (components) => new DirectPath(components, init)
}

class DirectPath implements DirectPathService, Startable {
  readonly [Symbol.toStringTag] = '@idlegrid/direct-path'
  readonly [serviceCapabilities] = ['@idlegrid/direct-path']
  private readonly log: Logger
  /** observer peer → the address it saw our dial port at, oldest first */
  private readonly seen = new Map<string, string>()
  /** paths being made, per peer: a second ask waits for the first */
  private readonly making = new Map<string, Promise<Connection>>()
  /** responder: when each peer last asked */
  private readonly lastAsked = new Map<string, number>()
  private serving = 0
  private readonly counts = { asked: { direct: 0, failed: 0 }, served: { direct: 0, failed: 0, refused: 0 } }
  private lastFailure: string | undefined
  private readonly timeoutMs: number

  constructor (private readonly components: DirectPathComponents, private readonly init: DirectPathInit) {
    this.log = components.logger.forComponent('idlegrid:direct-path')
    this.timeoutMs = init.timeoutMs ?? DIRECT_PATH_TIMEOUT_MS
  }

  private readonly onIdentify = (evt: CustomEvent<Libp2pEvents['peer:identify']['detail']>): void => {
    const { connection, observedAddr } = evt.detail
    if (observedAddr == null || this.init.dialPort?.usedBy(connection) !== true || !this.usable(observedAddr)) return
    const key = connection.remotePeer.toString()
    this.seen.delete(key)
    this.seen.set(key, observedAddr.decapsulateCode(421).toString())
    if (this.seen.size > MAX_OBSERVERS) this.seen.delete(this.seen.keys().next().value as string)
  }

  async start (): Promise<void> {
    this.components.events.addEventListener('peer:identify', this.onIdentify)
    await this.components.registrar.handle(PROTOCOL.punch, ({ stream, connection }) => {
      this.respond(stream, connection).catch(() => {})
    }, { maxInboundStreams: 1, maxOutboundStreams: 1, runOnLimitedConnection: true })
  }

  async stop (): Promise<void> {
    this.components.events.removeEventListener('peer:identify', this.onIdentify)
    await this.components.registrar.unhandle(PROTOCOL.punch).catch(() => {})
  }

  status (): DirectPathStatus {
    return {
      ...(this.init.dialPort != null ? { dialPort: this.init.dialPort.port } : {}),
      seenAt: this.seenAt().map(String),
      mapping: this.mapping(),
      asked: { ...this.counts.asked },
      served: { ...this.counts.served },
      ...(this.lastFailure != null ? { lastFailure: this.lastFailure } : {})
    }
  }

  dialProtocol: Libp2p['dialProtocol'] = async (peer, protocols, options = {}) => {
    if (!isPeerId(peer)) {
      return await (
        await this.components.connectionManager.openConnection(peer, options)
      ).newStream(protocols, options)
    }
    // a relayed connection already open is the way to ask for a path (libp2p would only dial the relay again)
    const open = this.components.connectionManager.getConnections(peer).filter(c => c.status === 'open')
    let connection =
      this.direct(peer) ??
      open.find(c => c.limits == null) ??
      open[0] ??
      (await this.components.connectionManager.openConnection(peer, options))
    if (isRelayed(connection.remoteAddr)) {
      try {
        connection = await this.connect(peer, options)
      } catch (err: any) {
        // an unlimited relay carries the stream; a limited one cannot, and the error says why
        if (connection.limits != null) throw new LimitedConnectionError(`no direct path to ${peer.toString()} (${String(err?.message ?? err)}), and the relay's circuit is limited`)
        this.log('no direct path to %p, the stream goes through the relay - %e', peer, err)
      }
    }
    return await connection.newStream(protocols, options)
  }

  async connect (peer: PeerId, options: AbortOptions = {}): Promise<Connection> {
    const direct = this.direct(peer)
    if (direct != null) return direct
    const key = peer.toString()
    let making = this.making.get(key)
    if (making == null) {
      const signal = AbortSignal.any([
        AbortSignal.timeout(this.timeoutMs),
        ...(options.signal != null ? [options.signal] : [])
      ])
      making = this.ask(peer, signal).finally(() => this.making.delete(key))
      this.making.set(key, making)
    }
    return await making
  }

  /** An open connection to `peer` that is neither relayed nor limited. */
  private direct (peer: PeerId): Connection | undefined {
    return this.components.connectionManager.getConnections(peer).find(c => c.status === 'open' && c.limits == null && !isRelayed(c.remoteAddr))
  }

  private async ask (peer: PeerId, signal: AbortSignal): Promise<Connection> {
    let stream: Stream | undefined
    try {
      const relayed = this.components.connectionManager.getConnections(peer).find(c => c.status === 'open') ??
        await this.components.connectionManager.openConnection(peer, { signal })
      if (!isRelayed(relayed.remoteAddr)) return relayed
      stream = await relayed.newStream(PROTOCOL.punch, { signal, runOnLimitedConnection: true })
      const frames = lpStream(stream, { maxDataLength: MAX_BYTES.punch })
      const mine = this.offer()
      const sentAt = Date.now()
      await frames.write(encodeOffer(mine, Punch.Type.CONNECT), { signal })
      const theirs = await this.readOffer(frames, Punch.Type.CONNECT, signal)
      const rtt = Date.now() - sentAt
      const plan = planDirectPath(mine, theirs)
      this.log('path to %p: %s (round trip %d ms over the relay)', peer, plan, rtt)
      let connection: Connection
      if (plan === 'dial-responder') {
        connection = await this.components.connectionManager.openConnection(theirs.listen.map(a => a.encapsulate(`/p2p/${peer.toString()}`)), { signal })
      } else if (plan === 'responder-dials') {
        connection = await this.waitForDirect(peer, signal)
      } else if (plan === 'punch') {
        await frames.write(encodeOffer({ listen: [], punch: [] }, Punch.Type.SYNC), { signal })
        await sleep(rtt / 2, signal)
        connection = await this.punch(theirs.punch, peer, true, signal)
      } else {
        throw directPathFailed('no-path', noPathWhy(mine, theirs))
      }
      if (connection.limits != null || isRelayed(connection.remoteAddr)) throw directPathFailed('failed', `the connection to ${peer.toString()} is not direct`)
      this.counts.asked.direct++
      return connection
    } catch (err: any) {
      this.counts.asked.failed++
      stream?.abort(err instanceof Error ? err : new Error(String(err)))
      const failure = isDirectPathFailure(err)
        ? err
        : signal.aborted
          ? directPathFailed('timeout', `no direct path to ${peer.toString()} within ${this.timeoutMs} ms`, { cause: err })
          : directPathFailed('failed', `no direct path to ${peer.toString()}: ${String(err?.message ?? err)}`, { cause: err })
      this.lastFailure = failure.message.slice(0, 300)
      throw failure
    } finally {
      await stream?.close().catch(() => {})
    }
  }

  private async respond (stream: Stream, connection: Connection): Promise<void> {
    const peer = connection.remotePeer
    const key = peer.toString()
    const now = Date.now()
    const refuse = (why: string): void => {
      this.counts.served.refused++
      this.log('refused a path to %p: %s', peer, why)
      stream.abort(directPathFailed('refused', why))
    }
    // a direct connection needs no path; a relay's circuit is where a request makes sense
    if (!isRelayed(connection.remoteAddr)) { refuse('asked on a direct connection'); return }
    if (this.serving >= MAX_CONCURRENT) { refuse(`${MAX_CONCURRENT} paths being made already`); return }
    const last = this.lastAsked.get(key)
    if (last != null && now - last < PEER_COOLDOWN_MS) { refuse(`asked again within ${PEER_COOLDOWN_MS} ms`); return }
    this.lastAsked.delete(key)
    this.lastAsked.set(key, now)
    if (this.lastAsked.size > MAX_REMEMBERED) this.lastAsked.delete(this.lastAsked.keys().next().value as string)
    this.serving++
    const signal = AbortSignal.timeout(this.timeoutMs)
    try {
      const frames = lpStream(stream, { maxDataLength: MAX_BYTES.punch })
      const theirs = await this.readOffer(frames, Punch.Type.CONNECT, signal)
      const mine = this.offer()
      await frames.write(encodeOffer(mine, Punch.Type.CONNECT), { signal })
      const plan = planDirectPath(theirs, mine)
      this.log('path asked by %p: %s', peer, plan)
      if (plan === 'responder-dials') {
        await this.components.connectionManager.openConnection(theirs.listen.map(a => a.encapsulate(`/p2p/${key}`)), { signal })
        this.counts.served.direct++
      } else if (plan === 'punch') {
        await this.readOffer(frames, Punch.Type.SYNC, signal)
        await this.punch(theirs.punch, peer, false, signal)
        this.counts.served.direct++
      }
      await stream.close({ signal }).catch(() => {})
    } catch (err: any) {
      this.counts.served.failed++
      this.log('path asked by %p failed - %e', peer, err)
      stream.abort(err instanceof Error ? err : new Error(String(err)))
    } finally {
      this.serving--
    }
  }

  /** Reads one frame of `type` and checks its addresses (direct-path-offer.ts). */
  private async readOffer (
    frames: LengthPrefixedStream<Stream>,
    type: Punch.Type,
    signal: AbortSignal
  ): Promise<DirectOffer> {
    return await readOffer(frames, type, addr => this.usable(addr), signal)
  }

  private usable (addr: Multiaddr): boolean {
    return usableAddress(addr, this.init.allowPrivate === true)
  }

  private offer (): DirectOffer {
    const listen = this.components.addressManager.getAddresses()
      .filter(a => !isRelayed(a) && this.usable(a))
      .map(a => a.getComponents().at(-1)?.code === 421 ? a.decapsulateCode(421) : a)
      .filter(a => a.bytes.byteLength <= MAX_MESSAGE_ADDR_BYTES)
      .slice(0, MAX_MESSAGE_ADDRS)
    return { listen, punch: this.init.dialPort != null ? this.seenAt().slice(0, MAX_PUNCH_ADDRS) : [] }
  }

  /** Where observers saw the dial port, the most often seen first, then the most recently. */
  private seenAt (): Multiaddr[] {
    const votes = new Map<string, { n: number, last: number }>()
    let i = 0
    for (const addr of this.seen.values()) {
      const v = votes.get(addr) ?? { n: 0, last: 0 }
      votes.set(addr, { n: v.n + 1, last: i++ })
    }
    return [...votes.entries()].sort((a, b) => b[1].n - a[1].n || b[1].last - a[1].last).map(([a]) => multiaddr(a))
  }

  private mapping (): NatMapping {
    const counts = new Map<string, number>()
    for (const addr of this.seen.values()) counts.set(addr, (counts.get(addr) ?? 0) + 1)
    if ([...counts.values()].some(n => n >= 2)) return 'endpoint-independent'
    return counts.size >= 2 ? 'endpoint-dependent' : 'unknown'
  }

  /** Dials each of `addrs` from the dial port at once; the first connection proving `peer` wins, the rest close. */
  private async punch (addrs: Multiaddr[], peer: PeerId, initiator: boolean, signal: AbortSignal): Promise<Connection> {
    const dialPort = this.init.dialPort
    if (dialPort == null) throw directPathFailed('no-path', 'this node has no dial port to punch from')
    const done = new AbortController()
    const each = AbortSignal.any([signal, done.signal, AbortSignal.timeout(PUNCH_DIAL_MS)])
    const attempts = addrs.slice(0, MAX_PUNCH_ADDRS).map(async addr => {
      const connection = await dialPort.punch(addr.encapsulate(`/p2p/${peer.toString()}`), initiator, each)
      // the initiator's TLS checked the peer its address names; the responder's checks here
      if (!connection.remotePeer.equals(peer)) {
        await connection.close().catch(() => {})
        throw directPathFailed('failed', `the punched connection proved ${connection.remotePeer.toString()}, not ${peer.toString()}`)
      }
      return connection
    })
    try {
      const winner = await Promise.any(attempts)
      done.abort()
      void Promise.allSettled(attempts).then(results => {
        for (const r of results) if (r.status === 'fulfilled' && r.value !== winner) void r.value.close().catch(() => {})
      })
      return winner
    } catch (err: any) {
      throw directPathFailed('failed', `the hole punch to ${peer.toString()} failed: ${String(err?.errors?.[0]?.message ?? err?.message ?? err)}`, { cause: err })
    }
  }

  /** Resolves with the first direct connection to `peer` (the responder dials us). */
  private async waitForDirect (peer: PeerId, signal: AbortSignal): Promise<Connection> {
    const now = this.direct(peer)
    if (now != null) return now
    return await new Promise<Connection>((resolve, reject) => {
      const onOpen = (evt: CustomEvent<Connection>): void => {
        const c = evt.detail
        if (c.remotePeer.equals(peer) && c.limits == null && !isRelayed(c.remoteAddr)) { finish(); resolve(c) }
      }
      const onAbort = (): void => { finish(); reject(directPathFailed('timeout', `${peer.toString()} did not dial back`)) }
      const finish = (): void => {
        this.components.events.removeEventListener('connection:open', onOpen)
        signal.removeEventListener('abort', onAbort)
      }
      this.components.events.addEventListener('connection:open', onOpen)
      signal.addEventListener('abort', onAbort, { once: true })
    })
  }
}

async function sleep (ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve() }, ms)
    const onAbort = (): void => { clearTimeout(timer); reject(signal.reason) }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * What long streams (jobs, services, usage) dial with: the node's direct path (a relayed peer
 * is reached directly where the NATs allow it), or libp2p's connections where a node was
 * composed without one.
 */
export function longStreamDialer (components: { connectionManager: Pick<ConnectionManager, 'openConnection'>, directPath?: DirectPathService }): Pick<Libp2p, 'dialProtocol'> {
  let path: DirectPathService | undefined
  // libp2p's components throw for a service that is not there
  try { path = components.directPath } catch {}
  if (path != null) return path
  const connections = components.connectionManager
  return {
    dialProtocol: async (peer, protocol, options) =>
      await (await connections.openConnection(peer as PeerId, options)).newStream(protocol, options)
  }
}
