import type { ComponentLogger, Logger, PeerDiscovery, PeerId, PeerInfo, Startable, TypedEventTarget, Libp2pEvents } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'

export interface ConnectorInit {
  /** dial discovered peers while the node has fewer connections than this */
  targetPeers: number
  /** time allowed for one dial */
  dialTimeoutMs?: number
  /** dials in flight at once */
  maxParallelDials?: number
}

interface ConnectorComponents {
  peerId: PeerId
  events: TypedEventTarget<Libp2pEvents>
  connectionManager: ConnectionManager
  logger: ComponentLogger
}

/**
 * Joins the mesh: libp2p v2 no longer dials the peers it discovers (bootstrap list, DHT
 * walks), so gossipsub would only ever see the bootstrap nodes. This dials discovered
 * peers until the node has `targetPeers` connections, a bounded number at a time.
 */
class PeerConnector implements Startable {
  private readonly components: ConnectorComponents
  private readonly target: number
  private readonly dialTimeoutMs: number
  private readonly maxParallel: number
  private readonly log: Logger
  private readonly dialing = new Set<string>()
  private readonly onDiscovery = (evt: CustomEvent<PeerInfo>): void => { this.maybeDial(evt.detail) }

  constructor (components: ConnectorComponents, init: ConnectorInit) {
    this.components = components
    this.target = init.targetPeers
    this.dialTimeoutMs = init.dialTimeoutMs ?? 5_000
    this.maxParallel = init.maxParallelDials ?? 4
    this.log = components.logger.forComponent('idlegrid:connector')
  }

  start (): void {
    this.components.events.addEventListener('peer:discovery', this.onDiscovery)
  }

  stop (): void {
    this.components.events.removeEventListener('peer:discovery', this.onDiscovery)
  }

  private maybeDial (peer: PeerInfo): void {
    const id = peer.id.toString()
    if (peer.id.equals(this.components.peerId) || this.dialing.has(id)) return
    if (this.dialing.size >= this.maxParallel) return
    const connected = this.components.connectionManager.getConnections()
    if (connected.length >= this.target || connected.some(c => c.remotePeer.equals(peer.id))) return
    this.dialing.add(id)
    this.components.connectionManager.openConnection(peer.id, { signal: AbortSignal.timeout(this.dialTimeoutMs) })
      .catch((err: Error) => { this.log('dial %p failed: %s', peer.id, err.message) })
      .finally(() => this.dialing.delete(id))
  }
}

export function peerConnector (init: ConnectorInit): (components: ConnectorComponents) => Startable {
  return (components) => new PeerConnector(components, init)
}

export type { PeerDiscovery }
