/**
 * The node's view of reputation: the evidence gathered from every stored entry, and the
 * scores computed from it (reputation.ts) for the auction, the CLI and the control socket.
 */

import { computeEarnings, computeReputation, DEFAULT_REPUTATION, ReputationEvidence, type Earnings, type Reputation, type ReputationParams } from './reputation.js'
import type { LedgerRecord } from './entry.js'

/** Cached scores: reliability is read for every bid of every auction. */
const SCORE_CACHE_LIMIT = 10_000
/** Scores decay slowly (half-life of days): a second-old score is as good as a new one. */
const SCORE_TTL_MS = 1_000

export class ReputationView {
  private readonly params: ReputationParams
  private readonly evidence = new ReputationEvidence()
  private readonly scoreCache = new Map<string, { version: number, at: number, score: number }>()

  constructor (params: Partial<ReputationParams> = {}) {
    this.params = { ...DEFAULT_REPUTATION, ...params }
  }

  /** Takes in one stored entry (each is counted once, whatever calls it). */
  add (record: LedgerRecord): void {
    this.evidence.add(record)
  }

  /** reliability in [0, 1], as the auction uses it */
  reliability (peerId: string): number {
    const now = Date.now()
    const cached = this.scoreCache.get(peerId)
    const version = this.evidence.version(peerId)
    if (cached != null && cached.version === version && now - cached.at < SCORE_TTL_MS) return cached.score
    const score = computeReputation(this.evidence, peerId, now, this.params).score
    this.scoreCache.set(peerId, { version, at: now, score })
    if (this.scoreCache.size > SCORE_CACHE_LIMIT) this.scoreCache.delete(this.scoreCache.keys().next().value as string)
    return score
  }

  /** slashed by a fraud proof this view has seen */
  isSlashed (peerId: string): boolean {
    return this.evidence.isSlashed(peerId)
  }

  reputation (peerId: string, now = Date.now()): Reputation {
    return computeReputation(this.evidence, peerId, now, this.params)
  }

  reputations (now = Date.now()): Reputation[] {
    return this.evidence.providers().map(id => this.reputation(id, now))
  }

  earnings (peerId: string): Earnings {
    return computeEarnings(this.evidence, peerId)
  }
}
