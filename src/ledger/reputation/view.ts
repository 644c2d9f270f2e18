/**
 * The node's view of reputation: the evidence gathered from every stored entry, the node's
 * trust in each key (trust.ts, seeded from itself and the peers its operator trusts), and
 * the scores computed from both (reputation.ts) for the auction, the CLI and the control socket.
 *
 * Trust is a full computation over the job graph (~0.9 s at 10,000 providers), so the
 * auction never waits for one: reliability() serves the last trust vector, and when it is
 * older than TRUST_REFRESH_MS one recomputation is scheduled in the background (one at a
 * time; the ledger service's timer also refreshes it while auctions read it). Between two
 * computations a new entry changes its provider's score at once (its evidence is re-read) but
 * renters' trust stays as last computed (a new renter counts 0 until the next one). Only the
 * very first use computes in place. An explicit `now` (the CLI, tests) always gets the exact
 * figures.
 */

import { JobStatus, Receipt } from '../../../protocols/job.js'
import { ReputationEvidence } from './evidence.js'
import { computeEarnings, computeReputation, DEFAULT_REPUTATION, type Earnings, type Reputation, type ReputationParams } from './reputation.js'
import { explainReputation, type ReputationExplain } from './trust-explain.js'
import { DEFAULT_TRUST, TrustGraph, type JobFact, type TrustParams, type TrustScores } from './trust.js'
import type { LedgerRecord } from '../entries/entry.js'
import type { TrustAnchors } from './anchors/adopt.js'

/** Cached scores: reliability is read for every bid of every auction. */
const SCORE_CACHE_LIMIT = 10_000
/**
 * Entries waiting to be read into the evidence at most: past it they are read at once. Small: a
 * waiting entry keeps its record and decoded body (some thirty objects) alive, and at 50,000 a
 * sync's records all outlived the young generation, a third of its collector's work; read in
 * batches they die young and only their compact facts stay (docs/scale.md).
 */
const PENDING_LIMIT = 1_024
/** Scores decay slowly (half-life of days): a second-old score is as good as a new one. */
const SCORE_TTL_MS = 1_000
/** The longest the auction uses a trust vector before a full recomputation. */
const TRUST_REFRESH_MS = 30_000

export interface ReputationViewOptions {
  /** this node: always a seed of its own trust (none: every renter counts fully, as in `evidenceScore`) */
  selfId?: string
  /** peers the operator trusts (bootstrap peers, --trust) */
  trustedPeers?: string[]
  /** the trust lists the node adopted: their peers are seeds too while their list is valid */
  anchors?: TrustAnchors
  trust?: Partial<TrustParams>
  /** how old a trust vector the auction may use before a background refresh (default 30 s) */
  trustRefreshMs?: number
}

/** The jobs that went well, as trust's graph takes them, decayed at `now`. */
export function * jobFacts (evidence: Pick<ReputationEvidence, 'providers' | 'jobsOf'>, now: number, params: ReputationParams = DEFAULT_REPUTATION): Generator<JobFact> {
  for (const provider of evidence.providers()) {
    for (const { attestation, receipt } of evidence.jobsOf(provider)) {
      if (receipt.outcome !== Receipt.Outcome.OK || attestation.status !== JobStatus.COMPLETED) continue
      yield {
        renter: receipt.renter,
        provider,
        okWeight: Math.pow(0.5, Math.max(0, now - receipt.time) / params.halfLifeMs)
      }
    }
  }
}

export class ReputationView {
  private readonly params: ReputationParams
  private readonly trustParams: TrustParams
  private readonly selfId?: string
  /** the node itself and its operator's trusted peers (bootstrap, --trust) */
  private readonly operatorSeeds: readonly string[]
  private readonly anchors?: TrustAnchors
  private readonly evidence = new ReputationEvidence()
  /**
   * entries taken in (true) or out (false) and not read into the evidence yet: a sync stores
   * thousands a second, so they are read a batch at a time, by the next reader or once
   * PENDING_LIMIT wait
   */
  private pending: Array<{ record: LedgerRecord, add: boolean }> = []
  private readonly scoreCache = new Map<string, { version: number, trust: number, at: number, score: number }>()
  /** bumped on every entry taken in, so trust knows when the graph may have changed */
  private entries = 0
  private trustCache?: { entries: number, now: number, at: number, stamp: number, scores: TrustScores }
  private trustStamp = 0
  private readonly trustRefreshMs: number
  private refreshing?: NodeJS.Timeout
  /** reliability() served the held vector since it was computed */
  private readSinceCompute = false
  /** full trust computations so far (tests: the auction path never runs one once primed) */
  trustComputations = 0

  constructor (params: Partial<ReputationParams> = {}, opts: ReputationViewOptions = {}) {
    this.params = { ...DEFAULT_REPUTATION, ...params }
    this.trustParams = { ...DEFAULT_TRUST, ...opts.trust }
    this.selfId = opts.selfId
    this.operatorSeeds = opts.selfId == null ? [] : [...new Set([opts.selfId, ...(opts.trustedPeers ?? [])])]
    this.anchors = opts.anchors
    this.trustRefreshMs = opts.trustRefreshMs ?? TRUST_REFRESH_MS
  }

  /** Computes the trust vector now unless the held one is current (at start, and on the service's timer). */
  refreshTrust (now = Date.now()): void {
    const held = this.trustCache
    if (held != null && held.entries === this.entries && now - held.at < this.trustRefreshMs) return
    this.computeTrust(now)
  }

  /**
   * The service's timer: refreshTrust() when the auction read the vector since it was last
   * computed (a node that runs no auctions, a bootstrap or a provider, computes none).
   */
  refreshIfUsed (now = Date.now()): void {
    if (!this.readSinceCompute) return
    this.refreshTrust(now)
  }

  /** Cancels a scheduled background refresh (the service stops). */
  stop (): void {
    clearTimeout(this.refreshing)
    this.refreshing = undefined
  }

  /** Takes in one stored entry (each is counted once, whatever calls it). */
  add (record: LedgerRecord): void {
    this.queue(record, true)
  }

  /** Takes out a stored entry that retention dropped. */
  forget (record: LedgerRecord): void {
    this.queue(record, false)
  }

  private queue (record: LedgerRecord, add: boolean): void {
    this.pending.push({ record, add })
    // the trust cache is keyed by the count of entries taken in or out: any change recomputes it
    this.entries++
    if (this.pending.length >= PENDING_LIMIT) this.drain()
  }

  /** The evidence, with every entry taken in or out so far. */
  private get facts (): ReputationEvidence {
    if (this.pending.length > 0) this.drain()
    return this.evidence
  }

  private drain (): void {
    const pending = this.pending
    this.pending = []
    for (const { record, add } of pending) {
      if (add) this.evidence.add(record)
      else this.evidence.forget(record)
    }
  }

  /** reliability in [0, 1], as the auction uses it */
  reliability (peerId: string): number {
    const now = Date.now()
    const trust = this.trustFor(now, false)
    const cached = this.scoreCache.get(peerId)
    const version = this.facts.version(peerId)
    if (
      cached != null &&
      cached.version === version &&
      cached.trust === (trust?.stamp ?? 0) &&
      now - cached.at < SCORE_TTL_MS
    ) {
      return cached.score
    }
    const score = computeReputation(this.facts, peerId, now, { params: this.params, weights: trust?.scores }).score
    this.scoreCache.set(peerId, { version, trust: trust?.stamp ?? 0, at: now, score })
    if (this.scoreCache.size > SCORE_CACHE_LIMIT) this.scoreCache.delete(this.scoreCache.keys().next().value as string)
    return score
  }

  /** slashed by a fraud proof this view has seen */
  isSlashed (peerId: string): boolean {
    return this.facts.isSlashed(peerId)
  }

  reputation (peerId: string, now = Date.now()): Reputation {
    return computeReputation(this.facts, peerId, now, {
      params: this.params,
      weights: this.trustFor(now, true)?.scores
    })
  }

  reputations (now = Date.now()): Reputation[] {
    const trust = this.trustFor(now, true)?.scores
    return this.facts
      .providers()
      .map(id => computeReputation(this.facts, id, now, { params: this.params, weights: trust }))
  }

  /** The score of `peerId` with its evidence split into direct, transitive and discounted parts. */
  explain (peerId: string, now = Date.now()): ReputationExplain & { reputation: Reputation } {
    const reputation = this.reputation(peerId, now)
    const selfId = this.selfId ?? ''
    const anchorsOf = (peer: string): string[] => [
      ...(peer === selfId ? ['self'] : this.operatorSeeds.includes(peer) ? ['operator'] : []),
      ...(this.anchors?.listsNaming(peer, now) ?? []).map(l => `list ${l.operator}#${l.sequence}`)
    ]
    const viewer = {
      id: selfId,
      seeds: this.seedsAt(now),
      params: this.trustParams,
      anchorsOf,
      operatorPeers: this.operatorSeeds.length - (this.selfId == null ? 0 : 1),
      lists: this.anchors?.describe(now) ?? [],
      refused: this.anchors?.refused ?? []
    }
    return { ...explainReputation(reputation, viewer), reputation }
  }

  /**
   * The seeds of this node's trust at `now`: itself, its operator's trusted peers and the peers
   * of every adopted trust list not expired (none without a selfId: no trust view).
   */
  seedsAt (now: number): ReadonlySet<string> {
    if (this.selfId == null) return new Set()
    return new Set([...this.operatorSeeds, ...(this.anchors?.peersAt(now) ?? [])])
  }

  earnings (peerId: string): Earnings {
    return computeEarnings(this.facts, peerId)
  }

  /**
   * This node's trust at `now`: exact when asked for (`exact`); else the last vector, with a
   * background refresh scheduled once it is older than trustRefreshMs.
   */
  private trustFor (now: number, exact: boolean): { stamp: number, scores: TrustScores } | undefined {
    if (this.selfId == null) return undefined
    const held = this.trustCache
    if (held == null) return this.computeTrust(now)
    if (held.entries === this.entries && held.now === now) return held
    if (exact) return this.computeTrust(now)
    this.readSinceCompute = true
    if (Math.abs(now - held.at) >= this.trustRefreshMs) this.refreshInBackground()
    return held
  }

  /** One recomputation soon, off the caller's path; none while one is scheduled. */
  private refreshInBackground (): void {
    if (this.refreshing != null) return
    this.refreshing = setTimeout(() => {
      this.refreshing = undefined
      this.refreshTrust()
    }, 0)
    this.refreshing.unref()
  }

  private computeTrust (now: number): { stamp: number, scores: TrustScores } {
    const graph = new TrustGraph()
    for (const fact of jobFacts(this.facts, now, this.params)) graph.add(fact)
    const scores = graph.compute(this.seedsAt(now), this.trustParams)
    this.trustComputations++
    this.readSinceCompute = false
    this.trustCache = { entries: this.entries, now, at: now, stamp: ++this.trustStamp, scores }
    return this.trustCache
  }
}
