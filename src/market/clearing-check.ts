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
 *   pays at least the bid, at most the job's max price (when set), and more than the bid only
 *   when another bid of the auction was seen.
 *
 * What passes is one sample; the bid engine keeps one per renter and pricing.ts bounds how far
 * the samples move a bid.
 */

import { equals } from 'uint8arrays/equals'
import { PricingRule } from './messages.js'
import { ClearingSampleError } from './errors.js'
import type { Award, Bid, JobRequest } from './messages.js'
import type { Signed } from '../identity/index.js'

export type ClearingSampleReason =
  | 'self-award' | 'rule-mismatch' | 'unseen-bid' | 'wrong-bidder' | 'other-auction' | 'late-bid'
  | 'price-not-bid' | 'price-below-bid' | 'price-above-max' | 'price-without-runner-up'

/** What a provider keeps of a bid it heard: enough to tie an award to it (a Signed<Bid> is one). */
export interface HeardBid {
  hash: Uint8Array
  message: Pick<Bid, 'provider' | 'jobId' | 'jobNonce' | 'createdAt' | 'priceMicroUsd'>
}

/** The part of a heard bid kept for the price check (no envelope, addresses or labels). */
export function heardBid (bid: Signed<Bid>): HeardBid {
  const { provider, jobId, jobNonce, createdAt, priceMicroUsd } = bid.message
  return { hash: bid.hash, message: { provider, jobId, jobNonce, createdAt, priceMicroUsd } }
}

function fail (reason: ClearingSampleReason, message: string): never {
  throw new ClearingSampleError(reason, message)
}

/**
 * The clearing price (micro-USD) `award` teaches, given the bids of its auction this provider
 * saw; ClearingSampleError when it teaches nothing. `award` must already match `job`
 * (checkAwardForJob).
 */
export function clearingSample (award: Signed<Award>, job: Signed<JobRequest>, bidsSeen: Iterable<HeardBid>): bigint {
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
  const others = bids.some(b => !equals(b.message.provider, a.winner) && equals(b.message.jobNonce, a.jobNonce) && b.message.createdAt <= windowEnd)
  if (price > bid && !others) fail('price-without-runner-up', 'second price above the winning bid, but no other bid of the auction was seen')
  return price
}
