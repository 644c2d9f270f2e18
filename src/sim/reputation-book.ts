/**
 * Reputation in the simulation: the ledger's facts kept in memory (one attestation and one
 * receipt per finished run) and scored by the node's own computeReputation (ledger/reputation.ts:
 * decay, per-renter cap, break penalty). Every renter counts fully (no trust graph here), the
 * worst case for Sybil renters. Scores are recomputed at most once per refresh interval per
 * provider (the delay of ledger sync), and only the latest MAX_FACTS runs are kept (an honest
 * provider's score then plateaus near (5 + 64) / (10 + 64) = 0.93 instead of rising further).
 */

import { JobStatus, Receipt } from '../../protocols/job.js'
import { computeReputation, DEFAULT_REPUTATION } from '../ledger/reputation.js'
import type { AttestationFact, ReceiptFact, SummaryFact } from '../ledger/evidence.js'
import type { ReputationSource } from '../market/reputation.js'

const MAX_FACTS = 64
const NONE = new Uint8Array(0)

export type RunOutcome = 'ok' | 'failed' | 'bad-output' | 'preempted'

interface Cached { score: number, at: number, dirty: boolean }

export class ReputationBook implements ReputationSource {
  private readonly facts = new Map<string, Array<{ attestation: AttestationFact, receipt: ReceiptFact }>>()
  private readonly cache = new Map<string, Cached>()
  private now = 0
  private seq = 0
  recomputes = 0

  constructor (private readonly refreshMs: number) {}

  /** the virtual time scores are computed at */
  setNow (now: number): void { this.now = now }

  /** Records a finished run: the provider's attestation and the renter's receipt. */
  record (provider: string, renter: string, outcome: RunOutcome, preemptible: boolean, time: number): void {
    const status = outcome === 'preempted' ? JobStatus.PREEMPTED : outcome === 'failed' ? JobStatus.FAILED : JobStatus.COMPLETED
    const receiptOutcome = outcome === 'ok' ? Receipt.Outcome.OK : outcome === 'bad-output' ? Receipt.Outcome.BAD_OUTPUT : outcome === 'failed' ? Receipt.Outcome.FAILED : Receipt.Outcome.PREEMPTED
    this.seq++
    let list = this.facts.get(provider)
    if (list == null) this.facts.set(provider, list = [])
    // past MAX_FACTS the oldest pair is forgotten and its objects written over (a million runs, no garbage)
    const reused = list.length >= MAX_FACTS ? list.shift() : undefined
    if (reused == null) {
      const hash = String(this.seq)
      const attestation: AttestationFact = { hash, provider, renter: NONE, jobId: NONE, preemptible, status, exitCode: 0, outputDigest: NONE, startedAt: time, endedAt: time, entryTime: time }
      const receipt: ReceiptFact = { entryHash: hash, renter, renterBytes: NONE, provider, attestationHash: hash, jobId: NONE, outcome: receiptOutcome, receivedOutputDigest: NONE, pricePaidMicroUsd: 0n, seq: this.seq, time }
      list.push({ attestation, receipt })
    } else {
      const { attestation: a, receipt: r } = reused
      a.preemptible = preemptible; a.status = status; a.startedAt = a.endedAt = a.entryTime = time
      r.renter = renter; r.outcome = receiptOutcome; r.seq = this.seq; r.time = time
      list.push(reused)
    }
    const c = this.cache.get(provider)
    if (c != null) c.dirty = true
  }

  reliability (provider: string): number {
    let c = this.cache.get(provider)
    if (c != null && (!c.dirty || this.now - c.at < this.refreshMs)) return c.score
    const jobs = this.facts.get(provider) ?? []
    const evidence = { jobsOf: () => jobs, summariesOf: (): SummaryFact[] => [], isSlashed: () => false }
    const score = computeReputation(evidence, provider, this.now, DEFAULT_REPUTATION).score
    this.recomputes++
    c = { score, at: this.now, dirty: false }
    this.cache.set(provider, c)
    return score
  }
}
