/**
 * The peer guard's libp2p side (policy in peer-guard.ts): it counts each peer's inbound
 * streams before their handler runs, reads gossipsub's score of every connected peer each
 * second, counts the gossip RPCs gossipsub drops from graylisted peers, and closes a denied
 * peer's connections (the gater then refuses it both ways).
 */
import type { PeerGuard, PeerGuardSnapshot } from './peer-guard.js'
import type { ComponentLogger, Logger, Startable, StreamHandlerRecord } from '@libp2p/interface'
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal'

interface PeerGuardComponents {
  connectionManager: ConnectionManager
  registrar: Registrar
  logger: ComponentLogger
  pubsub?: unknown
}

export interface PeerGuardServiceInit {
  /** how often connected peers' gossipsub scores are read (default 1 s, gossipsub's heartbeat) */
  scoreCheckMs?: number
}

interface Scored {
  getScore?: (peerId: string) => number
  /** gossipsub asks it once per RPC received; false (graylisted) drops the RPC unread */
  acceptFrom?: (peerId: string) => boolean
}

/** The guard as a node's service: its policy object, and what it did so far. */
export interface PeerGuardHandle {
  readonly guard: PeerGuard
  snapshot(): PeerGuardSnapshot
}

class PeerGuardService implements PeerGuardHandle, Startable {
  private readonly components: PeerGuardComponents
  readonly guard: PeerGuard
  private readonly scoreCheckMs: number
  private readonly log: Logger
  private timer?: NodeJS.Timeout
  private offDeny?: () => void
  private originalGetHandler?: Registrar['getHandler']
  private originalAcceptFrom?: { pubsub: Scored, acceptFrom: (peerId: string) => boolean }

  constructor (components: PeerGuardComponents, guard: PeerGuard, init: PeerGuardServiceInit) {
    this.components = components
    this.guard = guard
    this.scoreCheckMs = init.scoreCheckMs ?? 1_000
    this.log = components.logger.forComponent('idlegrid:peer-guard')
  }

  snapshot (): PeerGuardSnapshot {
    return this.guard.snapshot()
  }

  start (): void {
    this.offDeny = this.guard.onDeny((peerId, denial) => {
      this.log('denied %s for %d s: %s', peerId, Math.round((denial.until - denial.since) / 1000), denial.reason)
      this.disconnect(peerId, denial.reason)
    })
    this.countInboundStreams()
  }

  afterStart (): void {
    this.timer = setInterval(() => { this.checkScores() }, this.scoreCheckMs)
    this.timer.unref()
    this.countGraylistedRpcs()
  }

  stop (): void {
    clearInterval(this.timer)
    this.offDeny?.()
    if (this.originalGetHandler != null) this.components.registrar.getHandler = this.originalGetHandler
    this.originalGetHandler = undefined
    if (this.originalAcceptFrom != null) this.originalAcceptFrom.pubsub.acceptFrom = this.originalAcceptFrom.acceptFrom
    this.originalAcceptFrom = undefined
  }

  /**
   * libp2p v2 has no hook for inbound streams: the connection looks up the negotiated
   * protocol's handler with `registrar.getHandler` and calls it. The guard wraps that lookup
   * so every inbound stream, on every protocol (identify, DHT, gossipsub, ours), is admitted or
   * aborted before its handler runs. Outbound streams read only the record's options.
   */
  private countInboundStreams (): void {
    const registrar = this.components.registrar
    const original = registrar.getHandler.bind(registrar)
    this.originalGetHandler = registrar.getHandler
    registrar.getHandler = (protocol: string): StreamHandlerRecord => {
      const record = original(protocol)
      return {
        ...record,
        handler: (data) => {
          if (this.guard.admitStream(data.connection.remotePeer)) return record.handler(data)
          data.stream.abort(new Error('refused by the peer guard'))
        }
      }
    }
  }

  /**
   * gossipsub drops a graylisted peer's RPCs without a word, so a peer whose first messages
   * scored it just below the graylist is judged no further, and its score never reaches the
   * deny bound. Its only check on each RPC, `acceptFrom`, is wrapped to tell the guard.
   */
  private countGraylistedRpcs (): void {
    const pubsub = this.pubsub()
    if (typeof pubsub?.acceptFrom !== 'function') return
    const acceptFrom = pubsub.acceptFrom
    this.originalAcceptFrom = { pubsub, acceptFrom }
    pubsub.acceptFrom = (peerId: string): boolean => {
      const accepted = acceptFrom.call(pubsub, peerId)
      if (!accepted) this.guard.rpcWhileGraylisted(peerId)
      return accepted
    }
  }

  private pubsub (): Scored | undefined {
    try {
      return this.components.pubsub as Scored | undefined
    } catch { // libp2p's components throw for a service that is not configured
      return undefined
    }
  }

  private checkScores (): void {
    const pubsub = this.pubsub()
    if (pubsub?.getScore == null) return
    const peers = new Set(this.components.connectionManager.getConnections().map(c => c.remotePeer.toString()))
    for (const peer of peers) this.guard.checkScore(peer, pubsub.getScore(peer))
  }

  private disconnect (peerId: string, reason: string): void {
    const connections = this.components.connectionManager
      .getConnections()
      .filter(c => c.remotePeer.toString() === peerId)
    if (connections.length === 0) return
    this.guard.counters.disconnected++
    for (const connection of connections) connection.abort(new Error(`denied by the peer guard: ${reason}`))
  }
}

/** The guard's service: `guard` is the one the gossip router and the connection gater share. */
export function peerGuardService (
  guard: PeerGuard,
  init: PeerGuardServiceInit = {}
): (components: PeerGuardComponents) => PeerGuardHandle {
  return (components) => new PeerGuardService(components, guard, init)
}
