/**
 * Reputation in the simulation: the ledger's facts kept in memory (one attestation and one
 * receipt per finished run) and scored by the node's own computeReputation (ledger/reputation.ts:
 * decay, per-renter cap, break penalty). Scores are recomputed at most once per refresh
 * interval per provider (the delay of ledger sync), and only the latest MAX_FACTS runs are kept
 * (an honest provider's score then plateaus near (5 + 64) / (10 + 64) = 0.93).
 *
 * With `trustSeeds`, renters' receipts are weighted by the node's own trust computation
 * (ledger/trust.ts TrustGraph over jobFacts, as ReputationView does), recomputed once per
 * refresh interval. The seeds are every real renter and owner: one shared view standing for
 * theirs (a renter's own view starts from itself; the keys it reaches differ, not which keys
 * get none). Seeds count fully, so trust only changes the weight of keys outside them (Sybils).
 */

import { JobStatus, Receipt } from '../../../protocols/job.js'
import { computeReputation, DEFAULT_REPUTATION, jobFacts, TrustGraph, type AttestationFact, type ReceiptFact, type SummaryFact, type TrustScores } from '../../ledger/index.js'
import type { ReputationSource } from '../../market/index.js'

const MAX_FACTS = 64
/** the fields the simulated pairing never compares (one attestation per receipt, by construction) */
const NONE = ''

export type RunOutcome = 'ok' | 'failed' | 'bad-output' | 'preempted'

interface Cached { score: number, at: number, dirty: boolean, trustStamp: number }

export class ReputationBook implements ReputationSource {
  private readonly facts = new Map<string, Array<{ attestation: AttestationFact, receipt: ReceiptFact }>>()
  private readonly cache = new Map<string, Cached>()
  private now = 0
  private seq = 0
  recomputes = 0
  trustComputations = 0
  private trust: { scores: TrustScores, at: number, stamp: number } | undefined
  /** facts came in since the trust vector was computed */
  private trustDirty = true

  constructor (private readonly refreshMs: number, private readonly trustSeeds?: readonly string[]) {}

  /** providers with facts (jobFacts reads them) */
  providers (): string[] {
    return [...this.facts.keys()]
  }

  jobsOf (provider: string): Array<{ attestation: AttestationFact, receipt: ReceiptFact }> {
    return this.facts.get(provider) ?? []
  }

  /** the trust vector, recomputed once it is a refresh interval old */
  private trustNow (): { scores: TrustScores, stamp: number } | undefined {
    if (this.trustSeeds == null) return undefined
    if (this.trust != null && (!this.trustDirty || this.now - this.trust.at < this.refreshMs)) return this.trust
    this.trustDirty = false
    const graph = new TrustGraph()
    for (const fact of jobFacts(this, this.now)) graph.add(fact)
    this.trustComputations++
    this.trust = { scores: graph.compute(this.trustSeeds), at: this.now, stamp: this.trustComputations }
    return this.trust
  }

  /** the virtual time scores are computed at */
  setNow (now: number): void { this.now = now }

  /** Records a finished run: the provider's attestation and the renter's receipt. */
  record ({
    provider,
    renter,
    outcome,
    preemptible,
    time
  }: {
    provider: string
    renter: string
    outcome: RunOutcome
    preemptible: boolean
    time: number
  }): void {
    const status = outcome === 'preempted' ? JobStatus.PREEMPTED : outcome === 'failed' ? JobStatus.FAILED : JobStatus.COMPLETED
    const receiptOutcome = outcome === 'ok' ? Receipt.Outcome.OK : outcome === 'bad-output' ? Receipt.Outcome.BAD_OUTPUT : outcome === 'failed' ? Receipt.Outcome.FAILED : Receipt.Outcome.PREEMPTED
    this.seq++
    let list = this.facts.get(provider)
    if (list == null) this.facts.set(provider, list = [])
    // past MAX_FACTS the oldest pair is forgotten and its objects written over (a million runs, no garbage)
    const reused = list.length >= MAX_FACTS ? list.shift() : undefined
    if (reused == null) {
      const hash = String(this.seq)
      const attestation: AttestationFact = {
        hash,
        provider,
        pair: NONE,
        preemptible,
        status,
        exitCode: 0,
        outputDigest: NONE,
        startedAt: time,
        endedAt: time,
        gpus: 1,
        entryTime: time
      }
      const receipt: ReceiptFact = {
        entryHash: hash,
        renter,
        provider,
        attestationHash: hash,
        pair: NONE,
        outcome: receiptOutcome,
        receivedOutputDigest: NONE,
        pricePaidMicroUsd: 0n,
        seq: this.seq,
        time
      }
      list.push({ attestation, receipt })
    } else {
      const { attestation: a, receipt: r } = reused
      a.preemptible = preemptible; a.status = status; a.startedAt = a.endedAt = a.entryTime = time
      r.renter = renter; r.outcome = receiptOutcome; r.seq = this.seq; r.time = time
      list.push(reused)
    }
    const c = this.cache.get(provider)
    if (c != null) c.dirty = true
    this.trustDirty = true
  }

  reliability (provider: string): number {
    let c = this.cache.get(provider)
    const trust = this.trustNow()
    const stamp = trust?.stamp ?? 0
    if (c != null && (!c.dirty || this.now - c.at < this.refreshMs) && c.trustStamp === stamp) return c.score
    const jobs = this.facts.get(provider) ?? []
    const evidence = { jobsOf: () => jobs, summariesOf: (): SummaryFact[] => [], isSlashed: () => false }
    const score = computeReputation(evidence, provider, this.now, {
      params: DEFAULT_REPUTATION,
      weights: trust?.scores
    }).score
    this.recomputes++
    c = { score, at: this.now, dirty: false, trustStamp: stamp }
    this.cache.set(provider, c)
    return score
  }
}
