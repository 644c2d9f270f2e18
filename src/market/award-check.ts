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
 */

import { equals } from 'uint8arrays/equals'
import { LIMITS, MAX_BYTES, MAX_LIFETIME_MS } from '../../protocols/codec.js'
import { DOMAIN } from '../../protocols/ids.js'
import { Award, type JobRequest } from '../../protocols/market.js'
import { toHex } from '../common/index.js'
import { messageHash, type OpenedEnvelope, type Signed } from '../identity/index.js'
import { MarketMessageError } from './errors.js'
import { DIGEST_BYTES, ID_BYTES, bytesOf, decode, envelopeBytes, openMarketEnvelope, peerIdFromBytes, readJobRequest, sameSigner, tierOf, timeRules } from './messages.js'
import type { Tier } from '../capability/index.js'
import type { PeerId } from '@libp2p/interface'

/** The job stream's rejection codes an award check can end in (JobFrame.Rejected.Code names). */
export type AwardRejection = 'NOT_AWARDED' | 'BAD_AWARD'

/** An award that must not start a job; `rejection` is the code to answer the Start frame with. */
export class AwardCheckError extends Error {
  static readonly code = 'ERR_AWARD_CHECK'
  readonly code = AwardCheckError.code
  readonly rejection: AwardRejection

  constructor (rejection: AwardRejection, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'AwardCheckError'
    this.rejection = rejection
  }
}

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
  if (award.attempt < 1) throw new MarketMessageError('malformed', 'award attempt is 0')
}

/** The award's time rules at `now`. */
function awardTimes (award: Award, now: number): void {
  timeRules(award.createdAt, award.expiresAt, MAX_LIFETIME_MS.award, now, 'award')
  if (award.acceptDeadline > award.expiresAt) throw new MarketMessageError('lifetime', 'award accept deadline after its expiry')
}

/** Decodes and checks an Award payload (fields and time rules); MarketMessageError otherwise. */
export function readAward (opened: OpenedEnvelope, now = Date.now()): Signed<Award> {
  const award = decode(Award, opened.payload, 'award', MAX_BYTES.award, LIMITS.award)
  awardFields(award, opened.signer)
  awardTimes(award, now)
  return { message: award, signer: opened.signer, hash: messageHash(opened.domain, opened.payload), envelope: envelopeBytes(opened) }
}

/**
 * Opens award envelope bytes and checks its fields, not the clock: for reading an award this
 * node already judged (its own, or one it accepted). MarketMessageError otherwise.
 */
export function openAward (bytes: Uint8Array): Signed<Award> {
  const opened = openMarketEnvelope(bytes, DOMAIN.award, MAX_BYTES.award)
  const award = decode(Award, opened.payload, 'award', MAX_BYTES.award, LIMITS.award)
  awardFields(award, opened.signer)
  return { message: award, signer: opened.signer, hash: messageHash(opened.domain, opened.payload), envelope: bytes }
}

/** Whether `award` names `me` as its winner. */
export function isAwardedTo (award: Award, me: PeerId): boolean {
  return equals(award.winner, me.toMultihash().bytes)
}

/** Checks that `award` closes the auction `job` opened; MarketMessageError otherwise. */
export function checkAwardForJob (award: Signed<Award>, job: Signed<JobRequest>): void {
  if (!award.signer.equals(job.signer)) throw new MarketMessageError('wrong-signer', 'award and job request are signed by different peers')
  sameSigner(job.message.renter, award.signer, 'job request')
  if (!equals(award.message.jobId, job.message.jobId)) throw new MarketMessageError('wrong-job', 'award is for another job')
  if (award.message.jobNonce.length === 0 || !equals(award.message.jobNonce, job.message.nonce)) throw new MarketMessageError('wrong-job', 'award closes another auction of the job')
  tierOf(job.message)
}

/**
 * The Start frame's award check: the award (fields and time rules at `now`) and the job
 * request (fields; its own expiry is not required, the award's bounds the start) verify,
 * belong together, and name `me` as winner. AwardCheckError with `NOT_AWARDED` when the
 * award is good but for another provider, `BAD_AWARD` for everything else.
 */
export function verifyAwardForWinner (awardBytes: Uint8Array, jobRequestBytes: Uint8Array, me: PeerId, now = Date.now()): VerifiedAward {
  const bad = (what: string, err: unknown): AwardCheckError =>
    new AwardCheckError('BAD_AWARD', `${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
  let award: Signed<Award>
  let job: Signed<JobRequest>
  try {
    award = readAward(openMarketEnvelope(awardBytes, DOMAIN.award, MAX_BYTES.award), now)
  } catch (err) {
    throw bad('award does not verify', err)
  }
  try {
    job = readJobRequest(openMarketEnvelope(jobRequestBytes, DOMAIN.jobRequest, MAX_BYTES.jobRequest), now, { expiry: false })
  } catch (err) {
    throw bad('job request does not verify', err)
  }
  try {
    checkAwardForJob(award, job)
  } catch (err) {
    throw bad('award does not match its job request', err)
  }
  if (!isAwardedTo(award.message, me)) throw new AwardCheckError('NOT_AWARDED', 'the award names another provider as winner')
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
