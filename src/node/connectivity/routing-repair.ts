/**
 * kad-dht 15 pings a newly connected DHT server before it enters the routing table (5 s floor)
 * and never tries again while that connection lasts. A peer busy starting up, or a node busy
 * itself, that misses the ping stays out of the table: on a small network a provider is then
 * missing from its bootstrap's table for good, and renters never find it (seen in tests under
 * load). This service looks now and then for connected peers that speak the DHT protocol as
 * servers (identify says so) but are missing from the routing table, and asks kad-dht to add
 * them again, which pings them again. Bounded: a few peers a round, one round at a time.
 *
 * A DHT server is a peer whose identify said it handles the DHT protocol, not one the peer
 * store lists it for: libp2p adds to that list every protocol a peer opened a stream with, so a
 * DHT client (a renter) that queried us passed for a server there, and kad-dht's ping (libp2p
 * ping, which a renter answers) let it into the table (seen in the network e2e spec under load).
 *
 * A peer can claim to be a DHT server and never answer the ping. Its re-adds run side by side
 * (a round lasts one add's bound, not one per peer), and a peer whose re-add failed is left
 * out of the next rounds for a while (doubling each time), so peers like that cannot hold
 * every round's places and keep honest servers out of the table for good.
 */

import { SERVICE_STOPPED } from '../../common/index.js'
import type { ComponentLogger, IdentifyResult, Libp2pEvents, Logger, PeerId, Startable, TypedEventTarget } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'

export interface RoutingRepairInit {
  /** the DHT protocol id servers handle */
  protocol: string
  /** a round this often (default 15 s) */
  intervalMs?: number
  /** peers asked for again in one round (default 8) */
  maxPerRound?: number
}

/** The parts of kad-dht's routing table this reads (internal to kad-dht 15; absent: nothing is done). */
interface RoutingTableLike {
  find(peer: PeerId): Promise<unknown>
  add(peer: PeerId, options?: { signal?: AbortSignal }): Promise<void>
}

interface RoutingRepairComponents {
  connectionManager: ConnectionManager
  events: TypedEventTarget<Libp2pEvents>
  logger: ComponentLogger
  dht?: unknown
}

const DEFAULT_INTERVAL_MS = 15_000
const DEFAULT_MAX_PER_ROUND = 8
/** a re-add waits for kad-dht's ping: bounded like kad-dht's own add (10 s) */
const ADD_TIMEOUT_MS = 10_000
/**
 * a peer whose re-add failed is left out of the rounds for this long (two rounds: an honest
 * server too busy to answer gets its next try soon), doubled after each failure
 */
const RETRY_BACKOFF_MS = 30_000
/** the longest a failed peer is left out */
const MAX_RETRY_BACKOFF_MS = 30 * 60_000
/** failed peers remembered (the oldest is forgotten first) */
const MAX_FAILED_PEERS = 1_024
/** DHT servers remembered from identify (connected ones only; the oldest is forgotten first) */
const MAX_SERVERS = 4_096

export class RoutingTableRepair implements Startable {
  private readonly log: Logger
  private timer?: ReturnType<typeof setInterval>
  private round?: Promise<number>
  private stopping = new AbortController()
  /** peers asked for again, in all rounds (status, tests) */
  readded = 0
  /** peers whose re-add failed: how often in a row, and until when they are left out */
  private readonly failed = new Map<string, { failures: number, until: number }>()
  /** connected peers whose last identify listed the DHT protocol */
  private readonly servers = new Set<string>()
  private readonly onIdentify = (evt: CustomEvent<IdentifyResult>): void => {
    const id = evt.detail.peerId.toString()
    this.servers.delete(id)
    if (!evt.detail.protocols.includes(this.init.protocol)) return
    this.servers.add(id)
    if (this.servers.size > MAX_SERVERS) this.servers.delete(this.servers.values().next().value as string)
  }

  private readonly onDisconnect = (evt: CustomEvent<PeerId>): void => {
    this.servers.delete(evt.detail.toString())
  }

  constructor (private readonly components: RoutingRepairComponents, private readonly init: RoutingRepairInit) {
    this.log = components.logger.forComponent('idlegrid:node:routing-repair')
  }

  start (): void {
    this.components.events.addEventListener('peer:identify', this.onIdentify)
    this.components.events.addEventListener('peer:disconnect', this.onDisconnect)
    this.stopping = new AbortController()
    this.timer = setInterval(() => {
      this.round ??= this.repair().finally(() => {
        this.round = undefined
      })
    }, this.init.intervalMs ?? DEFAULT_INTERVAL_MS)
    this.timer.unref?.()
  }

  async stop (): Promise<void> {
    this.components.events.removeEventListener('peer:identify', this.onIdentify)
    this.components.events.removeEventListener('peer:disconnect', this.onDisconnect)
    this.servers.clear()
    clearInterval(this.timer)
    this.stopping.abort(SERVICE_STOPPED)
    await this.round
  }

  /** One round: connected DHT servers the routing table lacks are added again (at most maxPerRound). */
  async repair (): Promise<number> {
    const table = (this.components.dht as { routingTable?: RoutingTableLike } | undefined)?.routingTable
    if (table == null || typeof table.find !== 'function' || typeof table.add !== 'function') return 0
    const missing: PeerId[] = []
    const seen = new Set<string>()
    const now = Date.now()
    for (const connection of this.components.connectionManager.getConnections()) {
      if (missing.length >= (this.init.maxPerRound ?? DEFAULT_MAX_PER_ROUND) || this.stopping.signal.aborted) break
      const peer = connection.remotePeer
      if (seen.has(peer.toString())) continue
      seen.add(peer.toString())
      if (!this.servers.has(peer.toString()) || (this.failed.get(peer.toString())?.until ?? 0) > now) continue
      if (await table.find(peer) == null) missing.push(peer)
    }
    const results = await Promise.all(missing.map(async (peer) => {
      try {
        await table.add(peer, { signal: AbortSignal.any([this.stopping.signal, AbortSignal.timeout(ADD_TIMEOUT_MS)]) })
        if (await table.find(peer) != null) {
          this.failed.delete(peer.toString())
          return true
        }
      } catch (err) {
        this.log('could not add %p to the routing table again: %e', peer, err)
      }
      if (!this.stopping.signal.aborted) this.noteFailure(peer.toString())
      return false
    }))
    const added = results.filter(Boolean).length
    if (missing.length > 0) this.log('%d connected DHT servers were missing from the routing table; %d added again', missing.length, added)
    this.readded += added
    return added
  }

  /** Peers whose re-add failed and who sit out the rounds for now (status, tests). */
  backedOff (): number {
    const now = Date.now()
    return [...this.failed.values()].filter(f => f.until > now).length
  }

  private noteFailure (id: string): void {
    const failures = (this.failed.get(id)?.failures ?? 0) + 1
    this.failed.delete(id)
    this.failed.set(id, {
      failures,
      until: Date.now() + Math.min(MAX_RETRY_BACKOFF_MS, RETRY_BACKOFF_MS * 2 ** (failures - 1))
    })
    if (this.failed.size > MAX_FAILED_PEERS) this.failed.delete(this.failed.keys().next().value as string)
  }
}

export function routingTableRepair (
  init: RoutingRepairInit
): (components: RoutingRepairComponents) => RoutingTableRepair {
  return (components) => new RoutingTableRepair(components, init)
}
