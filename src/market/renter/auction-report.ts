/**
 * What an auction tells its caller: progress events while it runs and the report at the end
 * (bids as rows, the award and why this provider won, each award offer's outcome, and why
 * there was no award when there was none). Building the rows and the reasons lives here too.
 */

import { toHex, shortPeerId } from '../../common/index.js'
import { DeclineReason, declineReasonName, microToUsd, peerIdFromBytes, pricingRuleName, type Award, type Bid, type JobRequest } from '../shared/messages.js'
import type { RankedBid } from '../shared/ranking.js'
import type { WindowCounts } from './bid-collector.js'
import type { OverclaimBook } from './overclaim-book.js'
import type { Signed } from '../../identity/index.js'

export interface AuctionOptions {
  signal?: AbortSignal
  /** progress: published, bid, closed, award, accept, explain */
  onEvent?: (event: AuctionEvent) => void
  /** ask non-bidders why when fewer than this many valid bids arrived (0: only when none) */
  explainBelow?: number
  /** keeps the job id of an earlier auction (re-auction) */
  jobId?: Uint8Array
  /** providers (peer id text) whose bids are dropped as "failed-this-job": they already failed it */
  exclude?: readonly string[]
}

/** How a winner answered one award offer. */
export type AcceptOutcome = 'accepted' | 'declined' | 'timeout' | 'error'

export type AuctionEvent =
  | { type: 'published', jobId: string, windowMs: number }
  | { type: 'bid', provider: string, price: number }
  | { type: 'closed', bids: number, valid: number }
  | { type: 'award', attempt: number, winner: string, price: number }
  | { type: 'accept', attempt: number, winner: string, outcome: AcceptOutcome, reason?: string }
  | { type: 'explain', asked: number }

export interface BidRow {
  provider: string
  /** USD per GPU-hour */
  price: number
  priceMicroUsd: string
  gpu: string
  vramMib: number
  region: string
  residency: string
  simulated: boolean
  reliability: number
  rttMs?: number
  score?: number
  /** the locality term the ranking credited, 0 … 1 (valid bids that claimed some) */
  locality?: number
  /** why the bid's cache claim got no locality credit, when it got none */
  noLocality?: string
  /** 1 = best, among valid bids */
  rank?: number
  /** why it was dropped, when it was */
  dropped?: string
}

export interface AwardRow {
  winner: string
  /** clearing price, USD per GPU-hour */
  price: number
  priceMicroUsd: string
  /** the award offer that was accepted (Award.attempt: 1 = the best bid) */
  attempt: number
  pricing: string
  /** why this provider won, in words */
  reason: string
  bidsDigest: string
  runnerUp: string[]
}

export interface DeclineCounts {
  /** providers asked */
  asked: number
  answered: number
  /** counts by reason name (no-capacity, vram, residency, …; no-answer for silence) */
  declines: Record<string, number>
  details: Array<{ provider: string, reason: string, detail: string }>
}

/** One award offer and how its winner answered (`attempt` is the wire field Award.attempt). */
export interface OfferRow { attempt: number, winner: string, outcome: AcceptOutcome, reason?: string }

export interface AuctionReport {
  jobId: string
  name: string
  tier: string
  /** GPUs the job takes on one box; prices are per GPU-hour, so it pays this many times them */
  gpus: number
  pricing: string
  windowMs: number
  bids: BidRow[]
  validBids: number
  award?: AwardRow
  /** every award offer made, in order (the JSON name is kept for scripts) */
  attempts: OfferRow[]
  /** set when no valid bid arrived: why, with the providers' decline reasons */
  noBids?: DeclineCounts & { reason: string }
  /** set when valid bids arrived but no winner accepted */
  noAward?: { reason: string }
  /** answers to "why not?" when asked while some bids arrived */
  explain?: DeclineCounts
  /** readyMs: before publication, waiting for a shard peer and readying the shard (shard-readiness.ts) */
  timings: {
    readyMs?: number
    publishToCloseMs: number
    publishToFirstBidMs?: number
    publishToAwardMs?: number
    publishToAcceptedMs?: number
  }
  /** peers the job request went to straight from the renter (gossipsub's recipients of the publish) */
  publishedTo?: number
  /**
   * what happened to every bid that reached the auction (kept, not better than the bidder's kept
   * bid, unfit, late …)
   */
  received?: WindowCounts
  /** the signed messages, for the job stream and audits (not in JSON output) */
  signed?: { job: Signed<JobRequest>, award?: Signed<Award>, bids: Array<Signed<Bid>> }
}

export function bidRow (bid: Signed<Bid>, extra: Partial<BidRow>): BidRow {
  const b = bid.message
  return {
    provider: bid.signer.toString(),
    price: microToUsd(b.priceMicroUsd),
    priceMicroUsd: b.priceMicroUsd.toString(),
    gpu: b.gpuModel,
    vramMib: b.vramMib,
    region: b.region,
    residency: b.residency,
    simulated: b.simulated,
    reliability: extra.reliability ?? 0,
    ...extra
  }
}

/**
 * A ranked bid's locality figures for its row: the term credited, and why a claim got none
 * (`book`: the renter's overclaimers, for when and by how much).
 */
export function localityTerms (r: RankedBid, book?: Pick<OverclaimBook, 'get'>): Pick<BidRow, 'locality' | 'noLocality'> {
  if (r.localityDenied !== true) return r.locality > 0 ? { locality: r.locality } : {}
  const last = book?.get(r.provider)
  const figures = last == null ? '' : ` (claimed ${mib(last.claimedBytes)}, held ${mib(last.heldBytes)}); until ${new Date(last.untilMs).toISOString()}`
  return {
    locality: 0,
    noLocality: `cache-overclaim: on an earlier job its input cache held less than its bid claimed${figures}`
  }
}

/** The accepted award as a row, with why its winner won in words. */
export function awardRow (award: Award, ranked: RankedBid[], index: number): AwardRow {
  const w = ranked[index] as RankedBid
  const next = ranked[index + 1]
  const terms = [`price ${usd(w.priceMicroUsd)}`, `reliability ${w.reliability.toFixed(2)}`]
  if (w.rttMs != null) terms.push(`rtt ${w.rttMs} ms`)
  const cachedBytes = Number(w.bid.message.cachedBytes ?? 0n)
  if (w.localityDenied === true) terms.push('no locality credit: it overclaimed its input cache before')
  if (w.locality > 0) {
    terms.push(cachedBytes > 0
      ? `${Math.round(w.locality * 100)} % of the job's named input bytes held in its input cache (${(cachedBytes / 2 ** 20).toFixed(1)} MiB not sent)`
      : `${Math.round(w.locality * 100)} % of datasets cached`)
  }
  let reason = `lowest score price/reliability^w (${terms.join(', ')}; score ${(w.score / 1e6).toFixed(3)})`
  reason += next == null ? ', the only valid bid' : ` beats ${shortPeerId(next.provider)} (score ${(next.score / 1e6).toFixed(3)})`
  if (index > 0) reason += `; failover after ${index} earlier winner${index > 1 ? 's' : ''} did not accept`
  reason += award.clearingPriceMicroUsd === w.priceMicroUsd
    ? `; pays its bid (${pricingRuleName(award.pricingRule)})`
    : `; pays ${usd(award.clearingPriceMicroUsd)}, the runner-up's score at its own terms (second-price)`
  return {
    winner: w.provider,
    price: microToUsd(award.clearingPriceMicroUsd),
    priceMicroUsd: award.clearingPriceMicroUsd.toString(),
    attempt: award.attempt,
    pricing: pricingRuleName(award.pricingRule),
    reason,
    bidsDigest: toHex(award.bidsDigest),
    runnerUp: award.runnerUp.map(r => peerIdFromBytes(r).toString())
  }
}

/**
 * Why an auction ended without a valid bid (`gpus`: the job's GPU count, named when every answer
 * says no box has that many).
 */
export function noBidsReason (received: number, dropped: string[], counts: DeclineCounts, gpus = 1): string {
  if (received > 0) {
    const why: Record<string, number> = {}
    for (const d of dropped) why[d] = (why[d] ?? 0) + 1
    return `${received} bid${received > 1 ? 's' : ''} arrived, none valid (${Object.entries(why).map(([r, n]) => `${n} ${r}`).join(', ')})`
  }
  if (counts.asked === 0) return 'no provider bid and none could be asked why (no candidates known)'
  const tooFew = counts.declines[declineReasonName(DeclineReason.GPU_COUNT)] ?? 0
  if (gpus > 1 && tooFew > 0 && tooFew === counts.answered) {
    const example = counts.details.find(d => d.reason === declineReasonName(DeclineReason.GPU_COUNT))?.detail
    return `no provider has ${gpus} GPUs on one box that fit the job: all ${counts.answered} of ${counts.asked} asked have fewer${example != null ? ` (e.g. "${example}")` : ''}`
  }
  return `no provider bid; ${counts.answered} of ${counts.asked} asked said why`
}

/** Why an auction with valid bids ended without an award: every offer and its answer. */
export function noAwardReason (offers: readonly OfferRow[], valid: number): string {
  return `none of the ${offers.length} best of ${valid} valid bidders accepted: ${offers.map(a => `${shortPeerId(a.winner)} ${a.outcome}${a.reason != null ? ` (${a.reason})` : ''}`).join('; ')}`
}

function mib (bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`
}

function usd (micro: bigint): string {
  return `${microToUsd(micro).toFixed(2)} USD/GPU-h`
}
