/**
 * bids-audit.json (issue 41 point 3): what the winner of a second-price award reads from the
 * renter's `/idlegrid/bids-audit/1.0.0` to learn the award's price. The response holds the job
 * request and the committed bids; a winner learns the price only when the set is the one the
 * award commits to (digest, count) and the award's ranking and clearing price follow from it with
 * the award's own figures (protocols/README.md §7 "Auction", price learning).
 */

import { BidsAuditResponse } from '../../../protocols/market.js'
import { SIGNING_PREFIX } from '../../../protocols/ids.js'
import { buildAward } from '../../../src/market/renter/award-offers.js'
import { parseJobSpec, toJobRequest } from '../../../src/market/renter/job-spec.js'
import { signAward, signBid, signJobRequest, usdToMicro, type Award, type JobRequest } from '../../../src/market/shared/messages.js'
import { bidsDigest, DEFAULT_RANKING, rankBids, selectValidBids } from '../../../src/market/shared/ranking.js'
import { fixedReputation } from '../../../src/market/shared/reputation.js'
import { accept, keyEntry, NOW, party, reject, type Party } from './build.js'
import { VECTOR_FORMAT, type Vector, type VectorFile } from './format.js'
import type { Signed } from '../../../src/identity/index.js'

const JOB_ID = Uint8Array.from(Buffer.from('7a1c5e0b3d9f4a2e8c6b1d0f9e8a7c6b', 'hex'))
const NONCE = Uint8Array.from(Buffer.from('00112233445566778899aabbccddeeff', 'hex'))

function bidOf (p: Party, job: JobRequest, usd: number, at: number): ReturnType<typeof signBid> {
  return signBid(p.key, p.peerId, {
    jobId: job.jobId,
    provider: p.id,
    priceMicroUsd: usdToMicro(usd),
    gpuModel: 'h100-80gb',
    vramMib: 81920,
    region: 'eu-west',
    residency: 'eu',
    createdAt: BigInt(at),
    expiresAt: BigInt(at + 60_000),
    capabilitySeq: 1n,
    jobNonce: job.nonce,
    simulated: false,
    cachedDatasets: 0,
    addrs: []
  })
}

/** The award's time fields fixed to the file's clock (buildAward reads the wall clock). */
function fixed (award: Award): Award {
  return {
    ...award,
    createdAt: BigInt(NOW + 2_000),
    acceptDeadline: BigInt(NOW + 5_000),
    expiresAt: BigInt(NOW + 65_000)
  }
}

export async function makeBidsAudit (): Promise<VectorFile> {
  const [alice, bob, carol, dave] = await Promise.all(['alice', 'bob', 'carol', 'dave'].map(party))
  const job: JobRequest = { ...toJobRequest(parseJobSpec({ runtime: { image: 'ghcr.io/acme/eval:1' }, auction: { pricing: 'second-price', bidWindowMs: 1_000 } }), { renter: alice.id, jobId: JOB_ID, now: NOW }), nonce: NONCE }
  const signedJob = signJobRequest(alice.key, alice.peerId, job)
  const bids = [bidOf(bob, job, 1.0, NOW + 100), bidOf(carol, job, 1.2, NOW + 200), bidOf(dave, job, 1.5, NOW + 300)]
  // the renter's own view of the bidders: the award carries it, so anyone re-derives the ranking
  const ctx = {
    reputation: fixedReputation({
      [bob.peerId.toString()]: 0.8,
      [carol.peerId.toString()]: 0.9,
      [dave.peerId.toString()]: 0.6
    })
  }
  const { valid } = selectValidBids(bids, job, ctx, NOW + 1_000)
  const ranked = rankBids(valid, job, ctx)
  const award = signAward(
    alice.key,
    alice.peerId,
    fixed(buildAward({ job, ranked, digest: bidsDigest(valid), acceptTimeoutMs: 3_000, params: DEFAULT_RANKING }, 0))
  )
  const overpaid = signAward(alice.key, alice.peerId, {
    ...award.message,
    clearingPriceMicroUsd: award.message.clearingPriceMicroUsd + 50_000n
  })
  const response = (served: Array<Signed<unknown>>): Uint8Array =>
    BidsAuditResponse.encode({ jobRequest: signedJob.envelope, bids: served.map(b => b.envelope) })
  const base = (awardEnvelope: Uint8Array) => ({ type: 'BidsAuditResponse', check: { kind: 'bids-audit' as const, award: Buffer.from(awardEnvelope).toString('hex') } })
  const vectors: Vector[] = [
    accept({ name: 'second-price-audit-teaches-the-price', ...base(award.envelope), bytes: response(valid), note: `the winner (${ranked[0].provider.slice(-8)}) learns ${award.message.clearingPriceMicroUsd} micro-USD: the runner-up's score at the winner's reliability, re-derived from the served bids with the award's RankingInputs` }, BidsAuditResponse),
    reject({ name: 'second-price-audit-bid-withheld', ...base(award.envelope), bytes: response(valid.slice(0, 2)), stage: 'rule', note: 'one committed bid not served: digest and count differ, nothing is learnt' }, 'audit-does-not-hold', BidsAuditResponse),
    reject({ name: 'second-price-audit-price-not-the-rule', ...base(overpaid.envelope), bytes: response(valid), stage: 'rule', note: 'an award paying 0.05 USD more than the rule gives from the same bids: nothing is learnt' }, 'audit-does-not-hold', BidsAuditResponse)
  ]
  return {
    format: VECTOR_FORMAT,
    description: 'bids audit answers (/idlegrid/bids-audit/1.0.0) as the winner of a second-price award reads them to learn its price',
    now: NOW + 2_500,
    signingPrefix: SIGNING_PREFIX,
    keys: { alice: keyEntry(alice), bob: keyEntry(bob), carol: keyEntry(carol), dave: keyEntry(dave) },
    vectors
  }
}
