/**
 * The renter's award rule, as pure functions any node can re-run (protocols/README.md §4 and
 * §7 "Auction"): which bids are valid for a job, the bids digest, the score
 * `price / reliability^w` with latency and data-locality terms, the ranking with its tie
 * breaks, the clearing price under first- and second-price rules, and the audit of an award.
 */

import { compare } from 'uint8arrays/compare'
import { concat } from 'uint8arrays/concat'
import { equals } from 'uint8arrays/equals'
import { gpuModelMatches } from '../../capability/index.js'
import { toHex } from '../../common/index.js'
import { sha256, type Signed } from '../../identity/index.js'
import { JobRequest, PPM, PricingRule, peerIdFromBytes, type Award, type Bid } from './messages.js'
import { localityOf, type BidHolding } from './locality.js'
import { clampReliability, type ReputationSource } from './reputation.js'

export { localityOf, type BidHolding } from './locality.js'

export interface RankingParams {
  /** w in price / reliability^w */
  reliabilityWeight: number
  /** score multiplier per 100 ms of measured round trip: (1 + latencyWeight × rtt / 100 ms) */
  latencyWeight: number
  /** score discount when every dataset of the job is cached: (1 − localityWeight × fraction) */
  localityWeight: number
}

export const DEFAULT_RANKING: RankingParams = { reliabilityWeight: 2, latencyWeight: 0.1, localityWeight: 0.2 }

/** Reliability below this counts as this, so a score stays finite. */
const MIN_RELIABILITY_FOR_SCORE = 0.01

/** What the renter knows about one bidder beyond the bid itself. */
export interface BidContext {
  reputation: ReputationSource
  /** measured round trips, ms, by provider peer id (only where the job needs latency) */
  rttMs?: ReadonlyMap<string, number>
  /** providers that already failed this job (a re-auction): their bids are not valid */
  exclude?: ReadonlySet<string>
  /**
   * providers whose bids get no locality credit (the renter caught them overclaiming their input
   * cache: overclaim-book.ts; an audit: the award's RankingInput.locality_denied)
   */
  noLocality?: { has: (provider: string) => boolean }
}

export interface RankedBid {
  bid: Signed<Bid>
  provider: string
  priceMicroUsd: bigint
  reliability: number
  rttMs?: number
  /** fraction of the job's datasets the provider holds, 0..1 (0 when denied) */
  locality: number
  /** true when the bid claimed locality and the renter gave it none (BidContext.noLocality) */
  localityDenied?: boolean
  /** what the price is divided by: reliability^w / (latency and locality factors) */
  factor: number
  /** lower is better */
  score: number
}

export interface DroppedBid {
  bid: Signed<Bid>
  provider: string
  reason: string
}

/** Whether the tier or the constraints make latency part of validity and ranking. */
export function latencyMatters (job: JobRequest): boolean {
  return job.tier === JobRequest.Tier.GOLD || (job.constraints?.maxLatencyMs ?? 0) > 0
}

/**
 * Why `bid` does not fit `job` on its own terms, or null when it does: the checks that need
 * nothing but the two messages and the clock (the auction, expiry, the job's constraints). The
 * renter's bid collector applies them as bids arrive, so a bid that cannot win takes no room
 * and costs no dial (protocols/README.md §7 "Auction").
 */
export function bidFitsJob (bid: Bid, job: JobRequest, now: number): string | null {
  const c = job.constraints
  if (!equals(bid.jobId, job.jobId) || !equals(bid.jobNonce, job.nonce)) return 'wrong-job'
  if (Number(bid.expiresAt) <= now) return 'expired'
  if (c == null) return null
  if (c.maxPriceMicroUsd > 0n && bid.priceMicroUsd > c.maxPriceMicroUsd) return 'over-max-price'
  if (c.residency !== '' && bid.residency !== c.residency) return 'residency'
  if (c.regions.length > 0 && !c.regions.includes(bid.region)) return 'region'
  if (c.gpuModels.length > 0 && !c.gpuModels.some(m => gpuModelMatches(m, bid.gpuModel))) return 'gpu-model'
  if (bid.vramMib < c.minVramMib) return 'vram'
  if (c.excludeSimulated && bid.simulated) return 'simulated'
  return null
}

/**
 * Why `bid` is not valid for `job`, or null when it is. Signature, structure and expiry were
 * checked when the bid was read; this checks it against the auction (bidFitsJob), then
 * against what the renter knows of the bidder.
 */
export function bidProblem ({
  bid,
  job,
  provider,
  ctx,
  now
}: {
  bid: Bid
  job: JobRequest
  provider: string
  ctx: BidContext
  now: number
}): string | null {
  const fit = bidFitsJob(bid, job, now)
  if (fit != null) return fit
  if (ctx.exclude?.has(provider) === true) return 'failed-this-job'
  const c = job.constraints
  if (c == null) return null
  if (ctx.reputation.isExcluded?.(provider) === true) return 'excluded'
  if (reliabilityPpm(ctx.reputation.reliability(provider)) < c.minReliabilityPpm) return 'reliability'
  if (latencyMatters(job) && c.maxLatencyMs > 0) {
    const rtt = ctx.rttMs?.get(provider)
    if (rtt == null) return 'latency-unmeasured'
    if (rtt > c.maxLatencyMs) return 'latency'
  }
  return null
}

/** Whether bid `a` beats bid `b` of the same provider: lower price, then the smaller message hash. */
export function betterOwnBid (a: Signed<Bid>, b: Signed<Bid>): boolean {
  return a.message.priceMicroUsd < b.message.priceMicroUsd ||
    (a.message.priceMicroUsd === b.message.priceMicroUsd && compare(a.hash, b.hash) < 0)
}

/**
 * Splits bids into valid and dropped: invalid ones are dropped with their reason, and of
 * several valid bids from one provider only the lowest-priced is kept (equal prices: the
 * smaller hash), the others dropped as "duplicate".
 */
export function selectValidBids (
  bids: ReadonlyArray<Signed<Bid>>,
  job: JobRequest,
  ctx: BidContext,
  now: number
): { valid: Array<Signed<Bid>>, dropped: DroppedBid[] } {
  const dropped: DroppedBid[] = []
  const best = new Map<string, Signed<Bid>>()
  for (const bid of bids) {
    const provider = bid.signer.toString()
    const reason = bidProblem({ bid: bid.message, job, provider, ctx, now })
    if (reason != null) { dropped.push({ bid, provider, reason }); continue }
    const held = best.get(provider)
    if (held == null) { best.set(provider, bid); continue }
    if (equals(held.hash, bid.hash)) continue
    const better = betterOwnBid(bid, held)
    dropped.push({ bid: better ? held : bid, provider, reason: 'duplicate' })
    if (better) best.set(provider, bid)
  }
  return { valid: [...best.values()], dropped }
}

/** sha256 over the sorted message hashes of the valid bids (protocols/README.md §4). */
export function bidsDigest (valid: ReadonlyArray<{ hash: Uint8Array }>): Uint8Array {
  const hashes = valid.map(b => b.hash).sort(compare)
  return sha256(concat(hashes))
}

/**
 * Reliability as the ranking uses it and the award carries it: whole ppm, so that anyone
 * re-running the ranking from the award's inputs gets exactly the renter's scores.
 */
export function reliabilityPpm (reliability: number): number {
  return Math.round(clampReliability(reliability) * PPM)
}

/** The ranking weights an award carries, in ppm (Award.*_weight_ppm). */
export function rankingWeightsPpm (params: RankingParams = DEFAULT_RANKING): {
  reliabilityWeightPpm: number
  latencyWeightPpm: number
  localityWeightPpm: number
} {
  return {
    reliabilityWeightPpm: Math.round(params.reliabilityWeight * PPM),
    latencyWeightPpm: Math.round(params.latencyWeight * PPM),
    localityWeightPpm: Math.round(params.localityWeight * PPM)
  }
}

/** The ranking weights an award says it used (the defaults for an award without them). */
export function rankingParamsOf (award: Pick<Award, 'ranking' | 'reliabilityWeightPpm' | 'latencyWeightPpm' | 'localityWeightPpm'>): RankingParams {
  if (award.ranking.length === 0) return DEFAULT_RANKING
  return {
    reliabilityWeight: award.reliabilityWeightPpm / PPM,
    latencyWeight: award.latencyWeightPpm / PPM,
    localityWeight: award.localityWeightPpm / PPM
  }
}

/** The divisor of a bid's price in its score. */
export function scoreFactor (
  reliability: number,
  rttMs: number | undefined,
  locality: number,
  params: RankingParams = DEFAULT_RANKING
): number {
  const rel = Math.max(MIN_RELIABILITY_FOR_SCORE, clampReliability(reliability))
  const latency = 1 + params.latencyWeight * Math.max(0, rttMs ?? 0) / 100
  const local = 1 - params.localityWeight * Math.min(1, Math.max(0, locality))
  return rel ** params.reliabilityWeight / (latency * local)
}

/**
 * Ranks valid bids best first: lowest score, then lowest price, then smallest bid hash, so
 * every node that re-runs it gets the same order.
 */
export function rankBids (
  valid: ReadonlyArray<Signed<Bid>>,
  job: JobRequest,
  ctx: BidContext,
  params: RankingParams = DEFAULT_RANKING
): RankedBid[] {
  const ranked = valid.map((bid): RankedBid => ({
    bid,
    ...scoreOffer({
      provider: bid.signer.toString(),
      priceMicroUsd: bid.message.priceMicroUsd,
      held: bid.message,
      job,
      ctx,
      params
    })
  }))
  return ranked.sort((a, b) => compareScored(a, b, a.bid.hash, b.bid.hash))
}

/** A bid's ranking terms from plain values (rankBids, and the simulator, which ranks without envelopes). */
export type ScoredOffer = Omit<RankedBid, 'bid'>

/** One provider's offer for `job`: its price and what it holds of the job's datasets. */
export interface OfferToScore {
  provider: string
  priceMicroUsd: bigint
  held: BidHolding
  job: JobRequest
  ctx: BidContext
  /** default DEFAULT_RANKING */
  params?: RankingParams
}

/** The reliability, latency and locality terms and the score of one provider's price for `job`. */
export function scoreOffer ({
  provider,
  priceMicroUsd,
  held,
  job,
  ctx,
  params = DEFAULT_RANKING
}: OfferToScore): ScoredOffer {
  const reliability = reliabilityPpm(ctx.reputation.reliability(provider)) / PPM
  const measured = latencyMatters(job) ? ctx.rttMs?.get(provider) : undefined
  const rttMs = measured == null ? undefined : Math.max(0, Math.round(measured))
  const claimed = localityOf(job, held)
  const localityDenied = claimed > 0 && ctx.noLocality?.has(provider) === true
  const locality = localityDenied ? 0 : claimed
  const factor = scoreFactor(reliability, rttMs, locality, params)
  return {
    provider,
    priceMicroUsd,
    reliability,
    rttMs,
    locality,
    ...(localityDenied ? { localityDenied } : {}),
    factor,
    score: Number(priceMicroUsd) / factor
  }
}

/** The ranking order: lowest score, then lowest price, then the smaller bid hash. */
export function compareScored (a: Pick<ScoredOffer, 'score' | 'priceMicroUsd'>, b: Pick<ScoredOffer, 'score' | 'priceMicroUsd'>, hashA: Uint8Array, hashB: Uint8Array): number {
  const tolerance = 1e-9 * Math.max(a.score, b.score)
  if (Math.abs(a.score - b.score) > tolerance) return a.score - b.score
  if (a.priceMicroUsd !== b.priceMicroUsd) return a.priceMicroUsd < b.priceMicroUsd ? -1 : 1
  return compare(hashA, hashB)
}

/**
 * What the candidate at `index` of the ranking is paid. First price: its own bid. Second
 * price: the next candidate's score converted back to a price at this candidate's factor,
 * capped at the job's max price and never below its own bid; with no next candidate, its own bid.
 */
export function clearingPrice (ranked: ReadonlyArray<Pick<RankedBid, 'priceMicroUsd' | 'score' | 'factor'>>, index: number, rule: PricingRule, maxPriceMicroUsd: bigint): bigint {
  const winner = ranked[index]
  if (winner == null) throw new RangeError(`no candidate at ${index}`)
  const next = ranked[index + 1]
  if (rule !== PricingRule.SECOND_PRICE || next == null) return winner.priceMicroUsd
  let price = BigInt(Math.round(next.score * winner.factor))
  if (maxPriceMicroUsd > 0n && price > maxPriceMicroUsd) price = maxPriceMicroUsd
  return price < winner.priceMicroUsd ? winner.priceMicroUsd : price
}

export interface AwardAudit {
  ok: boolean
  /** what does not match, one line each */
  problems: string[]
  /** the winner the rule picks for this attempt from the bids the auditor saw */
  expectedWinner?: string
  expectedPriceMicroUsd?: bigint
  validBids: number
  digestMatches: boolean
  /** false when the ranking used round trips the auditor could not measure */
  rankingVerifiable: boolean
  /** message hashes (hex) of the valid bids in the rule's order, as the auditor ranked them */
  rankedBidHashes: string[]
}

/**
 * Re-checks an award from the bids the auditor saw (any node can run it): the digest of the
 * valid bids, their count, the winner for the award's attempt (attempt n goes to the n-th
 * ranked candidate, as failover walks the ranking), the winning bid hash, the failover order
 * and the clearing price. Round trips are the renter's own measurements: when the job used
 * them and the auditor passes none, only the digest and price rule are checked.
 */
export function auditAward (
  award: Award,
  bidsSeen: ReadonlyArray<Signed<Bid>>,
  context: {
    job: JobRequest
    reputation: ReputationSource
    rttMs?: ReadonlyMap<string, number>
    params?: RankingParams
  } & Pick<BidContext, 'noLocality'>
): AwardAudit {
  const { job } = context
  const problems: string[] = []
  if (!equals(award.jobId, job.jobId) || !equals(award.jobNonce, job.nonce)) problems.push('award is for another job or auction attempt')
  if (!equals(award.renter, job.renter)) problems.push('award is not signed by the job\'s renter')
  const windowEnd = Number(job.createdAt) + job.bidWindowMs
  // bids made after the window closed could not have been counted
  const inWindow = bidsSeen.filter(b => Number(b.message.createdAt) <= windowEnd)
  const useLatency = latencyMatters(job)
  const rankingVerifiable = !useLatency || context.rttMs != null
  const ctx: BidContext = { reputation: context.reputation, rttMs: context.rttMs, noLocality: context.noLocality }
  // judge validity as of the award's creation, as the renter did
  const now = Number(award.createdAt)
  const { valid } = rankingVerifiable
    ? selectValidBids(inWindow, job, ctx, now)
    : selectValidBids(
      inWindow,
      { ...job, constraints: job.constraints == null ? undefined : { ...job.constraints, maxLatencyMs: 0 } },
      ctx,
      now
    )
  const digestMatches = equals(bidsDigest(valid), award.bidsDigest)
  if (!digestMatches) problems.push(`bids digest differs from the ${valid.length} valid bids seen`)
  if (valid.length !== award.validBids) problems.push(`award counts ${award.validBids} valid bids, the auditor has ${valid.length}`)
  const ranked = rankBids(valid, job, ctx, context.params)
  const winnerId = safePeer(award.winner)
  const winnerIndex = ranked.findIndex(r => r.provider === winnerId)
  const winning = ranked[winnerIndex]
  if (winning == null) {
    problems.push('winner has no valid bid')
  } else if (!equals(winning.bid.hash, award.winnerBidHash)) {
    problems.push('winner_bid_hash is not the winner\'s kept bid')
  }
  const expected = ranked[award.attempt - 1]
  let expectedPrice: bigint | undefined
  if (rankingVerifiable) {
    if (expected == null) problems.push(`attempt ${award.attempt} exceeds the ${ranked.length} ranked candidates`)
    else if (expected.provider !== winnerId) problems.push(`rule picks ${expected.provider} for attempt ${award.attempt}, award names ${winnerId}`)
    const after = ranked.slice(award.attempt).map(r => r.provider)
    const named = award.runnerUp.map(safePeer)
    if (named.join(',') !== after.slice(0, named.length).join(',')) problems.push('failover order differs from the ranking')
  }
  if (winning != null) {
    expectedPrice = rankingVerifiable || award.pricingRule !== PricingRule.SECOND_PRICE
      ? clearingPrice(ranked, winnerIndex, award.pricingRule, job.constraints?.maxPriceMicroUsd ?? 0n)
      : undefined
    if (expectedPrice != null && expectedPrice !== award.clearingPriceMicroUsd) {
      problems.push(`clearing price ${award.clearingPriceMicroUsd} differs from the rule's ${expectedPrice}`)
    }
  }
  return {
    ok: problems.length === 0,
    problems,
    expectedWinner: expected?.provider,
    expectedPriceMicroUsd: expectedPrice,
    validBids: valid.length,
    digestMatches,
    rankingVerifiable,
    rankedBidHashes: ranked.map(r => toHex(r.bid.hash))
  }
}

function safePeer (bytes: Uint8Array): string {
  try {
    return peerIdFromBytes(bytes).toString()
  } catch {
    return `invalid:${toHex(bytes.subarray(0, 8))}`
  }
}
