/**
 * The ledger as a libp2p service (its contract: ledger-service.ts), run by every role: the
 * store in `<dataDir>/ledger` behind the ingest step (ingest/ingest.ts), and around them the
 * parts that each do one job: push of new entries to who needs them (sync/announce.ts), the
 * legacy ledger topic when asked for (sync/gossip.ts), the sync protocol's two sides
 * (sync/server.ts, sync/client.ts), confirming that peers hold our feed (sync/flush.ts), a
 * provider's uptime summaries (reputation/uptime.ts), reputation for the auction
 * (reputation/view.ts), views and control methods (views.ts, control.ts).
 */

import { join } from 'node:path'
import { serviceCapabilities, serviceDependencies } from '@libp2p/interface'
import { PROTOCOL, TOPIC } from '../../../protocols/ids.js'
import { DevJobs } from '../dev.js'
import { LedgerEntry, type LedgerRecord } from '../entries/entry.js'
import { ledgerClosed } from '../errors.js'
import { LedgerIngest } from '../ingest/ingest.js'
import { UptimeReporter } from '../reputation/uptime.js'
import { ReputationView } from '../reputation/view.js'
import type { Earnings, Reputation } from '../reputation/reputation.js'
import type { ReputationExplain } from '../reputation/trust-explain.js'
import type { LedgerStore } from '../store/store.js'
import { FeedAnnouncer } from '../sync/announce.js'
import { SyncClient, type SyncReport } from '../sync/client.js'
import { REQUEST_TIMEOUT_MS } from '../sync/requests.js'
import { FeedFlusher, type FlushResult } from '../sync/flush.js'
import { LedgerGossip } from '../sync/gossip.js'
import { HeadHints } from '../sync/head-hints.js'
import { serveSync } from '../sync/protocol.js'
import { ReplicationScope } from '../sync/scope.js'
import { SyncServer } from '../sync/server.js'
import { UsageRecorder } from '../usage/recorder.js'
import type { VerifiedUsage } from '../usage/statement.js'
import { ConnectSync } from './connect-sync.js'
import { RetentionPass, type RetentionReport } from './retention.js'
import { ledgerControlHandlers } from './control.js'
import { LEDGER_CAPABILITY, type LedgerComponents, type LedgerService, type LedgerServiceInit } from './ledger-service.js'
import { feedView, statusView, type FeedView, type LedgerStatus } from './views.js'
import { CAPACITY_CAPABILITY, CAPACITY_SERVICE } from '../../capability/index.js'
import { CONTROL_HANDLERS, type ControlHandler } from '../../control/index.js'
import { GOSSIP_CAPABILITY, GOSSIP_SERVICE, type HeartbeatService, type HeardHeartbeat } from '../../node/index.js'
import { SERVICE_STOPPED } from '../../common/index.js'
import type { Ed25519PrivateKey, Logger, Startable } from '@libp2p/interface'

/**
 * How often the trust vector is recomputed in the background when the ledger changed or it aged
 * (reputation/trust.ts).
 */
const TRUST_TIMER_MS = 30_000
/** The retention pass runs this often (README §7 "Retention"): entries age by days, an hour is prompt enough. */
const RETENTION_PASS_MS = 3600_000
/** The first pass, this long after start: late enough that a starting node's sync comes first. */
const RETENTION_FIRST_PASS_MS = 5 * 60_000
/** gossipsub's capability: the ledger publishes on it. */
const PUBSUB_CAPABILITY = '@libp2p/pubsub'

class LedgerNode implements LedgerService, Startable {
  readonly [Symbol.toStringTag] = LEDGER_CAPABILITY
  readonly [serviceCapabilities]: string[] = [LEDGER_CAPABILITY]
  readonly [serviceDependencies]: string[]
  private readonly components: LedgerComponents
  private readonly init: LedgerServiceInit
  private readonly log: Logger
  private readonly key: Ed25519PrivateKey
  private readonly selfId: string
  private ledger?: LedgerIngest
  private readonly aborter = new AbortController()
  private readonly timers: NodeJS.Timeout[] = []
  private readonly timeouts: NodeJS.Timeout[] = []
  /** our own head seq when this run started: entries up to it were published in an earlier run */
  private ownAtStart = 0
  private readonly scores: ReputationView
  private readonly uptime: UptimeReporter
  private readonly usage: UsageRecorder
  private readonly sync: SyncClient
  private readonly scope: ReplicationScope
  private readonly flusher: FeedFlusher
  private readonly server: SyncServer
  private readonly gossip: LedgerGossip
  private readonly announcer: FeedAnnouncer
  private readonly hints: HeadHints
  private readonly connects: ConnectSync
  private readonly retention: RetentionPass
  private readonly dev?: DevJobs

  private readonly onHeartbeat = (evt: Event): void => {
    this.hints.heard((evt as CustomEvent<HeardHeartbeat>).detail)
  }

  constructor (components: LedgerComponents, init: LedgerServiceInit) {
    this.components = components
    this.init = init
    this.log = components.logger.forComponent('idlegrid:ledger')
    if (components.privateKey.type !== 'Ed25519') throw new Error('the ledger needs an Ed25519 node key')
    this.key = components.privateKey
    this.selfId = components.peerId.toString()
    const ledger = (): LedgerIngest | undefined => this.ledger
    const store = (): LedgerStore | undefined => this.ledger?.store
    const signal = this.aborter.signal
    this.scores = new ReputationView(init.reputation, {
      selfId: this.selfId,
      trustedPeers: init.trustedPeers ?? [],
      anchors: init.trustLists
    })
    for (const list of init.trustLists?.lists ?? []) this.log('adopted trust list "%s" of %s, sequence %s, %d peers, expires %s', list.name, list.operator, list.sequence, list.peers.length, new Date(list.expiresAt).toISOString())
    for (const refused of init.trustLists?.refused ?? []) this.log.error('trust list %s not adopted (%s): %s', refused.source, refused.reason, refused.message)
    // a provider's heartbeat summaries say how busy its GPU slots were: it reads exec's capacity service
    const summarizesSlots = init.role === 'provider' && init.summaryIntervalMs !== 0
    this[serviceDependencies] = summarizesSlots
      ? [PUBSUB_CAPABILITY, GOSSIP_CAPABILITY, CAPACITY_CAPABILITY]
      : [PUBSUB_CAPABILITY, GOSSIP_CAPABILITY]
    const slots = summarizesSlots
      ? () => {
          const capacity = components[CAPACITY_SERVICE]
          const total = capacity.totalSlots()
          return { total, busy: Math.max(0, total - capacity.freeSlots()) }
        }
      : undefined
    this.uptime = new UptimeReporter(
      { ...init, slots },
      this.selfId,
      async (kind, body) => await this.ingest.append(kind, body)
    )
    this.usage = new UsageRecorder(
      { id: this.selfId, bytes: components.peerId.toMultihash().bytes },
      async (kind, body) => await this.ingest.append(kind, body)
    )
    this.scope = new ReplicationScope({
      selfId: this.selfId,
      // a bootstrap serves every feed (a seed); a renter or provider holds what it needs
      mode: init.replicate ?? (init.role === 'bootstrap' ? 'all' : 'bounded'),
      horizon: init.replicationHorizon,
      seeds: [...init.trustedPeers ?? [], ...init.trustLists?.allPeers() ?? []]
    })
    this.sync = new SyncClient({
      connectionManager: components.connectionManager,
      ledger,
      selfId: this.selfId,
      scope: this.scope,
      signal,
      log: this.log,
      pace: init.syncPace
    })
    this.flusher = new FeedFlusher(this.sync, store, this.selfId, signal)
    this.server = new SyncServer(store, this.sync)
    // the router and gossipsub are read when used: services start together
    this.gossip = new LedgerGossip({
      pubsub: () => this.components.pubsub,
      gossip: () => this.components[GOSSIP_SERVICE],
      ledger,
      signal,
      onBehind: () => { this.sync.syncWithAnyone() },
      log: this.log
    })
    this.hints = new HeadHints({ client: this.sync, store, selfId: this.selfId })
    this.connects = new ConnectSync({
      components,
      ledger,
      sync: this.sync,
      identifyWaitMs: init.identifyWaitMs,
      log: this.log
    })
    this.announcer = new FeedAnnouncer({ client: this.sync, seeds: init.trustedPeers ?? [], signal, log: this.log })
    this.retention = new RetentionPass({ ledger, selfId: this.selfId })
    if (init.devMethods === true) {
      this.dev = new DevJobs(
        { key: this.key, peerId: components.peerId },
        () => this.ingest,
        envelope => {
          if (this.gossips) this.gossip.publish(envelope)
        }
      )
    }
  }

  get ingest (): LedgerIngest {
    if (this.ledger == null) throw ledgerClosed()
    return this.ledger
  }

  get store (): LedgerStore {
    return this.ingest.store
  }

  async start (): Promise<void> {
    const ledger = await LedgerIngest.open(join(this.init.dataDir, 'ledger'), {
      privateKey: this.key,
      peerId: this.components.peerId,
      admission: {
        ...this.init.admission,
        trustedPeers: [...(this.init.trustedPeers ?? []), ...(this.init.trustLists?.allPeers() ?? [])]
      }
    })
    this.ledger = ledger
    const { store } = ledger
    for await (const record of store.entries()) {
      this.scores.add(record)
      this.scope.noteStored(record)
      this.uptime.noteStored(record)
      this.usage.noteStored(record)
    }
    this.ownAtStart = store.head(this.selfId)?.seq ?? 0
    store.onAdded((record) => { this.added(record) })
    // retention dropped it: reputation no longer counts it (its weight had decayed to nothing)
    store.onDropped((record) => { this.scores.forget(record) })
    await serveSync(
      this.components.registrar,
      REQUEST_TIMEOUT_MS,
      async (request, remote) => await this.server.answer(request, remote),
      this.log
    )
    if (this.gossips) this.gossip.start()
    else this.gossip.refuse()
  }

  /** libp2p's components throw for a service the node lacks: a node without heartbeats has no hints */
  private heartbeats (): HeartbeatService | undefined {
    try {
      return this.components.heartbeats
    } catch {
      return undefined
    }
  }

  private get gossips (): boolean {
    return this.init.gossip ?? false
  }

  afterStart (): void {
    // gossipsub accepts subscriptions only once it has started
    if (this.gossips) this.components.pubsub.subscribe(TOPIC.ledger)
    this.connects.start()
    const heartbeats = this.heartbeats()
    heartbeats?.reportLedgerHead(() => this.ledger?.store.head(this.selfId)?.seq ?? 0, () => this.hints.relayed())
    heartbeats?.events.addEventListener('heartbeat', this.onHeartbeat)
    for (const peer of this.sync.connectedPeers()) this.connects.connectedBeforeStart(peer)
    const every = (ms: number, fn: () => void): void => {
      const timer = setInterval(fn, ms)
      timer.unref()
      this.timers.push(timer)
    }
    every(this.init.syncIntervalMs ?? 30_000, () => { this.sync.periodicSync() })
    every(TRUST_TIMER_MS, () => { this.scores.refreshIfUsed() })
    const summaryMs = this.init.summaryIntervalMs ?? 3600_000
    if (this.init.role === 'provider' && summaryMs > 0) {
      every(this.uptime.sampleEveryMs(summaryMs), () => { this.uptime.sampleSlots() })
      every(summaryMs, () => {
        this.uptime.appendSummary().catch((err: unknown) => { this.log('heartbeat summary not appended: %e', err) })
      })
    }
    if ((this.init.retain ?? 'horizon') === 'horizon') {
      const pass = (): void => {
        this.applyRetention().catch((err: unknown) => { this.log('retention pass failed: %e', err) })
      }
      every(RETENTION_PASS_MS, pass)
      // a node that never runs an hour (a laptop) still drops what aged while it was off
      const first = setTimeout(pass, RETENTION_FIRST_PASS_MS)
      first.unref()
      this.timeouts.push(first)
    }
    // whatever we hold that peers lack (entries appended while offline) goes out through the
    // heads exchange that every new connection starts
  }

  async beforeStop (): Promise<void> {
    this.connects.stop()
    this.heartbeats()?.events.removeEventListener('heartbeat', this.onHeartbeat)
    for (const timer of this.timers) clearInterval(timer)
    for (const timer of this.timeouts) clearTimeout(timer)
    const head = this.ledger?.store.head(this.selfId)
    if (head != null && head.seq > this.confirmedSeq()) {
      const result = await this.flush({ timeoutMs: this.init.flushOnStopMs ?? 5_000 }).catch(() => undefined)
      if (result?.acknowledged !== true) this.log('stopping with entries up to %d only local: peers will pull them on the next run', head.seq)
    }
  }

  async stop (): Promise<void> {
    this.aborter.abort(SERVICE_STOPPED)
    this.scores.stop()
    this.announcer.stop()
    await this.sync.settled()
    await this.components.registrar.unhandle(PROTOCOL.ledgerSync).catch(() => {})
    await this.ledger?.close()
  }

  /**
   * One retention pass now (it also runs every hour, unless the node retains everything):
   * entries of other feeds older than the horizon are dropped (README §7 "Retention").
   */
  async applyRetention (): Promise<RetentionReport> {
    const report = await this.retention.run()
    if (report.dropped > 0) this.log('retention: %d entries of %d feeds older than the horizon dropped', report.dropped, report.feeds)
    return report
  }

  reliability (peerId: string): number {
    this.scope.mayAward(peerId)
    return this.scores.reliability(peerId)
  }

  mayAward (peerId: string): void {
    this.scope.mayAward(peerId)
  }

  isExcluded (peerId: string): boolean {
    return this.scores.isSlashed(peerId) || (this.ledger?.store.isSlashed(peerId) ?? false)
  }

  reputation (peerId: string, now = Date.now()): Reputation {
    return this.scores.reputation(peerId, now)
  }

  reputations (now = Date.now()): Reputation[] {
    return this.scores.reputations(now)
  }

  explainReputation (peerId: string, now = Date.now()): ReputationExplain & { reputation: Reputation } {
    return this.scores.explain(peerId, now)
  }

  earnings (peerId = this.selfId): Earnings {
    return this.scores.earnings(peerId)
  }

  async recordAttestation (envelope: Uint8Array): Promise<LedgerRecord> {
    return await this.ingest.append(LedgerEntry.BodyKind.ATTESTATION, envelope)
  }

  async recordReceipt (envelope: Uint8Array): Promise<LedgerRecord> {
    return await this.ingest.append(LedgerEntry.BodyKind.RECEIPT, envelope)
  }

  async recordUsage (body: Uint8Array): Promise<{ record: LedgerRecord, usage: VerifiedUsage }> {
    return await this.usage.record(body)
  }

  async flush (opts: { timeoutMs?: number } = {}): Promise<FlushResult> {
    return await this.flusher.flush(opts)
  }

  announcedTo (): ReadonlyMap<string, number> {
    return this.announcer.recipients
  }

  async syncNow (opts: { timeoutMs?: number } = {}): Promise<SyncReport> {
    return await this.sync.syncNow(opts)
  }

  async status (): Promise<LedgerStatus> {
    return await statusView(this.ingest, {
      confirmedSeq: this.confirmedSeq(),
      earnings: this.earnings(),
      hintPulls: this.hints.pulls,
      scope: this.scope
    })
  }

  async show (peerId: string, limit = 20): Promise<FeedView> {
    return await feedView(this.store, peerId, limit, this.isExcluded(peerId))
  }

  [CONTROL_HANDLERS] (): Record<string, ControlHandler> {
    const dev = this.dev
    return ledgerControlHandlers(
      this,
      dev == null
        ? undefined
        : {
            appendTestJobs: async request => await dev.append(request),
            appendSummary: async () => await this.uptime.appendSummary()
          }
    )
  }

  /** Our own seq known to be held elsewhere: confirmed by a peer, or published in an earlier run. */
  private confirmedSeq (): number {
    return Math.max(this.ownAtStart, this.flusher.acknowledgedSeq)
  }

  private added (record: LedgerRecord): void {
    this.scores.add(record)
    this.scope.noteStored(record)
    this.hints.noteStored(record, this.selfId)
    if (record.authorId !== this.selfId) return
    this.announcer.noteOwn(record)
    if (this.gossips) this.gossip.publish(record.envelope)
  }
}

/** The ledger service: give it to createNode's services as LEDGER_SERVICE. */
export function ledgerService (init: LedgerServiceInit): (components: LedgerComponents) => LedgerService {
  return (components) => new LedgerNode(components, init)
}
