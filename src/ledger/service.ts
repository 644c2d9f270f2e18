/**
 * The ledger as a libp2p service, run by every role: the store in `<dataDir>/ledger`,
 * new entries published on /idlegrid/1/ledger (whose validator ingests what others publish),
 * the sync protocol exchanging heads on connect and periodically and pulling missing ranges,
 * heartbeat summaries for providers, reputation for the auction, and control methods.
 */

import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey, peerIdFromString } from '@libp2p/peer-id'
import { equals } from 'uint8arrays/equals'
import { SignedEnvelope } from '../../protocols/envelope.js'
import { PROTOCOL, TOPIC } from '../../protocols/ids.js'
import { ControlError, type ControlHandler } from '../control/index.js'
import { ACCEPT, ignore, reject, type GossipRouter, type GossipVerdict } from '../node/index.js'
import { signTestJob, type Signer, type TestOutcome } from './dev.js'
import { decodeStoredBody, decodeStoredEntry, HeartbeatSummary, LedgerEntry, kindName, parseAuthor, sealEntry, type LedgerRecord } from './entry.js'
import { BrokenChainError, LedgerClosedError, SyncProtocolError } from './errors.js'
import { buildBadOutputProof, verifyFraudProof } from './fraud.js'
import { computeEarnings, computeReputation, DEFAULT_REPUTATION, ReputationEvidence, type Earnings, type Reputation, type ReputationParams } from './reputation.js'
import { LedgerStore, type Head, type IngestOutcome } from './store.js'
import { MAX_HEADS, MAX_RANGE_BYTES, MAX_RANGE_ENTRIES, serveSyncStream, syncRequest, type SyncRequest, type SyncResponse } from './sync.js'
import type { Role } from '../config/index.js'
import type { OpenedEnvelope } from '../identity/index.js'
import type { GossipsubEvents } from '@chainsafe/libp2p-gossipsub'
import type { ComponentLogger, Ed25519PrivateKey, Libp2pEvents, Logger, PeerId, PrivateKey, PubSub, Startable, TypedEventTarget } from '@libp2p/interface'
// until the ledger room's own change lands: the market renter declares this capability as its dependency
import { serviceCapabilities } from '@libp2p/interface'
import { LEDGER_CAPABILITY } from './extensions.js'
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal'

export interface LedgerServiceInit {
  dataDir: string
  role: Role
  /** the node's heartbeat interval (heartbeat summaries count heartbeats in it) */
  heartbeatMs?: number
  /** providers: append a HeartbeatSummary this often (default 1 h; 0 = never) */
  summaryIntervalMs?: number
  /** whether the provider's advertised windows are open at a time (default: always) */
  isAvailable?: (at: number) => boolean
  /** the provider's GPU slots now */
  slots?: () => { total: number, busy: number }
  /** heads exchange with a few connected peers this often (default 30 s) */
  syncIntervalMs?: number
  /** offer ledger.appendTestJob (development: --dev-ledger-methods) */
  devMethods?: boolean
  reputation?: Partial<ReputationParams>
  /** before stopping, wait up to this for a peer to hold entries appended in this run (default 5 s) */
  flushOnStopMs?: number
}

interface LedgerComponents {
  peerId: PeerId
  /** the node key: signs our feed */
  privateKey: PrivateKey
  registrar: Registrar
  connectionManager: ConnectionManager
  pubsub: PubSub<GossipsubEvents>
  gossip: GossipRouter
  events: TypedEventTarget<Libp2pEvents>
  logger: ComponentLogger
}

export interface FlushResult {
  /** true when a peer holds our feed up to `seq` (or there is nothing to hold) */
  acknowledged: boolean
  seq: number
  /** peers that said they hold it */
  by: string[]
  /** when not acknowledged: what the user should know */
  note?: string
}

export interface SyncReport {
  peers: number
  pulled: number
  errors: string[]
}

export interface HeadView {
  author: string
  seq: number
  hash: string
}

export interface LedgerStatus {
  peerId: string
  path: string
  authors: number
  entries: number
  slashed: string[]
  pending: number
  diskBytes: number
  heads: HeadView[]
  /** our own feed */
  own: { seq: number, unacknowledged: number }
  earnings: Earnings
}

export interface EntryView {
  seq: number
  time: number
  hash: string
  kind: string
  summary: Record<string, unknown>
}

/** What the ledger offers other services and the CLI. */
export interface LedgerService {
  /** the reputation the auction uses: reliability in [0, 1] */
  reliability(peerId: string): number
  /** slashed providers are excluded from auctions */
  isExcluded(peerId: string): boolean
  reputation(peerId: string, now?: number): Reputation
  reputations(now?: number): Reputation[]
  earnings(peerId?: string): Earnings
  /** appends our provider attestation envelope to our feed */
  recordAttestation(envelope: Uint8Array): Promise<LedgerRecord>
  /** appends our renter receipt envelope to our feed */
  recordReceipt(envelope: Uint8Array): Promise<LedgerRecord>
  /** builds, appends and publishes a BAD_OUTPUT fraud proof from four held entries (by entry hash) */
  reportBadOutput(hashes: { attestation: Uint8Array, receipt: Uint8Array, rerunAttestation: Uint8Array, rerunReceipt: Uint8Array }): Promise<LedgerRecord>
  /** resolves when a connected peer holds our feed's head, or after timeoutMs */
  flush(opts?: { timeoutMs?: number }): Promise<FlushResult>
  /** a heads exchange with the connected peers now (bounded) */
  syncNow(opts?: { timeoutMs?: number }): Promise<SyncReport>
  status(): Promise<LedgerStatus>
  show(peerId: string, limit?: number): Promise<{ head?: HeadView, slashed: boolean, entries: EntryView[] }>
  readonly store: LedgerStore
  controlHandlers(): Record<string, ControlHandler>
}

/** Heads exchange and pulls with one peer end after this. */
const SESSION_TIMEOUT_MS = 60_000
/** One request's answer must come within this. */
const REQUEST_TIMEOUT_MS = 10_000
/** Most entries pulled from one peer in one session; the next session continues. */
const MAX_PULL_PER_SESSION = 100_000
/** Retries of a failed background session before waiting for the periodic round. */
const SESSION_RETRIES = 3
/** Peers a periodic round syncs with. */
const PEERS_PER_ROUND = 3
/** Heads compared by reading the stored entry (fork detection below the held head) per session. */
const MAX_FORK_CHECKS = 1024
/** A pause after connect before syncing, so identify has told us the peer's protocols. */
const CONNECT_SYNC_DELAY_MS = 300

class LedgerNode implements LedgerService, Startable {
  readonly [serviceCapabilities] = [LEDGER_CAPABILITY]
  private readonly components: LedgerComponents
  private readonly init: LedgerServiceInit
  private readonly log: Logger
  private readonly params: ReputationParams
  private readonly self: Signer
  private readonly key: Ed25519PrivateKey
  private ledger?: LedgerStore
  private readonly evidence = new ReputationEvidence()
  private readonly scoreCache = new Map<string, { version: number, at: number, score: number }>()
  private readonly sessions = new Map<string, Promise<number>>()
  private readonly pulls = new Map<string, Promise<void>>()
  private readonly aborter = new AbortController()
  private readonly timers: NodeJS.Timeout[] = []
  private readonly startedAt = Date.now()
  /** own head seq a peer last confirmed holding */
  private acknowledgedSeq = 0
  private ownAtStart = 0
  private lastSummaryEnd?: number
  private readonly slotSamples = { total: 0, busyPpm: 0, count: 0 }
  private devRenters?: Signer[]
  private devQueue: Promise<unknown> = Promise.resolve()
  private readonly onConnect = (evt: CustomEvent<PeerId>): void => {
    const timer = setTimeout(() => { this.syncInBackground(evt.detail) }, CONNECT_SYNC_DELAY_MS)
    timer.unref()
  }

  constructor (components: LedgerComponents, init: LedgerServiceInit) {
    this.components = components
    this.init = init
    this.log = components.logger.forComponent('idlegrid:ledger')
    this.params = { ...DEFAULT_REPUTATION, ...init.reputation }
    if (components.privateKey.type !== 'Ed25519') throw new Error('the ledger needs an Ed25519 node key')
    this.key = components.privateKey as Ed25519PrivateKey
    this.self = { key: this.key, peerId: components.peerId }
  }

  get store (): LedgerStore {
    if (this.ledger == null) throw new LedgerClosedError()
    return this.ledger
  }

  async start (): Promise<void> {
    const store = await LedgerStore.open(join(this.init.dataDir, 'ledger'), { privateKey: this.key, peerId: this.components.peerId })
    this.ledger = store
    const selfId = this.components.peerId.toString()
    for await (const record of store.entries()) {
      this.evidence.add(record)
      if (record.authorId === selfId && record.kind === LedgerEntry.BodyKind.HEARTBEAT_SUMMARY) {
        const body = decodeStoredBody(record)
        if (body.kind === 'heartbeat-summary') this.lastSummaryEnd = Math.max(this.lastSummaryEnd ?? 0, Number(body.summary.periodEnd))
      }
    }
    this.ownAtStart = store.head(selfId)?.seq ?? 0
    store.onAdded((record) => { this.added(record) })
    await this.components.registrar.handle(PROTOCOL.ledgerSync, ({ stream, connection }) => {
      serveSyncStream(stream, connection.remotePeer, REQUEST_TIMEOUT_MS, async (request, remote) => await this.answer(request, remote), (err) => {
        this.log('sync request from %p failed: %e', connection.remotePeer, err)
      })
    }, { maxInboundStreams: 32, maxOutboundStreams: 64 })
    this.components.gossip.setValidator(TOPIC.ledger, async (envelope) => await this.validateGossip(envelope))
  }

  afterStart (): void {
    this.components.events.addEventListener('peer:connect', this.onConnect)
    const every = (ms: number, fn: () => void): void => {
      const timer = setInterval(fn, ms)
      timer.unref()
      this.timers.push(timer)
    }
    every(this.init.syncIntervalMs ?? 30_000, () => { this.periodicSync() })
    const summaryMs = this.init.summaryIntervalMs ?? 3600_000
    if (this.init.role === 'provider' && summaryMs > 0) {
      every(Math.max(100, Math.min(this.init.heartbeatMs ?? 10_000, summaryMs / 4)), () => { this.sampleSlots() })
      every(summaryMs, () => {
        this.appendSummary().catch((err: unknown) => { this.log('heartbeat summary not appended: %e', err) })
      })
    }
    // whatever we hold that peers lack (entries appended while offline) goes out through the
    // heads exchange that every new connection starts
  }

  async beforeStop (): Promise<void> {
    this.components.events.removeEventListener('peer:connect', this.onConnect)
    for (const timer of this.timers) clearInterval(timer)
    const head = this.ledger?.head(this.components.peerId.toString())
    if (head != null && head.seq > Math.max(this.ownAtStart, this.acknowledgedSeq)) {
      const result = await this.flush({ timeoutMs: this.init.flushOnStopMs ?? 5_000 }).catch(() => undefined)
      if (result?.acknowledged !== true) this.log('stopping with entries up to %d only local: peers will pull them on the next run', head.seq)
    }
  }

  async stop (): Promise<void> {
    this.aborter.abort()
    await Promise.allSettled([...this.sessions.values(), ...this.pulls.values()])
    await this.components.registrar.unhandle(PROTOCOL.ledgerSync).catch(() => {})
    await this.ledger?.close()
  }

  // -------------------------------------------------------------------------------------------
  // reputation

  reliability (peerId: string): number {
    const now = Date.now()
    const cached = this.scoreCache.get(peerId)
    const version = this.evidence.version(peerId)
    // scores decay slowly (half-life of days): a second-old score is as good as a new one
    if (cached != null && cached.version === version && now - cached.at < 1_000) return cached.score
    const score = computeReputation(this.evidence, peerId, now, this.params).score
    this.scoreCache.set(peerId, { version, at: now, score })
    if (this.scoreCache.size > 10_000) this.scoreCache.delete(this.scoreCache.keys().next().value as string)
    return score
  }

  isExcluded (peerId: string): boolean {
    return this.evidence.isSlashed(peerId) || (this.ledger?.isSlashed(peerId) ?? false)
  }

  reputation (peerId: string, now = Date.now()): Reputation {
    return computeReputation(this.evidence, peerId, now, this.params)
  }

  reputations (now = Date.now()): Reputation[] {
    return this.evidence.providers().map(id => this.reputation(id, now))
  }

  earnings (peerId = this.components.peerId.toString()): Earnings {
    return computeEarnings(this.evidence, peerId)
  }

  // -------------------------------------------------------------------------------------------
  // writing

  async recordAttestation (envelope: Uint8Array): Promise<LedgerRecord> {
    return await this.store.append(LedgerEntry.BodyKind.ATTESTATION, envelope)
  }

  async recordReceipt (envelope: Uint8Array): Promise<LedgerRecord> {
    return await this.store.append(LedgerEntry.BodyKind.RECEIPT, envelope)
  }

  async reportBadOutput (hashes: { attestation: Uint8Array, receipt: Uint8Array, rerunAttestation: Uint8Array, rerunReceipt: Uint8Array }): Promise<LedgerRecord> {
    const get = async (hash: Uint8Array, what: string): Promise<LedgerRecord> => {
      const record = await this.store.getByHash(hash)
      if (record == null) throw new ControlError('ERR_LEDGER_NOT_FOUND', `the ${what} entry ${Buffer.from(hash).toString('hex')} is not in the ledger`)
      return record
    }
    const evidence = {
      attestation: await get(hashes.attestation, 'attestation'),
      receipt: await get(hashes.receipt, 'receipt'),
      rerunAttestation: await get(hashes.rerunAttestation, 're-run attestation'),
      rerunReceipt: await get(hashes.rerunReceipt, 're-run receipt')
    }
    const proof = buildBadOutputProof(this.key, this.components.peerId, evidence)
    await verifyFraudProof(proof, this.components.peerId.toString())
    return await this.store.append(LedgerEntry.BodyKind.FRAUD_PROOF, proof)
  }

  private added (record: LedgerRecord): void {
    this.evidence.add(record)
    if (record.authorId === this.components.peerId.toString()) this.publish(record.envelope)
  }

  private publish (envelope: Uint8Array): void {
    this.components.pubsub.publish(TOPIC.ledger, envelope).catch((err: unknown) => {
      this.log('ledger entry not published (peers will pull it): %e', err)
    })
  }

  private sampleSlots (): void {
    const slots = this.init.slots?.()
    if (slots == null || slots.total <= 0) return
    this.slotSamples.total = slots.total
    this.slotSamples.busyPpm += Math.round(1_000_000 * Math.min(slots.busy, slots.total) / slots.total)
    this.slotSamples.count++
  }

  /** Appends the provider's uptime since its last summary (a gap while it was down counts as down). */
  async appendSummary (now = Date.now()): Promise<LedgerRecord | undefined> {
    const previous = this.lastSummaryEnd
    // a gap longer than a week is a new start, not a week of downtime
    const start = previous != null && previous < now && now - previous < 7 * 24 * 3600_000 ? previous : Math.min(this.startedAt, now - 1)
    if (now <= start) return undefined
    const available = availableMs(this.init.isAvailable, start, now)
    const upFrom = Math.max(start, this.startedAt)
    const up = Math.min(available, availableMs(this.init.isAvailable, upFrom, now))
    const interval = this.init.heartbeatMs ?? 10_000
    const samples = this.slotSamples
    const body = HeartbeatSummary.encode({
      periodStart: BigInt(start),
      periodEnd: BigInt(now),
      heartbeatsSent: Math.min(0xffffffff, Math.floor((now - upFrom) / interval)),
      intervalMs: Math.min(0xffffffff, interval),
      availableMs: BigInt(available),
      upMs: BigInt(up),
      slotsTotal: samples.total,
      busyPpm: samples.count > 0 ? Math.round(samples.busyPpm / samples.count) : 0
    })
    samples.busyPpm = 0
    samples.count = 0
    const record = await this.store.append(LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, body)
    this.lastSummaryEnd = now
    return record
  }

  // -------------------------------------------------------------------------------------------
  // gossip

  private async validateGossip (envelope: OpenedEnvelope): Promise<GossipVerdict> {
    if (this.ledger == null || this.aborter.signal.aborted) return ignore('ledger stopping')
    const bytes = SignedEnvelope.encode({ domain: envelope.domain, signer: envelope.signer.toMultihash().bytes, payload: envelope.payload, signature: envelope.signature })
    let outcome
    try {
      // the router verified the envelope's signature already
      [outcome] = await this.ledger.ingest([bytes], { checkSignature: false })
    } catch (err) {
      if (err instanceof LedgerClosedError) return ignore('ledger stopping')
      throw err
    }
    switch (outcome.status) {
      case 'added': return ACCEPT
      case 'duplicate': return ignore('duplicate')
      case 'pending':
        this.pullAuthorFromAnyone()
        return ignore('ahead of the held feed')
      case 'equivocation':
        return ignore('equivocation')
      case 'rejected':
        // a relayer cannot know our view of a forked feed: pull and compare instead of punishing
        if (outcome.error instanceof BrokenChainError) {
          this.pullAuthorFromAnyone()
          return ignore('does not extend the held feed')
        }
        return reject(outcome.error.code)
    }
  }

  private pullAuthorFromAnyone (): void {
    const peers = this.connectedPeers()
    if (peers.length > 0) this.syncInBackground(peers[Math.floor(Math.random() * peers.length)])
  }

  // -------------------------------------------------------------------------------------------
  // sync: server side

  private async answer (request: SyncRequest, remote: PeerId): Promise<SyncResponse> {
    const store = this.store
    if (request.heads != null) {
      const hint = request.heads
      if (hint.ownAuthor.length > 0) this.considerHint(remote, hint.ownAuthor, Number(hint.ownSeq))
      const heads = store.allHeads().slice(0, MAX_HEADS).map(h => ({ author: h.author, seq: BigInt(h.seq), hash: h.hash }))
      return { heads: { heads } }
    }
    if (request.range != null) {
      const author = parseAuthor(request.range.author)
      if (author == null || request.range.fromSeq < 1n) throw new SyncProtocolError('bad range request')
      const limit = Math.min(MAX_RANGE_ENTRIES, Math.max(1, request.range.limit === 0 ? MAX_RANGE_ENTRIES : request.range.limit))
      const from = request.range.fromSeq > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(request.range.fromSeq)
      const { entries, more } = await store.range(request.range.author, from, limit, MAX_RANGE_BYTES)
      return { entries: { entries, more } }
    }
    throw new SyncProtocolError('empty sync request')
  }

  /** A requester told us its own head; when we hold less of its feed, pull it (it may be about to leave). */
  private considerHint (remote: PeerId, authorBytes: Uint8Array, seq: number): void {
    const author = parseAuthor(authorBytes)
    if (author == null || author.id !== remote.toString()) return
    const held = this.ledger?.head(author.id)?.seq ?? 0
    if (seq <= held) return
    const key = remote.toString()
    if (this.pulls.has(key)) return
    const pull = (async () => {
      try {
        const signal = AbortSignal.any([this.aborter.signal, AbortSignal.timeout(SESSION_TIMEOUT_MS)])
        await this.pull(remote, author.peerId.toMultihash().bytes, held + 1, signal)
      } catch (err) {
        this.log('pulling the feed of %p failed: %e', remote, err)
      } finally {
        this.pulls.delete(key)
      }
    })()
    this.pulls.set(key, pull)
  }

  // -------------------------------------------------------------------------------------------
  // sync: client side

  private connectedPeers (): PeerId[] {
    const seen = new Map<string, PeerId>()
    for (const conn of this.components.connectionManager.getConnections()) {
      if (conn.status === 'open') seen.set(conn.remotePeer.toString(), conn.remotePeer)
    }
    return [...seen.values()]
  }

  private periodicSync (): void {
    const peers = this.connectedPeers().sort(() => Math.random() - 0.5).slice(0, PEERS_PER_ROUND)
    for (const peer of peers) this.syncInBackground(peer)
  }

  /** A session in the background; a failed one is retried a few times, sooner than the periodic round. */
  private syncInBackground (peer: PeerId, attempt = 0): void {
    this.syncWith(peer).catch((err: unknown) => {
      this.log('sync with %p failed (attempt %d): %e', peer, attempt + 1, err)
      if (attempt >= SESSION_RETRIES || this.aborter.signal.aborted) return
      const timer = setTimeout(() => {
        if (this.connectedPeers().some(p => p.equals(peer))) this.syncInBackground(peer, attempt + 1)
      }, 1_000 * 2 ** attempt)
      timer.unref()
    })
  }

  /** Heads exchange with `peer`, then pulls of every feed it holds more of. One session per peer at a time. */
  async syncWith (peer: PeerId, timeoutMs = SESSION_TIMEOUT_MS): Promise<number> {
    const key = peer.toString()
    const running = this.sessions.get(key)
    if (running != null) return await running
    if (this.aborter.signal.aborted || this.ledger == null) return 0
    const session = this.session(peer, AbortSignal.any([this.aborter.signal, AbortSignal.timeout(timeoutMs)]))
      .finally(() => { this.sessions.delete(key) })
    this.sessions.set(key, session)
    return await session
  }

  private async session (peer: PeerId, signal: AbortSignal): Promise<number> {
    const store = this.store
    const response = await this.request(peer, { heads: this.ownHint() }, signal)
    if (response.heads == null) throw new SyncProtocolError(`${peer.toString()} answered a heads request with something else`)
    let pulled = 0
    let forkChecks = 0
    for (const remote of response.heads.heads) {
      if (signal.aborted || pulled >= MAX_PULL_PER_SESSION) break
      const author = parseAuthor(remote.author)
      if (author == null || remote.seq < 1n || remote.seq > BigInt(Number.MAX_SAFE_INTEGER)) throw new SyncProtocolError(`${peer.toString()} sent a malformed head`)
      const seq = Number(remote.seq)
      const local = store.head(author.id)
      if (local == null || seq > local.seq) {
        pulled += await this.pull(peer, remote.author, (local?.seq ?? 0) + 1, signal)
      } else if (forkChecks < MAX_FORK_CHECKS) {
        // the same seq with another hash: fetch theirs, and the store proves the equivocation
        const heldHash = seq === local.seq ? local.hash : (forkChecks++, (await store.get(remote.author, seq))?.hash)
        if (heldHash != null && !equals(heldHash, remote.hash)) await this.fetchAndIngest(peer, remote.author, seq, 1, signal)
      }
    }
    return pulled
  }

  private ownHint (): SyncRequest.Heads {
    const own: Head | undefined = this.ledger?.head(this.components.peerId.toString())
    return own == null
      ? { ownAuthor: new Uint8Array(0), ownSeq: 0n, ownHash: new Uint8Array(0) }
      : { ownAuthor: own.author, ownSeq: BigInt(own.seq), ownHash: own.hash }
  }

  private async request (peer: PeerId, request: SyncRequest, signal: AbortSignal): Promise<SyncResponse> {
    return await syncRequest(this.components.connectionManager, PROTOCOL.ledgerSync, peer, request, AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]))
  }

  private async rangeRequest (peer: PeerId, author: Uint8Array, fromSeq: number, limit: number, signal: AbortSignal): Promise<SyncResponse.Entries> {
    const response = await this.request(peer, { range: { author, fromSeq: BigInt(fromSeq), limit } }, signal)
    if (response.entries == null) throw new SyncProtocolError(`${peer.toString()} answered a range request with something else`)
    return response.entries
  }

  private async fetchAndIngest (peer: PeerId, author: Uint8Array, fromSeq: number, limit: number, signal: AbortSignal): Promise<void> {
    const entries = await this.rangeRequest(peer, author, fromSeq, limit, signal)
    await this.store.ingest(entries.entries)
  }

  /**
   * Pulls `author`'s feed from `fromSeq` on, in batches of at most 256, the next request in
   * flight while the last batch is verified. Returns the entries added.
   */
  private async pull (peer: PeerId, author: Uint8Array, fromSeq: number, signal: AbortSignal): Promise<number> {
    let next = fromSeq
    let added = 0
    let inflight: Promise<SyncResponse.Entries> | undefined = this.rangeRequest(peer, author, next, MAX_RANGE_ENTRIES, signal)
    // the previous batch's ingest, still writing while this one verifies
    let writing: { from: number, outcomes: Promise<IngestOutcome[]> } | undefined
    const settle = async (batch: { from: number, outcomes: Promise<IngestOutcome[]> }): Promise<void> => {
      for (const [i, outcome] of (await batch.outcomes).entries()) {
        if (outcome.status === 'rejected') {
          // a chain break right after our head: the peer holds another history; compare our head's seq
          if (outcome.error instanceof BrokenChainError && i === 0 && batch.from > 1) await this.fetchAndIngest(peer, author, batch.from - 1, 1, signal)
          throw new SyncProtocolError(`${peer.toString()} sent an entry we refuse: ${outcome.error.message}`)
        }
        if (outcome.record.seq !== batch.from + i) throw new SyncProtocolError(`${peer.toString()} sent a range that is not contiguous`)
        if (outcome.status === 'added') added++
      }
    }
    try {
      // eslint-disable-next-line no-unmodified-loop-condition -- `added` grows inside settle()
      while (inflight != null && !signal.aborted && added < MAX_PULL_PER_SESSION) {
        const batch: SyncResponse.Entries = await inflight
        inflight = undefined
        if (batch.entries.length === 0) break
        const after = next + batch.entries.length
        if (batch.more) inflight = this.rangeRequest(peer, author, after, MAX_RANGE_ENTRIES, signal)
        const current = { from: next, outcomes: this.store.ingest(batch.entries) }
        current.outcomes.catch(() => {})
        if (writing != null) await settle(writing)
        writing = current
        next = after
      }
      if (writing != null) await settle(writing)
    } finally {
      inflight?.catch(() => {})
    }
    return added
  }

  async syncNow (opts: { timeoutMs?: number } = {}): Promise<SyncReport> {
    const peers = this.connectedPeers()
    const errors: string[] = []
    let pulled = 0
    await Promise.all(peers.map(async (peer) => {
      try {
        pulled += await this.syncWith(peer, opts.timeoutMs ?? SESSION_TIMEOUT_MS)
      } catch (err: any) {
        errors.push(`${peer.toString()}: ${String(err?.message ?? err)}`)
      }
    }))
    return { peers: peers.length, pulled, errors }
  }

  async flush (opts: { timeoutMs?: number } = {}): Promise<FlushResult> {
    const own = this.ledger?.head(this.components.peerId.toString())
    if (own == null) return { acknowledged: true, seq: 0, by: [] }
    if (own.seq <= this.acknowledgedSeq) return { acknowledged: true, seq: own.seq, by: [] }
    const deadline = Date.now() + (opts.timeoutMs ?? 10_000)
    while (Date.now() < deadline && !this.aborter.signal.aborted) {
      const peers = this.connectedPeers().slice(0, 8)
      const holders = await Promise.all(peers.map(async (peer) => {
        try {
          const signal = AbortSignal.timeout(Math.max(100, Math.min(3_000, deadline - Date.now())))
          const response = await this.request(peer, { heads: this.ownHint() }, signal)
          const theirs = response.heads?.heads.find(h => equals(h.author, own.author))
          const holds = theirs != null && (Number(theirs.seq) > own.seq || (Number(theirs.seq) === own.seq && equals(theirs.hash, own.hash)))
          return holds ? peer.toString() : undefined
        } catch {
          return undefined
        }
      }))
      const by = holders.filter((p): p is string => p != null)
      if (by.length > 0) {
        this.acknowledgedSeq = Math.max(this.acknowledgedSeq, own.seq)
        return { acknowledged: true, seq: own.seq, by }
      }
      await new Promise(resolve => setTimeout(resolve, 250))
    }
    return {
      acknowledged: false,
      seq: own.seq,
      by: [],
      note: `no peer confirmed holding this node's ledger entries up to ${own.seq}; they are kept locally and will be published on its next run`
    }
  }

  // -------------------------------------------------------------------------------------------
  // views

  async status (): Promise<LedgerStatus> {
    const store = this.store
    const stats = await store.stats()
    const own = store.head(this.components.peerId.toString())?.seq ?? 0
    return {
      peerId: this.components.peerId.toString(),
      path: store.path,
      authors: stats.authors,
      entries: stats.entries,
      slashed: store.slashedAuthors().map(s => s.accused).sort(),
      pending: stats.pending,
      diskBytes: stats.diskBytes,
      heads: store.allHeads().map(headView).sort((a, b) => a.author < b.author ? -1 : 1),
      own: { seq: own, unacknowledged: Math.max(0, own - Math.max(this.acknowledgedSeq, this.ownAtStart)) },
      earnings: this.earnings()
    }
  }

  async show (peerId: string, limit = 20): Promise<{ head?: HeadView, slashed: boolean, entries: EntryView[] }> {
    const store = this.store
    const head = store.head(peerId)
    if (head == null) return { slashed: this.isExcluded(peerId), entries: [] }
    const from = Math.max(1, head.seq - Math.max(1, Math.min(limit, MAX_RANGE_ENTRIES)) + 1)
    const { entries } = await store.range(head.author, from, MAX_RANGE_ENTRIES)
    const views = entries.map(envelope => entryView(envelope))
    return { head: headView(head), slashed: this.isExcluded(peerId), entries: views }
  }

  controlHandlers (): Record<string, ControlHandler> {
    const handlers: Record<string, ControlHandler> = {
      'ledger.status': async (params) => {
        // a short-lived peer may first catch up with its peers
        if (params.sync === true) await this.syncNow({ timeoutMs: numberParam(params.timeoutMs, 'timeoutMs', 10_000, 100, 120_000) })
        return await this.status()
      },
      'ledger.show': async (params) => await this.show(peerParam(params.peer), numberParam(params.limit, 'limit', 20, 1, MAX_RANGE_ENTRIES)),
      'ledger.earnings': async (params) => this.earnings(params.peer == null ? undefined : peerParam(params.peer)),
      'ledger.flush': async (params) => await this.flush({ timeoutMs: numberParam(params.timeoutMs, 'timeoutMs', 10_000, 0, 120_000) }),
      'ledger.sync': async (params) => await this.syncNow({ timeoutMs: numberParam(params.timeoutMs, 'timeoutMs', 30_000, 100, 120_000) }),
      reputation: async (params) => {
        if (params.sync === true) await this.syncNow({ timeoutMs: numberParam(params.timeoutMs, 'timeoutMs', 10_000, 100, 120_000) })
        const now = numberParam(params.now, 'now', Date.now(), 0, Number.MAX_SAFE_INTEGER)
        if (params.peer != null) return [this.reputation(peerParam(params.peer), now)]
        return this.reputations(now).map(({ counterparties, ...rest }) => ({ ...rest, counterparties: counterparties.length }))
      }
    }
    if (this.init.devMethods === true) {
      handlers['ledger.appendTestJob'] = async (params) => await this.appendTestJobs(params)
      handlers['ledger.appendSummary'] = async () => {
        const record = await this.appendSummary()
        return { seq: record?.seq ?? null }
      }
    }
    return handlers
  }

  /**
   * Development only (--dev-ledger-methods): this provider signs an attestation into its feed
   * and a dev renter (a real key held in memory, one per index) signs the receipt into its own
   * feed, which this node ingests and publishes. Stands in for real jobs until exec runs them.
   */
  private async appendTestJobs (params: Record<string, unknown>): Promise<unknown> {
    const count = numberParam(params.count, 'count', 1, 1, 500)
    const renterIndex = numberParam(params.renter, 'renter', 0, 0, 99)
    const outcome = (params.outcome ?? 'ok') as TestOutcome
    if (!['ok', 'failed', 'bad-output', 'timeout', 'preempted'].includes(outcome)) throw new ControlError('ERR_BAD_PARAMS', 'outcome must be ok, failed, bad-output, timeout or preempted')
    const run = this.devQueue.then(async () => {
      this.devRenters ??= []
      while (this.devRenters.length <= renterIndex) {
        const key = await generateKeyPair('Ed25519')
        this.devRenters.push({ key, peerId: peerIdFromPrivateKey(key) })
      }
      const renter = this.devRenters[renterIndex]
      const attestations: string[] = []
      for (let i = 0; i < count; i++) {
        const job = signTestJob({ provider: this.self, renter, outcome, preemptible: params.preemptible === true })
        const attestation = await this.store.append(LedgerEntry.BodyKind.ATTESTATION, job.attestation)
        const head = this.store.head(renter.peerId.toString())
        const receipt = sealEntry(renter.key, renter.peerId, { seq: (head?.seq ?? 0) + 1, prevHash: head?.hash ?? new Uint8Array(0), time: Date.now(), kind: LedgerEntry.BodyKind.RECEIPT, body: job.receipt })
        await this.store.ingestOne(receipt.envelope)
        this.publish(receipt.envelope)
        attestations.push(Buffer.from(attestation.hash).toString('hex'))
      }
      return { provider: this.components.peerId.toString(), renter: renter.peerId.toString(), jobs: count, attestations, seq: this.store.head(this.components.peerId.toString())?.seq }
    })
    this.devQueue = run.catch(() => {})
    return await run
  }
}

function headView (head: Head): HeadView {
  return { author: head.authorId, seq: head.seq, hash: Buffer.from(head.hash).toString('hex') }
}

function entryView (envelope: Uint8Array): EntryView {
  const record = decodeStoredEntry(envelope)
  const body = decodeStoredBody(record)
  const summary: Record<string, unknown> = {}
  switch (body.kind) {
    case 'attestation':
      Object.assign(summary, { job: hex(body.attestation.jobId), renter: parseAuthor(body.attestation.renter)?.id, status: body.attestation.status, preemptible: body.attestation.preemptible, outputDigest: hex(body.attestation.outputDigest) })
      break
    case 'receipt':
      Object.assign(summary, { job: hex(body.receipt.jobId), provider: parseAuthor(body.receipt.provider)?.id, outcome: body.receipt.outcome, pricePaidMicroUsd: Number(body.receipt.pricePaidMicroUsd) })
      break
    case 'heartbeat-summary':
      Object.assign(summary, { periodStart: Number(body.summary.periodStart), periodEnd: Number(body.summary.periodEnd), availableMs: Number(body.summary.availableMs), upMs: Number(body.summary.upMs), busyPpm: body.summary.busyPpm })
      break
    case 'fraud-proof':
      Object.assign(summary, { proof: body.proof.kind, accused: parseAuthor(body.proof.accused)?.id })
      break
  }
  return { seq: record.seq, time: record.time, hash: hex(record.hash), kind: kindName(record.kind), summary }
}

function hex (bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex')
}

function peerParam (value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new ControlError('ERR_BAD_PARAMS', 'a peer id is required')
  try {
    return peerIdFromString(value).toString()
  } catch {
    throw new ControlError('ERR_BAD_PARAMS', `"${value.slice(0, 80)}" is not a peer id`)
  }
}

function numberParam (value: unknown, name: string, fallback: number, min: number, max: number): number {
  if (value == null) return fallback
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) throw new ControlError('ERR_BAD_PARAMS', `${name} must be a number from ${min} to ${max}`)
  return Math.floor(value)
}

/** ms of [from, to) inside the windows (minute resolution, bounded). */
function availableMs (isAvailable: ((at: number) => boolean) | undefined, from: number, to: number): number {
  if (to <= from) return 0
  if (isAvailable == null) return to - from
  const step = Math.max(60_000, Math.ceil((to - from) / 20_000))
  let total = 0
  for (let t = from; t < to; t += step) {
    if (isAvailable(t)) total += Math.min(step, to - t)
  }
  return total
}

/** The ledger service: give it to createNode's services as `ledger`. */
export function ledgerService (init: LedgerServiceInit): (components: LedgerComponents) => LedgerService {
  return (components) => new LedgerNode(components, init)
}
