/**
 * What the ledger service is to the rest of the node: its name and capability in the service
 * map, its init (from the node config: from-config.ts), the components it uses, and what it
 * offers other services and the CLI (LedgerService). The service itself is ledger-node.ts.
 */

import type { LedgerRecord } from '../entries/entry.js'
import type { AdmissionOptions } from '../ingest/admission.js'
import type { LedgerIngest } from '../ingest/ingest.js'
import type { TrustAnchors } from '../reputation/anchors/adopt.js'
import type { Earnings, Reputation, ReputationParams } from '../reputation/reputation.js'
import type { ReputationExplain } from '../reputation/trust-explain.js'
import type { LedgerStore } from '../store/store.js'
import type { SyncReport } from '../sync/client.js'
import type { FlushResult } from '../sync/flush.js'
import type { ReplicateMode } from '../sync/scope.js'
import type { RetainMode, RetentionReport } from './retention.js'
import type { VerifiedUsage } from '../usage/statement.js'
import type { FeedView, LedgerStatus } from './views.js'
import type { CAPACITY_SERVICE, CapacitySource } from '../../capability/index.js'
import type { Role } from '../../config/index.js'
import type { CONTROL_HANDLERS, ControlHandler } from '../../control/index.js'
import type { GOSSIP_SERVICE, GossipRouter, HeartbeatService, RateLimit } from '../../node/index.js'
import type { GossipsubEvents } from '@chainsafe/libp2p-gossipsub'
import type { ComponentLogger, Libp2pEvents, PeerId, PeerStore, PrivateKey, PubSub, TypedEventTarget } from '@libp2p/interface'
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal'

/** The ledger's name in the node's service map. */
export const LEDGER_SERVICE = 'ledger'
/** What the ledger service provides, for other services' `serviceDependencies`. */
export const LEDGER_CAPABILITY = '@idlegrid/ledger'

export interface LedgerServiceInit {
  dataDir: string
  role: Role
  /** the node's heartbeat interval (heartbeat summaries count heartbeats in it) */
  heartbeatMs?: number
  /** providers: append a HeartbeatSummary this often (default 1 h; 0 = never) */
  summaryIntervalMs?: number
  /** whether the provider's advertised windows are open at a time (default: always) */
  isAvailable?: (at: number) => boolean
  /** heads exchange with a few connected peers this often (default 30 s) */
  syncIntervalMs?: number
  /** a new connection is synced once identified; when identify has not answered by then, anyway (default 2 s) */
  identifyWaitMs?: number
  /** offer ledger.appendTestJob (development: --dev-ledger-methods) */
  devMethods?: boolean
  reputation?: Partial<ReputationParams>
  /** before stopping, wait up to this for a peer to hold entries appended in this run (default 5 s) */
  flushOnStopMs?: number
  /**
   * the operator's trust seeds (peer ids): with the node itself, where its view of reputation
   * starts (reputation/trust.ts) and the roots of standing (ingest/standing.ts); build-node passes the bootstrap
   * peers' ids and those of --trust (default none)
   */
  trustedPeers?: string[]
  /**
   * the trust lists the node adopted (reputation/anchors/adopt.ts; build-node loads them from the config's
   * trust.lists): their peers are roots of standing and, while their list is valid, seeds of trust
   */
  trustLists?: TrustAnchors
  /**
   * also join the legacy global topic /idlegrid/5/ledger: publish our entries there and take
   * others' from it (default false in every role, bootstraps included: entries reach the
   * counterparty and the trust seeds by announcement and everyone else by pull, so no node
   * validates every entry of the network; protocols/README.md §7 "Propagation"). A node
   * that leaves it off ignores the topic's messages unread.
   */
  gossip?: boolean
  /**
   * which feeds sync pulls (sync/scope.ts): 'all', or 'bounded' to this node's own, its
   * counterparties', the providers it may award and theirs within `replicationHorizon` hops
   * (default: 'all' for a bootstrap, 'bounded' for renters and providers)
   */
  replicate?: ReplicateMode
  /** hops of the bounded scope (default 2) */
  replicationHorizon?: number
  /** sync requests opened to one peer, at most (default sync/requests.ts SYNC_PACE, within a peer guard's default) */
  syncPace?: RateLimit
  /**
   * what the node keeps of other feeds (service/retention.ts): 'horizon' (the default) drops
   * entries older than the retention horizon, 224 days; 'all' keeps every entry (a seed that
   * opts in to serving the network's whole history)
   */
  retain?: RetainMode
  /** bounds of the quarantine and quotas (tests) */
  admission?: Omit<AdmissionOptions, 'selfId' | 'trustedPeers'>
}

/** What the ledger uses of the node: libp2p components, and the node's gossip router (service `gossip`). */
export interface LedgerComponents {
  peerId: PeerId
  /** the node key: signs our feed */
  privateKey: PrivateKey
  registrar: Registrar
  connectionManager: ConnectionManager
  /** what identify learnt of peers that connected before this service listened */
  peerStore: PeerStore
  pubsub: PubSub<GossipsubEvents>
  [GOSSIP_SERVICE]: GossipRouter
  /** a provider's GPU slots (exec's capacity service), read only by a provider that writes summaries */
  [CAPACITY_SERVICE]: CapacitySource
  events: TypedEventTarget<Libp2pEvents>
  logger: ComponentLogger
  /** the node's heartbeats, when it has them: they carry our head seq, and peers' heads to us (sync/head-hints.ts) */
  heartbeats?: HeartbeatService
}

/** What the ledger offers other services and the CLI. */
export interface LedgerService {
  /**
   * the reputation the auction uses: reliability in [0, 1]; a provider asked about bid to us, so
   * its feed is in our replication scope
   */
  reliability(peerId: string): number
  /**
   * a provider this node may award (its capability record was seen): its feed and its
   * counterparties' are in the replication scope
   */
  mayAward(peerId: string): void
  /** slashed providers are excluded from auctions */
  isExcluded(peerId: string): boolean
  reputation(peerId: string, now?: number): Reputation
  reputations(now?: number): Reputation[]
  /** the reputation with its evidence split into direct, transitive and discounted parts */
  explainReputation(peerId: string, now?: number): ReputationExplain & { reputation: Reputation }
  earnings(peerId?: string): Earnings
  /** appends our provider attestation envelope to our feed */
  recordAttestation(envelope: Uint8Array): Promise<LedgerRecord>
  /** appends our renter receipt envelope to our feed */
  recordReceipt(envelope: Uint8Array): Promise<LedgerRecord>
  /**
   * appends a co-signed usage statement (an encoded CoSignedUsage naming us as its provider or
   * renter) to our feed; refuses one that breaks a rule (LedgerError ERR_LEDGER_USAGE), or that our feed
   * already holds or overlaps in time one of the same lease (LedgerError ERR_LEDGER_USAGE_OVERLAP)
   */
  recordUsage(body: Uint8Array): Promise<{ record: LedgerRecord, usage: VerifiedUsage }>
  /** resolves when a connected peer holds our feed's head, or after timeoutMs */
  flush(opts?: { timeoutMs?: number }): Promise<FlushResult>
  /** the peers our new entries were announced to, with how often (bounded) */
  announcedTo(): ReadonlyMap<string, number>
  /** a heads exchange with the connected peers now (bounded) */
  syncNow(opts?: { timeoutMs?: number }): Promise<SyncReport>
  /** one retention pass now: other feeds' entries older than the horizon are dropped (it also runs hourly) */
  applyRetention(): Promise<RetentionReport>
  status(): Promise<LedgerStatus>
  show(peerId: string, limit?: number): Promise<FeedView>
  /** the stored ledger (reads) */
  readonly store: LedgerStore
  /** the ingest step: every entry is checked there before it is stored, and our own are signed */
  readonly ingest: LedgerIngest
  [CONTROL_HANDLERS](): Record<string, ControlHandler>
}
