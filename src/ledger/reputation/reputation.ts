/**
 * Reputation: a pure, deterministic function of the ledger's contents and a time `now`.
 * Every node that holds the same entries computes the same scores.
 *
 * For a provider P:
 *
 *   jobs        each receipt R (in its renter's feed) paired with the attestation A it names
 *               (in P's feed): A.provider = P, A.renter = R's author, same job id; R counts
 *               only when it agrees with A (entries/receipt-rules.ts): BAD_OUTPUT only with a received
 *               output digest other than A's, any other outcome only the one A itself implies
 *               (PREEMPTED only for an attested PREEMPTED, OK only for COMPLETED), and R's
 *               entry not dated before A's entry less the clock-skew bound. Of the receipts
 *               that count, one per attestation: the first in the renter's feed (lowest seq),
 *               never the one with the earliest claimed time.
 *   weight      w = 0.5 ^ ((now − receipt entry time) / halfLife)
 *   outcome     OK → success w; FAILED, TIMEOUT, BAD_OUTPUT → failure w; a non-preemptible
 *               job the attestation says was PREEMPTED → failure w × breakPenalty; PREEMPTED
 *               of a preemptible job → nothing. A BAD_OUTPUT receipt is one renter's word:
 *               it goes through that renter's cap like any failure, and is never a slash.
 *   cap         per renter r: s_r = min(Σ successes, C), f_r = min(Σ failures, C × breakPenalty)
 *   jobScore    (α + Σ s_r) / (α + β + Σ s_r + Σ f_r)          (no jobs: α / (α + β) = 0.5)
 *   uptime      over P's heartbeat summaries (non-overlapping periods, weighted by w at the
 *               period end): u = (Σ w·up + U0) / (Σ w·available + U0), where up is clamped to
 *               the available time and to heartbeats × interval; U0 = prior presumed-up ms
 *   reliability 0 when P is slashed by a verified equivocation proof, else
 *               jobScore × (1 − uptimeWeight × (1 − u))
 *
 * The cap bounds what one renter can do: adding a renter's receipts raises jobScore by at
 * most C / (α + β + C) (maxLiftPerCounterparty), whatever it claims, and the uptime factor
 * is at most 1, so the reliability rises by no more than that either. A ring of k fake
 * renters gains at most k times that, with diminishing returns. Likewise one renter's
 * receipts lower it by no more than maxDropPerCounterparty.
 *
 * Each node scores as it sees the network (trust.ts): renter r's capped counts enter the sums
 * multiplied by the viewer's weight for r, in [0, 1], so renters with no path of trust to
 * the viewer add nothing. `evidenceScore` is the same formula with every weight 1: what any
 * node holding the same entries computes, whoever it is.
 */

import { JobStatus, Receipt } from '../../../protocols/job.js'
import type { ReputationEvidence } from './evidence.js'
import { computeServiceEarnings, type ServiceEarnings } from '../usage/earnings.js'

export interface ReputationParams {
  /** the weight of a job halves every halfLifeMs */
  halfLifeMs: number
  /** α: prior successes */
  priorSuccesses: number
  /** β: prior failures */
  priorFailures: number
  /** C: most (decayed) successes one renter can count for a provider */
  counterpartyCap: number
  /** failures a broken non-preemptible job counts for */
  breakPenalty: number
  /** how much uptime can take off: reliability × (1 − uptimeWeight × (1 − uptime)) */
  uptimeWeight: number
  /** U0: ms of presumed uptime before any heartbeat summary */
  uptimePriorMs: number
}

export const DEFAULT_REPUTATION: ReputationParams = {
  halfLifeMs: 14 * 24 * 3600_000,
  priorSuccesses: 5,
  priorFailures: 5,
  counterpartyCap: 2,
  breakPenalty: 3,
  uptimeWeight: 0.3,
  uptimePriorMs: 3600_000
}

/** The most one counterparty's receipts can raise a provider's reliability. */
export function maxLiftPerCounterparty (params: ReputationParams = DEFAULT_REPUTATION): number {
  return params.counterpartyCap / (params.priorSuccesses + params.priorFailures + params.counterpartyCap)
}

/**
 * The most one counterparty's receipts can lower a provider's reliability: its capped
 * failures F = C × breakPenalty take (α + S) / D − (α + S) / (D + F) ≤ F / (α + β + F) off the
 * job score (D = α + β + S + the other failures ≥ α + S), and the uptime factor is at most 1.
 */
export function maxDropPerCounterparty (params: ReputationParams = DEFAULT_REPUTATION): number {
  const failures = params.counterpartyCap * params.breakPenalty
  return failures / (params.priorSuccesses + params.priorFailures + failures)
}

export interface CounterpartyEvidence {
  renter: string
  jobs: number
  /** decayed successes before and after the cap */
  successes: number
  cappedSuccesses: number
  failures: number
  cappedFailures: number
  /**
   * the viewer's trust in this renter besides what this provider gave it (a share of the viewer's
   * trust; 1 without a trust view)
   */
  trust: number
  /** how much of its capped counts entered the score, in [0, 1] */
  weight: number
}

/** How much of each renter's receipts count for this viewer (a TrustScores; none: all count fully). */
export interface RenterWeights {
  /** how much `renter`'s receipts for `provider` count, in [0, 1] */
  weight(renter: string, provider: string): number
  /** the viewer's trust in `renter` besides what `provider` gave it */
  trustBesides(renter: string, provider: string): number
}

export interface Reputation {
  peerId: string
  /** reliability in [0, 1] as this node sees it (renters weighted by its trust in them) */
  score: number
  /** the same with every renter counted fully: identical on every node holding the same entries */
  evidenceScore: number
  slashed: boolean
  /** paired jobs (attestation + receipt) */
  jobs: number
  ok: number
  failed: number
  /** non-preemptible jobs broken (preempted) */
  broken: number
  /** decayed, capped totals that entered the score */
  successWeight: number
  failureWeight: number
  jobScore: number
  /** uptime in [0, 1] (1 with no summaries) */
  uptime: number
  summaries: number
  counterparties: CounterpartyEvidence[]
}

const BAD_OUTCOMES = new Set([Receipt.Outcome.FAILED, Receipt.Outcome.TIMEOUT, Receipt.Outcome.BAD_OUTPUT])

/** The Beta-prior job score from (weighted, capped) decayed successes and failures. */
export function jobScoreOf (
  successes: number,
  failures: number,
  params: ReputationParams = DEFAULT_REPUTATION
): number {
  return (params.priorSuccesses + successes) / (params.priorSuccesses + params.priorFailures + successes + failures)
}

/**
 * The reputation of `peerId` at `now`, from `evidence`, with each renter's receipts counted
 * as much as `opts.weights` says (default: fully, as every node would), with `opts.params`
 * (default DEFAULT_REPUTATION).
 */
export function computeReputation (evidence: Pick<ReputationEvidence, 'jobsOf' | 'summariesOf' | 'isSlashed'>, peerId: string, now: number, opts: { params?: ReputationParams, weights?: RenterWeights } = {}): Reputation {
  const { params = DEFAULT_REPUTATION, weights } = opts
  const decay = (time: number): number => Math.pow(0.5, Math.max(0, now - time) / params.halfLifeMs)
  const perRenter = new Map<string, CounterpartyEvidence>()
  let ok = 0
  let failed = 0
  let broken = 0
  const jobs = evidence.jobsOf(peerId)
  for (const { attestation, receipt } of jobs) {
    const w = decay(receipt.time)
    let c = perRenter.get(receipt.renter)
    if (c == null) {
      perRenter.set(
        receipt.renter,
        (c = {
          renter: receipt.renter,
          jobs: 0,
          successes: 0,
          cappedSuccesses: 0,
          failures: 0,
          cappedFailures: 0,
          trust: 1,
          weight: 1
        })
      )
    }
    c.jobs++
    // the attestation's word: a receipt says PREEMPTED only when the attestation does
    const preempted = attestation.status === JobStatus.PREEMPTED
    if (preempted && !attestation.preemptible) {
      broken++
      c.failures += w * params.breakPenalty
    } else if (receipt.outcome === Receipt.Outcome.OK) {
      ok++
      c.successes += w
    } else if (BAD_OUTCOMES.has(receipt.outcome)) {
      failed++
      c.failures += w
    }
  }
  let successWeight = 0
  let failureWeight = 0
  let allSuccesses = 0
  let allFailures = 0
  // sorted so that the floating-point sums are the same on every node
  const counterparties = [...perRenter.values()].sort((a, b) => a.renter < b.renter ? -1 : a.renter > b.renter ? 1 : 0)
  for (const c of counterparties) {
    c.cappedSuccesses = Math.min(c.successes, params.counterpartyCap)
    c.cappedFailures = Math.min(c.failures, params.counterpartyCap * params.breakPenalty)
    if (weights != null) {
      c.trust = weights.trustBesides(c.renter, peerId)
      c.weight = clamp01(weights.weight(c.renter, peerId))
    }
    successWeight += c.weight * c.cappedSuccesses
    failureWeight += c.weight * c.cappedFailures
    allSuccesses += c.cappedSuccesses
    allFailures += c.cappedFailures
  }
  const jobScore = jobScoreOf(successWeight, failureWeight, params)

  const summaries = evidence.summariesOf(peerId)
  let up = params.uptimePriorMs
  let available = params.uptimePriorMs
  for (const s of summaries) {
    const w = decay(s.periodEnd)
    up += w * s.upMs
    available += w * s.availableMs
  }
  const uptime = available > 0 ? Math.min(1, up / available) : 1
  const slashed = evidence.isSlashed(peerId)
  const uptimeFactor = 1 - params.uptimeWeight * (1 - uptime)
  const score = slashed ? 0 : clamp01(jobScore * uptimeFactor)
  const evidenceScore = slashed ? 0 : clamp01(jobScoreOf(allSuccesses, allFailures, params) * uptimeFactor)
  return {
    peerId,
    score,
    evidenceScore,
    slashed,
    jobs: jobs.length,
    ok,
    failed,
    broken,
    successWeight,
    failureWeight,
    jobScore,
    uptime,
    summaries: summaries.length,
    counterparties
  }
}

export interface Earnings {
  peerId: string
  /** paired jobs receipted OK */
  paidJobs: number
  /** Σ price paid (per GPU-hour) × GPUs × run time of receipted jobs, plus `service.earnedMicroUsd`, micro-USD */
  earnedMicroUsd: number
  /** GPU-hours of receipted OK jobs */
  jobHours: number
  /** hours inside the provider's advertised windows, from its heartbeat summaries */
  availableHours: number
  /** jobHours / availableHours (0 when no summaries) */
  fillRate: number
  /** time-weighted busy share of slots, from the summaries */
  busyShare: number
  /** service leases: from co-signed usage statements only (usage/earnings.ts) */
  service: ServiceEarnings
}

/** A provider's earnings and fill rate from the jobs and summaries in the ledger. */
export function computeEarnings (evidence: ReputationEvidence, peerId: string): Earnings {
  let earned = 0
  let jobMs = 0
  let paidJobs = 0
  for (const { attestation, receipt } of evidence.jobsOf(peerId)) {
    if (receipt.outcome !== Receipt.Outcome.OK) continue
    // GPU-time: a multi-GPU job ran on all of its GPUs for its whole run
    const ms = Math.max(0, attestation.endedAt - attestation.startedAt) * attestation.gpus
    paidJobs++
    jobMs += ms
    earned += Number(receipt.pricePaidMicroUsd) * ms / 3600_000
  }
  let availableMs = 0
  let busy = 0
  let period = 0
  for (const s of evidence.summariesOf(peerId)) {
    availableMs += s.availableMs
    const length = s.periodEnd - s.periodStart
    busy += s.busyPpm / 1_000_000 * length
    period += length
  }
  const service = computeServiceEarnings(evidence.usageOf(peerId), peerId)
  return {
    peerId,
    paidJobs,
    earnedMicroUsd: Math.round(earned) + service.earnedMicroUsd,
    jobHours: jobMs / 3600_000,
    availableHours: availableMs / 3600_000,
    fillRate: availableMs > 0 ? Math.min(1, jobMs / availableMs) : 0,
    busyShare: period > 0 ? busy / period : 0,
    service
  }
}

function clamp01 (x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0
}
