/**
 * The first sync with each peer that connects (the ledger node's, ledger-node.ts): once identify
 * has said the peer speaks the sync protocol, its heads and then what we lack of them; a live
 * connection also grants the peer provisional standing (ingest/standing.ts).
 */

import { PROTOCOL } from '../../../protocols/ids.js'
import type { LedgerIngest } from '../ingest/ingest.js'
import type { SyncClient } from '../sync/client.js'
import type { LedgerComponents } from './ledger-service.js'
import type { IdentifyResult, Logger, PeerId } from '@libp2p/interface'

/**
 * A new connection is synced once identify has told us the peer's protocols (a peer without
 * the sync protocol is not asked); when identify has not answered by then, it is synced anyway.
 */
const IDENTIFY_WAIT_MS = 2_000

export interface ConnectSyncOptions {
  components: Pick<LedgerComponents, 'events' | 'peerStore'>
  /** the ingest step, while the store is open: it grants standing */
  ledger: () => LedgerIngest | undefined
  sync: SyncClient
  /** how long a new connection waits for identify (default IDENTIFY_WAIT_MS) */
  identifyWaitMs?: number
  log: Logger
}

export class ConnectSync {
  private readonly deps: ConnectSyncOptions
  /** peers connected and not synced yet, with the timer that syncs them if identify never answers */
  private readonly awaitingIdentify = new Map<string, NodeJS.Timeout>()

  constructor (deps: ConnectSyncOptions) {
    this.deps = deps
  }

  /** Listens for new connections and identify answers. */
  start (): void {
    this.deps.components.events.addEventListener('peer:connect', this.onConnect)
    this.deps.components.events.addEventListener('peer:identify', this.onIdentify)
  }

  /** Stops listening; peers still waiting for identify are not synced. */
  stop (): void {
    this.deps.components.events.removeEventListener('peer:connect', this.onConnect)
    this.deps.components.events.removeEventListener('peer:identify', this.onIdentify)
    for (const timer of this.awaitingIdentify.values()) clearTimeout(timer)
    this.awaitingIdentify.clear()
  }

  readonly onConnect = (evt: CustomEvent<PeerId>): void => {
    // a live connection proves the peer's key: provisional standing (ingest/standing.ts)
    this.deps.ledger()?.grantConnected(evt.detail.toString()).catch((err: unknown) => { this.deps.log('standing of %p not granted: %e', evt.detail, err) })
    const peer = evt.detail
    const key = peer.toString()
    if (this.awaitingIdentify.has(key)) return
    const timer = setTimeout(() => { this.syncConnected(peer) }, this.deps.identifyWaitMs ?? IDENTIFY_WAIT_MS)
    timer.unref()
    this.awaitingIdentify.set(key, timer)
  }

  readonly onIdentify = (evt: CustomEvent<IdentifyResult>): void => {
    const { peerId, protocols } = evt.detail
    if (!this.awaitingIdentify.has(peerId.toString())) return
    if (protocols.includes(PROTOCOL.ledgerSync)) this.syncConnected(peerId)
    else this.forgetConnected(peerId)
  }

  /**
   * A connection that opened while the node started (its bootstrap list is dialed at once) came
   * before the peer:connect listener: it gets the same standing and first sync, at once when
   * identify has already said the peer speaks the sync protocol.
   */
  connectedBeforeStart (peer: PeerId): void {
    this.onConnect(new CustomEvent('peer:connect', { detail: peer }))
    this.deps.components.peerStore.get(peer).then(({ protocols }) => {
      if (!this.awaitingIdentify.has(peer.toString()) || protocols.length === 0) return
      if (protocols.includes(PROTOCOL.ledgerSync)) this.syncConnected(peer)
      else this.forgetConnected(peer)
    }, () => {})
  }

  /** The first sync with a peer that connected: its heads, then what we lack of them. */
  private syncConnected (peer: PeerId): void {
    this.forgetConnected(peer)
    this.deps.sync.syncInBackground(peer)
  }

  private forgetConnected (peer: PeerId): void {
    const key = peer.toString()
    clearTimeout(this.awaitingIdentify.get(key))
    this.awaitingIdentify.delete(key)
  }
}
