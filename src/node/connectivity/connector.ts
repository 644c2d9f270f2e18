import { multiaddr } from '@multiformats/multiaddr'
import { LookupBackoff } from './lookup-backoff.js'
import { SERVICE_STOPPED } from '../../common/index.js'
import type { ComponentLogger, Logger, PeerId, PeerInfo, Startable, TypedEventTarget, Libp2pEvents } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'

export interface ConnectorInit {
  /** dial discovered peers while the node has fewer connections than this */
  targetPeers: number
  /** time allowed for one dial */
  dialTimeoutMs?: number
  /** dials in flight at once */
  maxParallelDials?: number
  /** while below target, look for more peers in the DHT this often */
  lookupIntervalMs?: number
  /** a lookup that finds no new peer doubles the wait before the next one, up to this (lookup-backoff.ts) */
  maxLookupIntervalMs?: number
  /** bootstrap multiaddrs (…/p2p/<id>): redialed while the node is connected to none of them */
  bootstrap?: string[]
}

/** The parts of kad-dht query events the connector reads. */
interface QueryEvent {
  name: string
  peer?: PeerInfo
  closer?: PeerInfo[]
}

interface ClosestPeers {
  getClosestPeers(key: Uint8Array, options?: { signal?: AbortSignal }): AsyncIterable<QueryEvent>
}

interface ConnectorComponents {
  peerId: PeerId
  events: TypedEventTarget<Libp2pEvents>
  connectionManager: ConnectionManager
  logger: ComponentLogger
  dht?: unknown
}

/** Discovered peers waiting for a dial slot; older ones give way to newer ones past this. */
const MAX_PENDING = 256
/** Bound on one DHT lookup for more peers. */
const LOOKUP_TIMEOUT_MS = 10_000
/** Peers whose dial failed, remembered so that a lookup returning only them counts as fruitless. */
const MAX_FAILED = 256
/**
 * Dials to a peer that may fail in a row before a lookup finding it counts as finding nobody new.
 * One failure is not enough: a node whose event loop stalls for a few seconds (a busy laptop, a
 * CI runner) fails its first dial of a peer the DHT just named, and the backoff then pushed the
 * next look 20-40 s away while that peer was there all along (the flood-network spec's 20 s mesh
 * wait failed so). A peer that fails this often is not coming; looking for it at the base rate
 * for ever is what the backoff is for.
 */
const RETRIES_BEFORE_GIVING_UP = 3

/** What the connector is doing: for diagnostics (a mesh that did not form) and specs. */
export interface ConnectorStatus {
  connections: number
  /** discovered peers waiting for a dial slot, and dials in flight */
  pending: number
  dialing: number
  /** peers whose last dial failed; of them, those that failed too often to keep lookups at the base rate */
  failing: number
  givenUp: number
  /** lookups finished since start, and the wait before the one after the next */
  lookups: number
  lookupWaitMs: number
}

/**
 * Joins the mesh: libp2p v2 no longer dials the peers it discovers (bootstrap list, DHT
 * walks), so gossipsub would only ever see the bootstrap nodes. This dials discovered
 * peers until the node has `targetPeers` connections, a bounded number at a time; peers
 * found while every dial slot is busy wait their turn. While still below target it looks
 * for more peers in the DHT now and then (a light peer is in nobody's routing table, so
 * nobody else would tell it about providers that joined after it), less often while the
 * lookups find nobody new (lookup-backoff.ts).
 */
class PeerConnector implements PeerConnectorService {
  private readonly components: ConnectorComponents
  private readonly target: number
  private readonly dialTimeoutMs: number
  private readonly maxParallel: number
  private readonly lookupIntervalMs: number
  private readonly backoff: LookupBackoff
  /** consecutive failed dials per peer, oldest first */
  private readonly failed = new Map<string, number>()
  private lookups = 0
  private readonly log: Logger
  private readonly dialing = new Set<string>()
  private readonly pending = new Map<string, PeerInfo>()
  private readonly bootstrap: Array<{ peerId: string, addr: string }>
  private lookupTimer?: NodeJS.Timeout
  private lookup?: AbortController
  private running = false
  private readonly onDiscovery = (evt: CustomEvent<PeerInfo>): void => { this.enqueue(evt.detail) }
  // a peer met by any route (a DHT walk, its own dial) is no longer failing
  private readonly onConnect = (evt: CustomEvent<PeerId>): void => { this.failed.delete(evt.detail.toString()) }
  private readonly onDisconnect = (): void => {
    if (this.connections() < this.target) { this.failed.clear(); this.backoff.reset() }
  }

  constructor (components: ConnectorComponents, init: ConnectorInit) {
    this.components = components
    this.target = init.targetPeers
    // a busy node (or a busy seed) can take seconds for a TLS handshake: give dials room
    this.dialTimeoutMs = init.dialTimeoutMs ?? 15_000
    this.maxParallel = init.maxParallelDials ?? 4
    this.lookupIntervalMs = init.lookupIntervalMs ?? 10_000
    this.backoff = new LookupBackoff(
      this.lookupIntervalMs,
      Math.max(this.lookupIntervalMs, init.maxLookupIntervalMs ?? 300_000)
    )
    this.bootstrap = (init.bootstrap ?? []).flatMap(addr => {
      const peerId = /\/p2p\/([^/]+)$/.exec(addr)?.[1]
      return peerId == null ? [] : [{ peerId, addr }]
    })
    this.log = components.logger.forComponent('idlegrid:connector')
  }

  start (): void {
    this.running = true
    this.components.events.addEventListener('peer:discovery', this.onDiscovery)
    this.components.events.addEventListener('peer:connect', this.onConnect)
    this.components.events.addEventListener('peer:disconnect', this.onDisconnect)
  }

  afterStart (): void {
    // at once, not after @libp2p/bootstrap's start-up delay (100 ms here): every component has
    // started, and the node's first connection is what its first sync, lookup and auction wait for
    void this.redialBootstrap()
    this.lookupTimer = setInterval(() => {
      void this.redialBootstrap().then(async () => { if (this.backoff.due()) await this.lookForPeers() })
    }, this.lookupIntervalMs)
    this.lookupTimer.unref()
  }

  stop (): void {
    this.running = false
    clearInterval(this.lookupTimer)
    this.lookup?.abort(SERVICE_STOPPED)
    this.components.events.removeEventListener('peer:discovery', this.onDiscovery)
    this.components.events.removeEventListener('peer:connect', this.onConnect)
    this.components.events.removeEventListener('peer:disconnect', this.onDisconnect)
    this.pending.clear()
  }

  status (): ConnectorStatus {
    const givenUp = [...this.failed.values()].filter(n => n >= RETRIES_BEFORE_GIVING_UP).length
    return {
      connections: this.connections(),
      pending: this.pending.size,
      dialing: this.dialing.size,
      failing: this.failed.size,
      givenUp,
      lookups: this.lookups,
      lookupWaitMs: this.backoff.currentWaitMs
    }
  }

  private connections (): number {
    return this.components.connectionManager.getConnections().length
  }

  private isConnected (peer: PeerId): boolean {
    return this.components.connectionManager.getConnections(peer).length > 0
  }

  /**
   * Queues a dial to `peer`; true if it is a peer worth looking on for: one we are not connected
   * to, being dialed or not, whose dials have not failed too often in a row.
   */
  private enqueue (peer: PeerInfo): boolean {
    const id = peer.id.toString()
    if (!this.running || peer.id.equals(this.components.peerId) || this.isConnected(peer.id)) return false
    const promising = (this.failed.get(id) ?? 0) < RETRIES_BEFORE_GIVING_UP
    if (this.dialing.has(id)) return promising
    this.pending.delete(id)
    this.pending.set(id, peer)
    if (this.pending.size > MAX_PENDING) this.pending.delete(this.pending.keys().next().value as string)
    this.pump()
    return promising
  }

  private pump (): void {
    while (
      this.running &&
      this.dialing.size < this.maxParallel &&
      this.pending.size > 0 &&
      this.connections() < this.target
    ) {
      const [id, peer] = this.pending.entries().next().value as [string, PeerInfo]
      this.pending.delete(id)
      if (this.isConnected(peer.id)) continue
      this.dialing.add(id)
      this.components.connectionManager.openConnection(peer.id, { signal: AbortSignal.timeout(this.dialTimeoutMs) })
        .then(() => { this.failed.delete(id) }, (err: Error) => {
          this.log('dial %p failed: %s', peer.id, err.message)
          const failures = (this.failed.get(id) ?? 0) + 1
          this.failed.delete(id)
          this.failed.set(id, failures)
          if (this.failed.size > MAX_FAILED) this.failed.delete(this.failed.keys().next().value as string)
        })
        .finally(() => {
          this.dialing.delete(id)
          this.pump()
        })
    }
  }

  /**
   * Dials the bootstrap list at start, and again on every lookup tick while connected to none
   * of it: libp2p's bootstrap module dials its list once, after a delay, and a node whose first
   * dial failed (a busy seed, a seed that restarted) would stay alone.
   */
  private async redialBootstrap (): Promise<void> {
    if (!this.running || this.bootstrap.length === 0) return
    const connected = new Set(this.components.connectionManager.getConnections().map(c => c.remotePeer.toString()))
    if (this.bootstrap.some(b => connected.has(b.peerId))) return
    await Promise.all(this.bootstrap.map(async (b) => {
      await this.components.connectionManager
        .openConnection(multiaddr(b.addr), { signal: AbortSignal.timeout(this.dialTimeoutMs) })
        .catch((err: Error) => {
          this.log('redial of bootstrap %s failed: %s', b.addr, err.message)
        })
    }))
  }

  /** One bounded DHT lookup of our own key: its answers arrive as peer:discovery events. */
  private async lookForPeers (): Promise<void> {
    if (!this.running || this.lookup != null || this.connections() >= this.target) return
    let dht: ClosestPeers | undefined
    try {
      dht = this.components.dht as ClosestPeers | undefined
    } catch {} // libp2p's components throw for a service that is not configured
    if (dht == null) return
    this.lookup = new AbortController()
    const signal = AbortSignal.any([this.lookup.signal, AbortSignal.timeout(LOOKUP_TIMEOUT_MS)])
    let found = false
    try {
      // libp2p announces a peer (peer:discovery) only the first time it enters the peer store,
      // so peers met again in later lookups are queued from the query events themselves
      for await (const event of dht.getClosestPeers(this.components.peerId.toMultihash().bytes, { signal })) {
        if (event.name === 'FINAL_PEER' && event.peer != null) found = this.enqueue(event.peer) || found
        if (event.name === 'PEER_RESPONSE') for (const peer of event.closer ?? []) found = this.enqueue(peer) || found
      }
    } catch (err: any) {
      this.log('lookup for more peers ended: %s', err?.message)
    } finally {
      this.lookup = undefined
      this.lookups++
      this.backoff.done(found)
      if (!found) this.log('lookup found no new peer: next in %d s', this.backoff.currentWaitMs / 1000)
    }
  }
}

export interface PeerConnectorService extends Startable {
  status(): ConnectorStatus
}

export function peerConnector (init: ConnectorInit): (components: ConnectorComponents) => PeerConnectorService {
  return (components) => new PeerConnector(components, init)
}
