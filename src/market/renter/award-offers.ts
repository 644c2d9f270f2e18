/**
 * Award offers: after ranking, the renter offers the award to the best bidder (a signed
 * Award sent to the winner over /idlegrid/accept/1.0.0) and, when it does not accept by the
 * deadline, to the next best — at most MAX_AWARD_OFFERS per auction. Each offer's Award
 * carries its ordinal in the wire field `attempt`. Awards are never gossiped (version 2): only
 * the winner and the renter need one, and auditors ask the renter for the bids with the
 * award in hand (bids-audit.ts). An award on gossip before its answer would also let a third
 * party relay it to the winner first (issue 13, award sniping).
 */

import { equals as equalBytes } from 'uint8arrays/equals'
import { MAX_BYTES } from '../../../protocols/codec.js'
import { PROTOCOL } from '../../../protocols/ids.js'
import { AcceptRequest } from '../../../protocols/market.js'
import { isRequestFailure, requestOnce } from '../../node/index.js'
import { MarketError } from '../errors.js'
import { declineReasonName, readAcceptResponse, signAward, type Award, type JobRequest } from '../shared/messages.js'
import { DEFAULT_RANKING, clearingPrice, rankingWeightsPpm, reliabilityPpm, type RankedBid, type RankingParams } from '../shared/ranking.js'
import type { AcceptOutcome } from './auction-report.js'
import type { Signed } from '../../identity/index.js'
import type { Ed25519PrivateKey, Logger, PeerId, PrivateKey } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'

/** Winners offered the award per auction before giving up. */
export const MAX_AWARD_OFFERS = 8
/** Runner-up peers an award lists. */
const MAX_RUNNER_UP = 64
/** Ranked bids whose ranking inputs an award carries: every offer's winner and its runner-ups. */
const MAX_RANKING_INPUTS = MAX_AWARD_OFFERS + MAX_RUNNER_UP
/** How long an award outlives its accept deadline, so the winner's job stream can still start under it. */
const AWARD_TTL_AFTER_DEADLINE_MS = 60_000

export interface AwardOfferComponents {
  peerId: PeerId
  privateKey: PrivateKey
  connectionManager: ConnectionManager
}

/** One offer as it went. */
export interface OfferResult {
  index: number
  award: Signed<Award>
  outcome: AcceptOutcome
  reason?: string
}

export interface OfferHooks {
  /** the award of an offer is made, before its winner is asked */
  onAward?: (award: Signed<Award>, candidate: RankedBid) => void
  /** its winner answered (or did not) */
  onAnswer?: (offer: OfferResult, candidate: RankedBid) => void
}

/** What an award is built from: the job, its ranked bids, their digest, the ranking weights used. */
export interface AwardBasis {
  job: JobRequest
  ranked: RankedBid[]
  /** bidsDigest of the valid bids */
  digest: Uint8Array
  acceptTimeoutMs: number
  /** default DEFAULT_RANKING */
  params?: RankingParams
}

export interface OfferAwardOptions extends AwardBasis {
  /** aborts the whole auction */
  signal: AbortSignal
  log: Logger
  hooks?: OfferHooks
}

/**
 * Offers the award down `ranked` until one winner accepts; resolves with that offer, or
 * undefined when none of the first MAX_AWARD_OFFERS did. MarketError ERR_AUCTION when `signal` aborts.
 */
export async function offerAward (
  components: AwardOfferComponents,
  opts: OfferAwardOptions
): Promise<OfferResult | undefined> {
  const { ranked, signal, log, hooks = {} } = opts
  const offers = Math.min(ranked.length, MAX_AWARD_OFFERS)
  for (let i = 0; i < offers; i++) {
    const candidate = ranked[i] as RankedBid
    const award = signAward(components.privateKey as Ed25519PrivateKey, components.peerId, buildAward(opts, i))
    hooks.onAward?.(award, candidate)
    const answer = await askAccept(components, { winner: candidate.bid.signer, award, signal, log })
    const offer: OfferResult = { index: i, award, ...answer }
    hooks.onAnswer?.(offer, candidate)
    if (offer.outcome === 'accepted') return offer
  }
  return undefined
}

/** The Award of the offer to `ranked[index]`, with what the ranking used so anyone can re-derive it. */
export function buildAward (basis: AwardBasis, index: number): Award {
  const { job, ranked, digest, acceptTimeoutMs, params = DEFAULT_RANKING } = basis
  const now = Date.now()
  const candidate = ranked[index] as RankedBid
  const deadline = now + acceptTimeoutMs
  return {
    jobId: job.jobId,
    renter: job.renter,
    winner: candidate.bid.signer.toMultihash().bytes,
    clearingPriceMicroUsd: clearingPrice(ranked, index, job.pricingRule, job.constraints?.maxPriceMicroUsd ?? 0n),
    pricingRule: job.pricingRule,
    bidsDigest: digest,
    runnerUp: ranked.slice(index + 1, index + 1 + MAX_RUNNER_UP).map(r => r.bid.signer.toMultihash().bytes),
    acceptDeadline: BigInt(deadline),
    createdAt: BigInt(now),
    expiresAt: BigInt(deadline + AWARD_TTL_AFTER_DEADLINE_MS),
    attempt: index + 1,
    validBids: ranked.length,
    winnerBidHash: candidate.bid.hash,
    jobNonce: job.nonce,
    ranking: ranked
      .slice(0, MAX_RANKING_INPUTS)
      .map(r => ({
        bidHash: r.bid.hash,
        reliabilityPpm: reliabilityPpm(r.reliability),
        rttMs: r.rttMs,
        ...(r.localityDenied === true ? { localityDenied: true } : {})
      })),
    ...rankingWeightsPpm(params)
  }
}

/** Asks `winner` to accept `award` before its deadline. */
async function askAccept (
  components: AwardOfferComponents,
  { winner, award, signal, log }: { winner: PeerId, award: Signed<Award>, signal: AbortSignal, log: Logger }
): Promise<{ outcome: AcceptOutcome, reason?: string }> {
  const deadline = AbortSignal.any([
    signal,
    AbortSignal.timeout(Math.max(1, Number(award.message.acceptDeadline) - Date.now()))
  ])
  try {
    // lazy select: the award rides with the protocol proposal (a bidder speaks the accept
    // protocol), one round trip less between the window's close and the winner's answer
    const bytes = await requestOnce(components.connectionManager, winner, {
      protocol: PROTOCOL.accept,
      request: AcceptRequest.encode({ award: award.envelope }),
      maxResponseBytes: MAX_BYTES.acceptResponse + 256,
      signal: deadline,
      lazy: true
    })
    const response = readAcceptResponse(bytes, winner)
    if (!equalBytes(response.jobId, award.message.jobId) || response.attempt !== award.message.attempt) return { outcome: 'error', reason: 'answer is for another award' }
    if (Date.now() > Number(award.message.acceptDeadline)) return { outcome: 'timeout', reason: 'answered after the deadline' }
    if (response.accepted) return { outcome: 'accepted' }
    return { outcome: 'declined', reason: `${declineReasonName(response.reason)}${response.detail !== '' ? `: ${response.detail.slice(0, 200)}` : ''}` }
  } catch (err: any) {
    if (signal.aborted) throw new MarketError('ERR_AUCTION', 'auction cancelled', { cause: err })
    if (isRequestFailure(err) && err.reason === 'timeout') return { outcome: 'timeout', reason: 'no answer before the accept deadline' }
    log('accept from %p failed: %e', winner, err)
    return { outcome: 'error', reason: String(err?.message ?? err).slice(0, 200) }
  }
}
