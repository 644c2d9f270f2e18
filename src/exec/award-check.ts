/**
 * What the provider checks in a Start frame before it runs anything: the award and the job
 * request it answers both verify, are signed by the same renter, match each other, name this
 * provider as winner, and have not expired.
 */
import { LIMITS, MAX_BYTES, MAX_CLOCK_SKEW_MS, decodeBounded, envelopeMaxBytes } from '../../protocols/codec.js'
import { DOMAIN } from '../../protocols/ids.js'
import { Award, JobRequest } from '../../protocols/market.js'
import { messageHash, openEnvelope } from '../identity/index.js'
import { equals as bytesEqual } from 'uint8arrays/equals'
import { toHex } from '../common/index.js'
import type { Tier } from '../capability/index.js'
import type { PeerId } from '@libp2p/interface'

export class AwardCheckError extends Error {
  static readonly code = 'ERR_AWARD_CHECK'
  readonly code = AwardCheckError.code
  /** the Rejected code to answer with */
  readonly rejection: 'NOT_AWARDED' | 'BAD_AWARD'

  constructor (rejection: 'NOT_AWARDED' | 'BAD_AWARD', message: string) {
    super(message)
    this.name = 'AwardCheckError'
    this.rejection = rejection
  }
}

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
  /** "<job id hex>/<auction nonce>/<attempt>": one run per award attempt */
  attemptKey: string
}

export function tierName (tier: JobRequest.Tier): Tier | undefined {
  switch (tier) {
    case JobRequest.Tier.GOLD: return 'gold'
    case JobRequest.Tier.SILVER: return 'silver'
    case JobRequest.Tier.BRONZE: return 'bronze'
    default: return undefined
  }
}

/** Opens an award envelope (signature, domain, bounds) without judging whom it names. */
export function openAward (bytes: Uint8Array): { award: Award, signer: PeerId, hash: Uint8Array } {
  let opened
  try {
    opened = openEnvelope(bytes, { domain: DOMAIN.award, maxBytes: envelopeMaxBytes(MAX_BYTES.award) })
  } catch (err: any) {
    throw new AwardCheckError('BAD_AWARD', `award does not verify: ${String(err?.message ?? err)}`)
  }
  try {
    const award = decodeBounded(Award, opened.payload, 'award', MAX_BYTES.award, LIMITS.award)
    return { award, signer: opened.signer, hash: messageHash(DOMAIN.award, opened.payload) }
  } catch (err: any) {
    throw new AwardCheckError('BAD_AWARD', err.message)
  }
}

export function verifyAward (awardBytes: Uint8Array, jobRequestBytes: Uint8Array, me: PeerId, now = Date.now()): VerifiedAward {
  const { award, signer, hash } = openAward(awardBytes)
  let jr
  try {
    jr = openEnvelope(jobRequestBytes, { domain: DOMAIN.jobRequest, maxBytes: envelopeMaxBytes(MAX_BYTES.jobRequest) })
  } catch (err: any) {
    throw new AwardCheckError('BAD_AWARD', `job request does not verify: ${String(err?.message ?? err)}`)
  }
  let jobRequest: JobRequest
  try {
    jobRequest = decodeBounded(JobRequest, jr.payload, 'job request', MAX_BYTES.jobRequest, LIMITS.jobRequest)
  } catch (err: any) {
    throw new AwardCheckError('BAD_AWARD', err.message)
  }
  const bad = (ok: boolean, message: string): void => { if (!ok) throw new AwardCheckError('BAD_AWARD', message) }
  bad(signer.equals(jr.signer), 'award and job request are signed by different peers')
  bad(bytesEqual(jobRequest.renter, signer.toMultihash().bytes), 'job request names another renter than its signer')
  bad(bytesEqual(award.renter, signer.toMultihash().bytes), 'award names another renter than its signer')
  bad(bytesEqual(award.jobId, jobRequest.jobId) && award.jobId.length === 16, 'award is for another job')
  bad(award.jobNonce.length === 0 || bytesEqual(award.jobNonce, jobRequest.nonce), 'award closes another auction of the job')
  bad(Number(award.expiresAt) > now, 'award has expired')
  bad(Number(award.createdAt) <= now + MAX_CLOCK_SKEW_MS, 'award is from the future')
  const tier = tierName(jobRequest.tier)
  bad(tier != null, 'job request has no tier')
  if (!bytesEqual(award.winner, me.toMultihash().bytes)) throw new AwardCheckError('NOT_AWARDED', 'the award names another provider as winner')
  const jobIdHex = toHex(award.jobId)
  return { award, awardEnvelope: awardBytes, awardHash: hash, jobRequest, jobRequestEnvelope: jobRequestBytes, renter: signer, tier: tier as Tier, jobIdHex, attemptKey: `${jobIdHex}/${toHex(award.jobNonce).slice(0, 16)}/${award.attempt}` }
}
