/**
 * Which awards a provider learns a clearing price from (issue 13, "anyone sets the price").
 * An award says something about the market only when the provider can tie it to bids it saw:
 *
 * - the award already passed the one award check against its job request (award-check.ts);
 * - the winner is not the renter itself (self-dealing is no market);
 * - the award's pricing rule is the one the job request announced;
 * - the award's `winner_bid_hash` is a bid this provider received on the bids topic (or made
 *   itself) for this auction (job id and nonce), signed by the award's winner, made inside the
 *   bid window;
 * - the clearing price follows from that bid: first price pays exactly the bid; second price
 *   pays exactly what the rule (ranking.ts `clearingPrice`) derives from the runner-up the award
 *   names (`runner_up[0]`, whose bid this provider must have heard: its lowest in the window),
 *   with the terms a provider can check taken from the two bids (data locality) and those it
 *   cannot see (the renter's reliabilities and round trips) taken as equal; no runner-up named
 *   pays the bid. Or, for a winner that fetched the renter's bids audit and checked it
 *   (`priceAudited`), the price the audit re-derived with the award's own figures. An award
 *   whose terms differ teaches nothing: a lost sample, never a wrong one.
 *
 * What passes is one sample; the bid engine keeps one per renter and pricing.ts bounds how far
 * the samples move a bid.
 */

import { equals } from 'uint8arrays/equals'
import { compare } from 'uint8arrays/compare'
import { PricingRule } from '../shared/messages.js'
import { localityOf, scoreFactor } from '../shared/ranking.js'
import { NEUTRAL_RELIABILITY } from '../shared/reputation.js'
import { clearingSampleError } from '../errors.js'
import type { Award, Bid, JobRequest } from '../shared/messages.js'
import type { Signed } from '../../identity/index.js'

export type ClearingSampleReason =
  | 'self-award' | 'rule-mismatch' | 'unseen-bid' | 'wrong-bidder' | 'other-auction' | 'late-bid'
  | 'price-not-bid' | 'price-below-bid' | 'price-above-max' | 'unseen-runner-up' | 'price-not-derived'

/** What a provider keeps of a bid it heard: enough to tie an award to it (a Signed<Bid> is one). */
export interface HeardBid {
  hash: Uint8Array
  message: Pick<Bid, 'provider' | 'jobId' | 'jobNonce' | 'createdAt' | 'priceMicroUsd' | 'cachedDatasets' | 'cachedBytes'>
}

/** The part of a heard bid kept for the price check (no envelope, addresses or labels). */
export function heardBid (bid: Signed<Bid>): HeardBid {
  const { provider, jobId, jobNonce, createdAt, priceMicroUsd, cachedDatasets, cachedBytes } = bid.message
  return {
    hash: bid.hash,
    message: {
      provider,
      jobId,
      jobNonce,
      createdAt,
      priceMicroUsd,
      cachedDatasets,
      ...(cachedBytes != null ? { cachedBytes } : {})
    }
  }
}

function fail (reason: ClearingSampleReason, message: string): never {
  throw clearingSampleError(reason, message)
}

/**
 * The clearing price (micro-USD) `award` teaches, given the bids of its auction this provider
 * saw; MarketError ERR_CLEARING_SAMPLE when it teaches nothing. `award` must already match `job`
 * (checkAwardForJob).
 */
export function clearingSample (
  award: Signed<Award>,
  job: Signed<JobRequest>,
  bidsSeen: Iterable<HeardBid>,
  opts: { priceAudited?: boolean } = {}
): bigint {
  const a = award.message
  if (equals(a.winner, a.renter)) fail('self-award', 'the award names its own renter as winner')
  if (a.pricingRule !== job.message.pricingRule) fail('rule-mismatch', 'the award\'s pricing rule is not the one its job request announced')
  const bids = [...bidsSeen]
  const winning = bids.find(b => equals(b.hash, a.winnerBidHash))
  if (winning == null) fail('unseen-bid', 'the award\'s winning bid was never seen on the bids topic')
  if (!equals(winning.message.provider, a.winner)) fail('wrong-bidder', 'the award\'s winning bid was made by another provider than its winner')
  if (!equals(winning.message.jobId, a.jobId) || !equals(winning.message.jobNonce, a.jobNonce)) fail('other-auction', 'the award\'s winning bid is for another auction')
  const windowEnd = job.message.createdAt + BigInt(job.message.bidWindowMs)
  if (winning.message.createdAt > windowEnd) fail('late-bid', 'the award\'s winning bid was made after the bid window closed')
  const price = a.clearingPriceMicroUsd
  const bid = winning.message.priceMicroUsd
  if (a.pricingRule !== PricingRule.SECOND_PRICE) {
    if (price !== bid) fail('price-not-bid', `first price pays the winning bid (${bid} micro-USD), the award says ${price}`)
    return price
  }
  if (price < bid) fail('price-below-bid', `second price pays at least the winning bid (${bid} micro-USD), the award says ${price}`)
  const max = job.message.constraints?.maxPriceMicroUsd ?? 0n
  if (max > 0n && price > max) fail('price-above-max', `the award pays ${price} micro-USD, above the job's max price ${max}`)
  // the renter's bids audit re-derived this price from the committed bids with the award's own
  // reliabilities and round trips (verifyBidsAudit): nothing left to guess
  if (opts.priceAudited === true) return price
  const next = a.runnerUp[0]
  if (next == null) {
    if (price !== bid) fail('price-not-derived', `second price with no runner-up named pays the winning bid (${bid} micro-USD), the award says ${price}`)
    return price
  }
  const runnerUp = keptBid(bids.filter(b => equals(b.message.provider, next) && !equals(next, a.winner) &&
    equals(b.message.jobId, a.jobId) && equals(b.message.jobNonce, a.jobNonce) && b.message.createdAt <= windowEnd))
  if (runnerUp == null) fail('unseen-runner-up', 'the award\'s runner-up made no bid this provider heard for the auction')
  const expected = secondPrice(winning, runnerUp, job.message)
  // one micro-USD either way: the renter divides and multiplies by its own reliabilities
  const off = price > expected ? price - expected : expected - price
  if (off > 1n) fail('price-not-derived', `second price from the runner-up's bid is ${expected} micro-USD, the award says ${price}`)
  return price
}

/** The bid of one provider the ranking keeps: the lowest price, then the smaller hash. */
function keptBid (bids: HeardBid[]): HeardBid | undefined {
  let best: HeardBid | undefined
  for (const b of bids) {
    const better = best == null || b.message.priceMicroUsd < best.message.priceMicroUsd ||
      (b.message.priceMicroUsd === best.message.priceMicroUsd && compare(b.hash, best.hash) < 0)
    if (better) best = b
  }
  return best
}

/**
 * ranking.ts `clearingPrice` for a winner and the runner-up after it, with the locality term
 * from their bids and equal (neutral) reliability and latency terms.
 */
function secondPrice (winner: HeardBid, runnerUp: HeardBid, job: JobRequest): bigint {
  const locality = (b: HeardBid): number => localityOf(job, b.message)
  const factorW = scoreFactor(NEUTRAL_RELIABILITY, undefined, locality(winner))
  const factorN = scoreFactor(NEUTRAL_RELIABILITY, undefined, locality(runnerUp))
  let price = BigInt(Math.round(Number(runnerUp.message.priceMicroUsd) / factorN * factorW))
  const max = job.constraints?.maxPriceMicroUsd ?? 0n
  if (max > 0n && price > max) price = max
  return price < winner.message.priceMicroUsd ? winner.message.priceMicroUsd : price
}
