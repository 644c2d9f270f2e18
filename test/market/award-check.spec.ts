import * as assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { DOMAIN } from '../../protocols/ids.js'
import { Award, JobRequest } from '../../protocols/market.js'
import { openEnvelope, sealEnvelope, sha256 } from '../../src/identity/index.js'
import { checkAwardForJob, openAward, readAward, verifyAwardForWinner } from '../../src/market/shared/award-check.js'
import { isAwardCheckError, isMessageError } from '../../src/market/errors.js'
import { parseJobSpec, toJobRequest } from '../../src/market/renter/job-spec.js'
import { openMarketEnvelope, signAward, signJobRequest } from '../../src/market/shared/messages.js'
import { AwardValidator } from '../../src/market/shared/validation.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

interface Party { key: Ed25519PrivateKey, peerId: PeerId }

async function party (): Promise<Party> {
  const key = await generateKeyPair('Ed25519')
  return { key, peerId: peerIdFromPrivateKey(key) }
}

/** A job request by `renter` and an award for it naming `winner`, as the renter's auction builds them. */
function awarded (
  renter: Party,
  winner: Party,
  award: Partial<Award> = {},
  now = Date.now(),
  jobOver: Partial<JobRequest> = {}
): { job: JobRequest, jobBytes: Uint8Array, award: Award, awardBytes: Uint8Array } {
  const job = { ...toJobRequest(parseJobSpec({ runtime: { image: 'ghcr.io/acme/eval:1' } }), { renter: renter.peerId.toMultihash().bytes, now }), ...jobOver }
  const a: Award = {
    jobId: job.jobId,
    renter: renter.peerId.toMultihash().bytes,
    winner: winner.peerId.toMultihash().bytes,
    clearingPriceMicroUsd: 1_000_000n,
    pricingRule: job.pricingRule,
    bidsDigest: sha256('bids'),
    runnerUp: [],
    ranking: [],
    reliabilityWeightPpm: 0,
    latencyWeightPpm: 0,
    localityWeightPpm: 0,
    acceptDeadline: BigInt(now + 3_000),
    createdAt: BigInt(now),
    expiresAt: BigInt(now + 63_000),
    attempt: 1,
    validBids: 1,
    winnerBidHash: sha256('bid'),
    jobNonce: job.nonce,
    ...award
  }
  return {
    job,
    jobBytes: signJobRequest(renter.key, renter.peerId, job).envelope,
    award: a,
    awardBytes: sealEnvelope(renter.key, renter.peerId, DOMAIN.award, Award.encode(a))
  }
}

function rejects (rejection: 'BAD_AWARD' | 'NOT_AWARDED', message: RegExp): (err: unknown) => boolean {
  return (err) => isAwardCheckError(err) && err.rejection === rejection && message.test(err.message)
}

describe('the award check', () => {
  let renter: Party
  let winner: Party
  let other: Party

  before(async () => {
    [renter, winner, other] = await Promise.all([party(), party(), party()])
  })

  it('verifies a good award for its winner, with what the job stream needs', () => {
    const a = awarded(renter, winner)
    const v = verifyAwardForWinner(a.awardBytes, a.jobBytes, winner.peerId)
    assert.ok(v.renter.equals(renter.peerId))
    assert.equal(v.tier, 'silver')
    assert.deepEqual(v.jobRequest.jobId, a.job.jobId)
    assert.deepEqual(v.awardEnvelope, a.awardBytes)
    assert.equal(v.awardHash.length, 32)
    // a job is its renter's: the attempt key names the renter
    assert.match(v.attemptKey, new RegExp(`^${renter.peerId.toString()}/[0-9a-f]{32}/[0-9a-f]{16}/1$`))
  })

  it('says NOT_AWARDED when a good award names another provider', () => {
    const a = awarded(renter, winner)
    assert.throws(() => verifyAwardForWinner(a.awardBytes, a.jobBytes, other.peerId), rejects('NOT_AWARDED', /another provider/))
  })

  it('rejects an award with an empty job nonce (BAD_AWARD)', () => {
    const a = awarded(renter, winner, { jobNonce: new Uint8Array(0) })
    assert.throws(() => verifyAwardForWinner(a.awardBytes, a.jobBytes, winner.peerId), rejects('BAD_AWARD', /job_nonce/))
  })

  it('rejects an award for another auction of the same job (BAD_AWARD)', () => {
    const a = awarded(renter, winner, { jobNonce: new Uint8Array(16).fill(7) })
    assert.throws(() => verifyAwardForWinner(a.awardBytes, a.jobBytes, winner.peerId), rejects('BAD_AWARD', /another auction/))
  })

  it('rejects an expired award, one from the future and one living too long (BAD_AWARD)', () => {
    const now = Date.now()
    const expired = awarded(renter, winner, {
      createdAt: BigInt(now - 120_000),
      acceptDeadline: BigInt(now - 100_000),
      expiresAt: BigInt(now - 1)
    })
    assert.throws(() => verifyAwardForWinner(expired.awardBytes, expired.jobBytes, winner.peerId, now), rejects('BAD_AWARD', /expired/))
    const future = awarded(renter, winner, {
      createdAt: BigInt(now + 60_000),
      acceptDeadline: BigInt(now + 63_000),
      expiresAt: BigInt(now + 120_000)
    })
    assert.throws(() => verifyAwardForWinner(future.awardBytes, future.jobBytes, winner.peerId, now), rejects('BAD_AWARD', /future/))
    const long = awarded(renter, winner, { expiresAt: BigInt(now + 11 * 60_000) }, now)
    assert.throws(() => verifyAwardForWinner(long.awardBytes, long.jobBytes, winner.peerId, now), rejects('BAD_AWARD', /lifetime/))
    const lateDeadline = awarded(renter, winner, { acceptDeadline: BigInt(now + 120_000) }, now)
    assert.throws(() => verifyAwardForWinner(lateDeadline.awardBytes, lateDeadline.jobBytes, winner.peerId, now), rejects('BAD_AWARD', /deadline/))
  })

  it('rejects an award and a job request signed by different peers, or for different jobs (BAD_AWARD)', () => {
    const a = awarded(renter, winner)
    const b = awarded(other, winner)
    assert.throws(() => verifyAwardForWinner(b.awardBytes, a.jobBytes, winner.peerId), rejects('BAD_AWARD', /different peers/))
    const c = awarded(renter, winner)
    assert.throws(() => verifyAwardForWinner(c.awardBytes, a.jobBytes, winner.peerId), rejects('BAD_AWARD', /another job/))
  })

  it('rejects a job request without a tier, and bytes that are not an award (BAD_AWARD)', () => {
    const a = awarded(renter, winner)
    const noTier = sealEnvelope(
      renter.key,
      renter.peerId,
      DOMAIN.jobRequest,
      JobRequest.encode({ ...a.job, tier: JobRequest.Tier.TIER_UNSPECIFIED })
    )
    assert.throws(() => verifyAwardForWinner(a.awardBytes, noTier, winner.peerId), rejects('BAD_AWARD', /tier/))
    assert.throws(() => verifyAwardForWinner(a.jobBytes, a.jobBytes, winner.peerId), rejects('BAD_AWARD', /award does not verify/))
  })

  it('still starts the job of an award whose job request expired (the award bounds the start)', () => {
    const now = Date.now()
    const a = awarded(renter, winner, {}, now - 4 * 60_000)
    const fresh = {
      ...a.award,
      createdAt: BigInt(now),
      acceptDeadline: BigInt(now + 3_000),
      expiresAt: BigInt(now + 63_000)
    }
    const awardBytes = sealEnvelope(renter.key, renter.peerId, DOMAIN.award, Award.encode(fresh))
    assert.ok(Number(a.job.expiresAt) < now, 'the job request expired')
    assert.equal(verifyAwardForWinner(awardBytes, a.jobBytes, winner.peerId, now).tier, 'silver')
  })

  it('is the rule gossip validation and the accept answer apply', () => {
    const now = Date.now()
    const good = awarded(renter, winner)
    const empty = awarded(renter, winner, { jobNonce: new Uint8Array(0) })
    const opened = (bytes: Uint8Array): ReturnType<typeof openEnvelope> =>
      openEnvelope(bytes, { domain: DOMAIN.award, maxBytes: 16 * 1024 })
    assert.equal(new AwardValidator().validate(opened(good.awardBytes), now).action, 'accept')
    assert.deepEqual(new AwardValidator().validate(opened(empty.awardBytes), now), { action: 'reject', reason: 'malformed' })
    assert.throws(() => readAward(opened(empty.awardBytes), now), (err: unknown) => isMessageError(err) && err.reason === 'malformed')
    // the accept answer checks the award against the job request it remembers
    const job = { message: good.job, signer: renter.peerId, hash: new Uint8Array(32), envelope: good.jobBytes }
    assert.doesNotThrow(() => { checkAwardForJob(readAward(opened(good.awardBytes), now), job) })
    const foreign = signAward(other.key, other.peerId, { ...good.award, renter: other.peerId.toMultihash().bytes })
    assert.throws(() => { checkAwardForJob(foreign, job) }, (err: unknown) => isMessageError(err) && err.reason === 'wrong-signer')
  })

  it('knows a job by its renter: another signer\'s award with the same job id and nonce has its own attempt and staleness', () => {
    const now = Date.now()
    const mine = awarded(renter, winner, { attempt: 1 }, now)
    const copy = awarded(other, winner, { attempt: 8 }, now, { jobId: mine.job.jobId, nonce: mine.job.nonce })
    const opened = (bytes: Uint8Array): ReturnType<typeof openEnvelope> =>
      openEnvelope(bytes, { domain: DOMAIN.award, maxBytes: 16 * 1024 })
    const a = verifyAwardForWinner(mine.awardBytes, mine.jobBytes, winner.peerId, now)
    const b = verifyAwardForWinner(copy.awardBytes, copy.jobBytes, winner.peerId, now)
    assert.equal(a.jobIdHex, b.jobIdHex)
    assert.notEqual(a.attemptKey, b.attemptKey.replace(/\/8$/, '/1'))
    // the copy's attempt 8 does not make the renter's attempt 1 stale on a relay
    const validator = new AwardValidator()
    assert.equal(validator.validate(opened(copy.awardBytes), now).action, 'accept')
    assert.equal(validator.validate(opened(mine.awardBytes), now).action, 'accept')
    const mine2 = sealEnvelope(
      renter.key,
      renter.peerId,
      DOMAIN.award,
      Award.encode({ ...mine.award, attempt: 1, createdAt: BigInt(now + 1) })
    )
    assert.deepEqual(validator.validate(opened(mine2), now), { action: 'ignore', reason: 'stale-attempt' })
  })

  it('opens an award without the clock for reading one already judged', () => {
    const now = Date.now()
    const old = awarded(renter, winner, {
      createdAt: BigInt(now - 120_000),
      acceptDeadline: BigInt(now - 100_000),
      expiresAt: BigInt(now - 1)
    })
    const award = openAward(old.awardBytes)
    assert.ok(award.signer.equals(renter.peerId))
    assert.deepEqual(award.envelope, old.awardBytes)
    assert.throws(
      () => openAward(awarded(renter, winner, { jobNonce: new Uint8Array(0) }).awardBytes),
      (err: unknown) => isMessageError(err)
    )
    assert.throws(() => openMarketEnvelope(old.awardBytes, DOMAIN.bid, 1024), (err: unknown) => isMessageError(err))
  })
})
