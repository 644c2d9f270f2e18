/**
 * The bids an award was chosen from, kept by its renter and served to anyone holding the award
 * (/idlegrid/bids-audit/1.0.0). Bids no longer travel on gossip, so nobody but the renter has
 * them; the award commits to them (bids_digest: sha256 over the sorted bid hashes, and
 * valid_bids: their count), so the renter can neither add nor hide one afterwards, and an
 * auditor re-runs the ranking from the award's inputs (checkAwardRanking).
 */

import { equals } from 'uint8arrays/equals'
import { decodeBounded, LIMITS, MAX_BYTES } from '../../../protocols/codec.js'
import { DOMAIN, PROTOCOL } from '../../../protocols/ids.js'
import { BidsAuditRequest, BidsAuditResponse } from '../../../protocols/market.js'
import { toHex } from '../../common/index.js'
import { requestOnce, type RequestDialer } from '../../node/index.js'
import { checkAwardForJob, checkAwardRanking, openAward } from './award-check.js'
import { messageError } from '../errors.js'
import { openMarketEnvelope, readBid, readJobRequest, type Award, type Bid, type JobRequest } from './messages.js'
import { bidsDigest, type AwardAudit } from './ranking.js'
import type { Signed } from '../../identity/index.js'
import type { PeerId } from '@libp2p/interface'

/** Auctions whose bids a renter keeps for audit; the oldest are forgotten first. */
export const MAX_AUDITED_AUCTIONS = 256

interface AuditedAuction {
  job: Signed<JobRequest>
  bids: ReadonlyArray<Signed<Bid>>
  digest: Uint8Array
}

function auctionKey (jobId: Uint8Array, nonce: Uint8Array): string {
  return `${toHex(jobId)}/${toHex(nonce)}`
}

/** The renter's memory of its auctions' valid bids, and the audit protocol's answers. */
export class BidsAuditStore {
  private readonly auctions = new Map<string, AuditedAuction>()

  constructor (private readonly me: PeerId, private readonly max = MAX_AUDITED_AUCTIONS) {}

  get size (): number {
    return this.auctions.size
  }

  /** Keeps the valid bids an auction's awards commit to (the set bidsDigest was taken over). */
  keep (job: Signed<JobRequest>, valid: ReadonlyArray<Signed<Bid>>): void {
    const key = auctionKey(job.message.jobId, job.message.nonce)
    this.auctions.delete(key)
    this.auctions.set(key, { job, bids: [...valid], digest: bidsDigest(valid) })
    if (this.auctions.size > this.max) this.auctions.delete(this.auctions.keys().next().value as string)
  }

  /**
   * Answers an audit request: the award must be this renter's own (it verifies and is signed
   * by this node) and its auction still remembered. MarketError ERR_MARKET_MESSAGE otherwise (the stream
   * is then aborted: nothing is said about auctions the asker cannot name by their award).
   */
  answer (request: Uint8Array): Uint8Array {
    const { award: envelope } = decodeBounded(BidsAuditRequest, request, 'bids audit request', MAX_BYTES.bidsAuditRequest)
    const award = openAward(envelope)
    if (!award.signer.equals(this.me)) throw messageError('wrong-signer', 'the award is not this renter\'s')
    const auction = this.auctions.get(auctionKey(award.message.jobId, award.message.jobNonce))
    if (auction == null) throw messageError('unknown-auction', 'no bids kept for this award\'s auction')
    if (!equals(auction.digest, award.message.bidsDigest)) throw messageError('wrong-digest', 'the award commits to other bids than those kept')
    return BidsAuditResponse.encode({ jobRequest: auction.job.envelope, bids: auction.bids.map(b => b.envelope) })
  }
}

/**
 * Asks the renter of `award` for the bids it was chosen from (the raw response, for
 * verifyBidsAudit). A holder of the award may know the renter by id only: dial with lookupFirst.
 */
export async function fetchBidsAudit (
  connectionManager: RequestDialer,
  award: Signed<Award>,
  signal: AbortSignal
): Promise<Uint8Array> {
  return await requestOnce(connectionManager, award.signer, {
    protocol: PROTOCOL.bidsAudit,
    request: BidsAuditRequest.encode({ award: award.envelope }),
    maxResponseBytes: MAX_BYTES.bidsAuditResponse,
    signal
  })
}

export interface BidsAuditResult extends AwardAudit {
  job?: Signed<JobRequest>
  bids: Array<Signed<Bid>>
}

/**
 * Checks a renter's audit response against `award`: the job request verifies and is the one
 * the award closes, every bid verifies (expiry aside: the audit comes later), the bids are
 * exactly the committed set (digest and count), and the award's ranking follows from them
 * (checkAwardRanking). `ok` only when all of it holds; `problems` says what did not.
 */
export function verifyBidsAudit (award: Signed<Award>, response: Uint8Array, now = Date.now()): BidsAuditResult {
  const fail = (problem: string, bids: Array<Signed<Bid>> = [], job?: Signed<JobRequest>): BidsAuditResult => ({
    ok: false,
    problems: [problem],
    validBids: bids.length,
    digestMatches: false,
    rankingVerifiable: false,
    rankedBidHashes: [],
    bids,
    job
  })
  let decoded: BidsAuditResponse
  try {
    decoded = decodeBounded(BidsAuditResponse, response, 'bids audit response', MAX_BYTES.bidsAuditResponse, LIMITS.bidsAuditResponse)
  } catch (err: any) {
    return fail(`the response does not decode: ${String(err?.message ?? err)}`)
  }
  let job: Signed<JobRequest>
  try {
    job = readJobRequest(openMarketEnvelope(decoded.jobRequest, DOMAIN.jobRequest, MAX_BYTES.jobRequest), now, {
      expiry: false
    })
    checkAwardForJob(award, job)
  } catch (err: any) {
    return fail(`job request: ${String(err?.message ?? err)}`)
  }
  const bids: Array<Signed<Bid>> = []
  for (const [i, bytes] of decoded.bids.entries()) {
    try {
      bids.push(readBid(openMarketEnvelope(bytes, DOMAIN.bid, MAX_BYTES.bid), now, { expiry: false }))
    } catch (err: any) {
      return fail(`bid ${i}: ${String(err?.message ?? err)}`, bids, job)
    }
  }
  const problems: string[] = []
  if (!equals(bidsDigest(bids), award.message.bidsDigest)) problems.push('the bids served are not the set the award commits to (bids_digest)')
  if (bids.length !== award.message.validBids) problems.push(`the award commits to ${award.message.validBids} bids, ${bids.length} were served`)
  const ranking = checkAwardRanking(award.message, bids, job.message)
  problems.push(...ranking.problems)
  return { ...ranking, ok: problems.length === 0, problems, bids, job }
}
