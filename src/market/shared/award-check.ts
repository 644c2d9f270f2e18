/**
 * The one award check (protocols/README.md §8 "Awards and failover", §9 time rules, and the
 * job stream's Start checks). Every path that trusts an award goes through here: gossip
 * validation and the provider's award log (`readAward`), the provider's accept answer
 * (`readAward` + `checkAwardForJob` + `isAwardedTo`), and exec's Start frame
 * (`verifyAwardForWinner`, which applies all of them to the bytes the renter sent).
 *
 * An award is good when: it decodes within its bounds; its `renter` is its signer; job id,
 * job nonce (never empty), bids digest and winner bid hash have their lengths; the winner
 * is a peer id; attempt ≥ 1; `created_at` is at most 30 s ahead, `expires_at` in the future,
 * lifetime ≤ 10 min, `accept_deadline ≤ expires_at`. Against its job request: both signed by
 * the same renter, same job id, `job_nonce` = the request's nonce, and the request has a tier.
 * Ranking inputs, when the award carries them: each names a 32-byte bid hash once, reliability
 * ≤ 1 000 000 ppm, weights within bounds, and the input at rank `attempt` is the winning bid.
 * With the bids of the auction, `checkAwardRanking` re-derives the winner from those inputs.
 */

import { equals } from 'uint8arrays/equals'
import { LIMITS, MAX_BYTES, MAX_LIFETIME_MS } from '../../../protocols/codec.js'
import { DOMAIN } from '../../../protocols/ids.js'
import { Award, type JobRequest } from '../../../protocols/market.js'
import { toHex } from '../../common/index.js'
import { messageHash, type OpenedEnvelope, type Signed } from '../../identity/index.js'
import { awardCheckError, type AwardCheckError, messageError } from '../errors.js'
import { DIGEST_BYTES, ID_BYTES, PPM, PricingRule, bytesOf, decode, envelopeBytes, openMarketEnvelope, peerIdFromBytes, readJobRequest, sameSigner, tierOf, timeRules, type Bid } from './messages.js'
import { auditAward, latencyMatters, rankingParamsOf, type AwardAudit } from './ranking.js'
import { fixedReputation } from './reputation.js'
import type { Tier } from '../../capability/index.js'
import type { PeerId } from '@libp2p/interface'

/** An award and its job request as the Start check verified them. */
export interface VerifiedAward {
  award: Award
  awardEnvelope: Uint8Array
  /** message hash of the award (Attestation.award_hash) */
  awardHash: Uint8Array
  jobRequest: JobRequest
  jobRequestEnvelope: Uint8Array
  renter: PeerId
  tier: Tier
  /** hex job id */
  jobIdHex: string
  /** "<renter>/<job id hex>/<auction nonce>/<attempt>": one run per award attempt (a job is its renter's) */
  attemptKey: string
}

/** The award's own field rules (no clock). */
function awardFields (award: Award, signer: PeerId): void {
  sameSigner(award.renter, signer, 'award')
  bytesOf(award.jobId, ID_BYTES, 'job_id')
  bytesOf(award.jobNonce, ID_BYTES, 'job_nonce')
  bytesOf(award.bidsDigest, DIGEST_BYTES, 'bids_digest')
  bytesOf(award.winnerBidHash, DIGEST_BYTES, 'winner_bid_hash')
  peerIdFromBytes(award.winner)
  if (award.attempt < 1) throw messageError('malformed', 'award attempt is 0')
  rankingFields(award)
}

/**
 * Largest ranking weights an award may name, ppm: w ≤ 10, λ_rtt ≤ 10, λ_loc < 1 (the locality
 * factor stays positive).
 */
const MAX_WEIGHT_PPM = { reliability: 10 * PPM, latency: 10 * PPM, locality: PPM - 1 }

/** The ranking inputs' own rules (an award without inputs has none to break). */
function rankingFields (award: Award): void {
  if (award.ranking.length === 0) return
  const seen = new Set<string>()
  for (const input of award.ranking) {
    bytesOf(input.bidHash, DIGEST_BYTES, 'ranking bid_hash')
    const key = toHex(input.bidHash)
    if (seen.has(key)) throw messageError('malformed', 'award ranking names one bid twice')
    seen.add(key)
    if (input.reliabilityPpm > PPM) throw messageError('malformed', `award ranking reliability ${input.reliabilityPpm} ppm is above 1 000 000`)
  }
  if (
    award.reliabilityWeightPpm > MAX_WEIGHT_PPM.reliability ||
    award.latencyWeightPpm > MAX_WEIGHT_PPM.latency ||
    award.localityWeightPpm > MAX_WEIGHT_PPM.locality
  ) {
    throw messageError('malformed', 'award ranking weights out of bounds')
  }
  const named = award.ranking[award.attempt - 1]
  if (named == null || !equals(named.bidHash, award.winnerBidHash)) throw messageError('malformed', `award ranking does not put the winning bid at rank ${award.attempt}`)
}

/**
 * Re-derives an award's winner from the ranking inputs it carries and the bids of its
 * auction (`bidsSeen`, for the job request `job`): each input's bid must be among them; the
 * rule (ranking.ts) is re-run with the award's reliabilities, round trips and weights; the
 * inputs must be the rule's order, every ranked valid bid must be among them (unless the
 * award carries the most it may), and digest, winner, failover order and clearing price must
 * follow (auditAward). Needs no ledger: with personal reputation, an auditor's own view of the
 * bidders differs from the renter's, and the award says which figures the renter used (and which
 * bids it gave no locality credit: `locality_denied`).
 */
export function checkAwardRanking (award: Award, bidsSeen: ReadonlyArray<Signed<Bid>>, job: JobRequest): AwardAudit {
  if (award.ranking.length === 0) {
    return { ok: false, problems: ['the award carries no ranking inputs'], validBids: 0, digestMatches: false, rankingVerifiable: false, rankedBidHashes: [] }
  }
  const byHash = new Map(bidsSeen.map(b => [toHex(b.hash), b]))
  const reliability: Record<string, number> = {}
  const rttMs = new Map<string, number>()
  const noLocality = new Set<string>()
  const problems: string[] = []
  for (const input of award.ranking) {
    const bid = byHash.get(toHex(input.bidHash))
    if (bid == null) { problems.push(`ranking input ${toHex(input.bidHash).slice(0, 16)} is not a bid seen for this auction`); continue }
    const provider = bid.signer.toString()
    reliability[provider] = input.reliabilityPpm / PPM
    if (input.rttMs != null) rttMs.set(provider, input.rttMs)
    if (input.localityDenied === true) noLocality.add(provider)
  }
  // bidders the award does not rank get reliability 0: invalid under a reliability floor, last otherwise
  const audit = auditAward(award, bidsSeen, {
    job,
    reputation: fixedReputation(reliability, 0),
    rttMs: latencyMatters(job) ? rttMs : undefined,
    noLocality,
    params: rankingParamsOf(award)
  })
  const inputs = award.ranking.map(i => toHex(i.bidHash))
  const prefix = audit.rankedBidHashes.slice(0, inputs.length)
  if (prefix.join(',') !== inputs.join(',')) problems.push('the ranking inputs are not in the order the rule gives them')
  if (inputs.length < LIMITS.award.ranking && audit.rankedBidHashes.length > inputs.length) problems.push(`${audit.rankedBidHashes.length - inputs.length} valid bids are missing from the ranking inputs`)
  problems.push(...audit.problems)
  return { ...audit, ok: problems.length === 0, problems }
}

/** The award's time rules at `now`. */
function awardTimes (award: Award, now: number): void {
  timeRules(award, { maxLifetimeMs: MAX_LIFETIME_MS.award, now, what: 'award' })
  if (award.acceptDeadline > award.expiresAt) throw messageError('lifetime', 'award accept deadline after its expiry')
}

/** Decodes and checks an Award payload (fields and time rules); MarketError ERR_MARKET_MESSAGE otherwise. */
export function readAward (opened: OpenedEnvelope, now = Date.now()): Signed<Award> {
  const award = decode(Award, opened.payload, { what: 'award', maxBytes: MAX_BYTES.award, limits: LIMITS.award })
  awardFields(award, opened.signer)
  awardTimes(award, now)
  return {
    message: award,
    signer: opened.signer,
    hash: messageHash(opened.domain, opened.payload),
    envelope: envelopeBytes(opened)
  }
}

/**
 * Opens award envelope bytes and checks its fields, not the clock: for reading an award this
 * node already judged (its own, or one it accepted). MarketError ERR_MARKET_MESSAGE otherwise.
 */
export function openAward (bytes: Uint8Array): Signed<Award> {
  const opened = openMarketEnvelope(bytes, DOMAIN.award, MAX_BYTES.award)
  const award = decode(Award, opened.payload, { what: 'award', maxBytes: MAX_BYTES.award, limits: LIMITS.award })
  awardFields(award, opened.signer)
  return { message: award, signer: opened.signer, hash: messageHash(opened.domain, opened.payload), envelope: bytes }
}

/** Whether `award` names `me` as its winner. */
export function isAwardedTo (award: Award, me: PeerId): boolean {
  return equals(award.winner, me.toMultihash().bytes)
}

/** Checks that `award` closes the auction `job` opened; MarketError ERR_MARKET_MESSAGE otherwise. */
export function checkAwardForJob (award: Signed<Award>, job: Signed<JobRequest>): void {
  if (!award.signer.equals(job.signer)) throw messageError('wrong-signer', 'award and job request are signed by different peers')
  sameSigner(job.message.renter, award.signer, 'job request')
  if (!equals(award.message.jobId, job.message.jobId)) throw messageError('wrong-job', 'award is for another job')
  if (award.message.jobNonce.length === 0 || !equals(award.message.jobNonce, job.message.nonce)) throw messageError('wrong-job', 'award closes another auction of the job')
  tierOf(job.message)
}

/**
 * Why the winner refuses the clearing price of an award for its own bid `bid` (protocols/README.md
 * §7 "Auction", accept rules), or undefined when the price is one it accepts. The rule is the one
 * the job request announced (the award cannot pick another); `FIRST_PRICE` pays exactly the bid;
 * `SECOND_PRICE` pays at least the bid; neither pays above the job's max price (when set). A
 * second price between the two is accepted as it stands: the runner-up's bid went to the renter
 * alone, so the winner cannot re-derive it.
 */
export function awardPriceProblem (award: Award, job: JobRequest, bid: Pick<Bid, 'priceMicroUsd'>): string | undefined {
  const price = award.clearingPriceMicroUsd
  const own = bid.priceMicroUsd
  const max = job.constraints?.maxPriceMicroUsd ?? 0n
  if (award.pricingRule !== job.pricingRule) return 'clearing price: the award\'s pricing rule is not the one its job request announced'
  if (max > 0n && price > max) return `clearing price ${price} micro-USD is above the job's max price ${max}`
  if (job.pricingRule === PricingRule.SECOND_PRICE) {
    return price < own ? `clearing price ${price} micro-USD is below this provider's bid ${own} (second price pays at least the bid)` : undefined
  }
  return price !== own ? `clearing price ${price} micro-USD is not this provider's bid ${own} (first price pays the bid)` : undefined
}

/**
 * The Start frame's award check: the award (fields and time rules at `now`) and the job
 * request (fields; its own expiry is not required, the award's bounds the start) verify,
 * belong together, and name `me` as winner. MarketError ERR_AWARD_CHECK with `NOT_AWARDED` when the
 * award is good but for another provider, `BAD_AWARD` for everything else.
 */
export function verifyAwardForWinner (
  awardBytes: Uint8Array,
  jobRequestBytes: Uint8Array,
  me: PeerId,
  now = Date.now()
): VerifiedAward {
  const bad = (what: string, err: unknown): AwardCheckError =>
    awardCheckError('BAD_AWARD', `${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
  let award: Signed<Award>
  let job: Signed<JobRequest>
  try {
    award = readAward(openMarketEnvelope(awardBytes, DOMAIN.award, MAX_BYTES.award), now)
  } catch (err) {
    throw bad('award does not verify', err)
  }
  try {
    job = readJobRequest(openMarketEnvelope(jobRequestBytes, DOMAIN.jobRequest, MAX_BYTES.jobRequest), now, {
      expiry: false
    })
  } catch (err) {
    throw bad('job request does not verify', err)
  }
  try {
    checkAwardForJob(award, job)
  } catch (err) {
    throw bad('award does not match its job request', err)
  }
  if (!isAwardedTo(award.message, me)) throw awardCheckError('NOT_AWARDED', 'the award names another provider as winner')
  const a = award.message
  const jobIdHex = toHex(a.jobId)
  return {
    award: a,
    awardEnvelope: awardBytes,
    awardHash: award.hash,
    jobRequest: job.message,
    jobRequestEnvelope: jobRequestBytes,
    renter: award.signer,
    tier: tierOf(job.message),
    jobIdHex,
    attemptKey: `${award.signer.toString()}/${jobIdHex}/${toHex(a.jobNonce).slice(0, 16)}/${a.attempt}`
  }
}
