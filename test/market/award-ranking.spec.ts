import { signedTestBid } from './fixtures.js'
import * as assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { MAX_BYTES } from '../../protocols/codec.js'
import { DOMAIN } from '../../protocols/ids.js'
import { Award } from '../../protocols/market.js'
import { sealEnvelope, type Signed } from '../../src/identity/index.js'
import { checkAwardRanking, readAward } from '../../src/market/shared/award-check.js'
import { buildAward } from '../../src/market/renter/award-offers.js'
import { isMessageError } from '../../src/market/errors.js'
import { parseJobSpec, toJobRequest } from '../../src/market/renter/job-spec.js'
import { openMarketEnvelope, type Bid, type JobRequest } from '../../src/market/shared/messages.js'
import { DEFAULT_RANKING, auditAward, bidsDigest, rankBids, selectValidBids } from '../../src/market/shared/ranking.js'
import { fixedReputation, neutralReputation } from '../../src/market/shared/reputation.js'
import { recordAttack } from '../utils/index.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

// Awards carry what the ranking used (issue 12, item 3): with personal reputation an auditor's
// view of the bidders differs from the renter's, so the award says which reliabilities, round
// trips and weights the renter ranked with, and anyone holding the bids re-derives the winner.

interface Party { key: Ed25519PrivateKey, peerId: PeerId }
async function party (): Promise<Party> {
  const key = await generateKeyPair('Ed25519')
  return { key, peerId: peerIdFromPrivateKey(key) }
}

describe('awards carry their ranking inputs (issue 12.3)', () => {
  let renter: Party
  let providers: Party[]
  let job: JobRequest
  let bids: Array<Signed<Bid>>
  /** the renter's own (personal) view of the bidders */
  const view = (ids: string[]): ReturnType<typeof fixedReputation> =>
    fixedReputation({ [ids[0]]: 0.61, [ids[1]]: 0.93, [ids[2]]: 0.5, [ids[3]]: 0.777777 })

  before(async () => {
    renter = await party()
    providers = await Promise.all(Array.from({ length: 4 }, party))
    job = toJobRequest(parseJobSpec({ runtime: { image: 'ghcr.io/acme/eval:1' }, auction: { pricing: 'second-price' } }), { renter: renter.peerId.toMultihash().bytes, now: Date.now() })
    bids = [
      signedTestBid(providers[0], job, 1.0, { simulated: false }),
      signedTestBid(providers[1], job, 1.4, { simulated: false }),
      signedTestBid(providers[2], job, 0.9, { simulated: false }),
      signedTestBid(providers[3], job, 1.2, { simulated: false })
    ]
  })

  function renterAward (attempt = 1): { award: Award, ranked: ReturnType<typeof rankBids> } {
    const ctx = { reputation: view(providers.map(p => p.peerId.toString())) }
    const { valid } = selectValidBids(bids, job, ctx, Date.now())
    const ranked = rankBids(valid, job, ctx)
    return {
      award: buildAward(
        { job, ranked, digest: bidsDigest(valid), acceptTimeoutMs: 3_000, params: DEFAULT_RANKING },
        attempt - 1
      ),
      ranked
    }
  }

  it('the award names every ranked bid with the reliability the renter used and the weights; anyone with the bids re-derives winner, order and price', () => {
    const { award, ranked } = renterAward()
    assert.equal(award.ranking.length, 4)
    assert.deepEqual(award.ranking.map(i => i.reliabilityPpm), ranked.map(r => Math.round(r.reliability * 1e6)))
    assert.deepEqual(
      [award.reliabilityWeightPpm, award.latencyWeightPpm, award.localityWeightPpm],
      [2_000_000, 100_000, 200_000]
    )
    const check = checkAwardRanking(award, bids, job)
    assert.deepEqual(check.problems, [])
    assert.equal(check.expectedWinner, ranked[0].provider)
    // an auditor with its own (here neutral) view would have blamed an honest award
    assert.equal(auditAward(award, bids, { job, reputation: neutralReputation() }).ok, false)
    // and the second offer of the same auction checks too
    assert.deepEqual(checkAwardRanking(renterAward(2).award, bids, job).problems, [])
  })

  it('red team: a renter that misstates the ranking is caught by the award check', () => {
    const { award, ranked } = renterAward()
    const problems: string[] = []
    // 1. inputs reordered to put a friend first, with the reliabilities it really used
    const reordered: Award = {
      ...award,
      ranking: [award.ranking[1], award.ranking[0], ...award.ranking.slice(2)],
      winner: ranked[1].bid.signer.toMultihash().bytes,
      winnerBidHash: ranked[1].bid.hash
    }
    const r1 = checkAwardRanking(reordered, bids, job)
    assert.ok(r1.problems.includes('the ranking inputs are not in the order the rule gives them'), r1.problems.join('; '))
    problems.push(...r1.problems)
    // 2. a better bid left out of the inputs
    const missing: Award = { ...award, ranking: award.ranking.slice(0, 3) }
    const r2 = checkAwardRanking(missing, bids, job)
    assert.ok(r2.problems.some(p => /1 valid bids are missing/.test(p)), r2.problems.join('; '))
    // 3. an input naming a bid nobody saw
    const ghost: Award = {
      ...award,
      ranking: [...award.ranking, { bidHash: new Uint8Array(32).fill(7), reliabilityPpm: 1_000_000 }]
    }
    assert.ok(checkAwardRanking(ghost, bids, job).problems.some(p => /not a bid seen/.test(p)))
    // 4. an award without inputs cannot be re-derived
    assert.deepEqual(checkAwardRanking({ ...award, ranking: [] }, bids, job).problems, ['the award carries no ranking inputs'])
    recordAttack({ issue: '12.3', attack: 'renter misstates its ranking in an award (reorders inputs, omits a bid, invents one)', got: `caught: ${r1.ok || r2.ok ? 'NO' : 'yes'} (${problems.length} problems on the reordered award)`, limit: 'checkAwardRanking re-derives the winner from the award and the bids' })
  })

  it('wire rules: inputs within bounds, one per bid, the winning bid at rank `attempt`; an award without inputs still reads', () => {
    const { award } = renterAward()
    const read = (a: Award): Award =>
      readAward(
        openMarketEnvelope(
          sealEnvelope(renter.key, renter.peerId, DOMAIN.award, Award.encode(a)),
          DOMAIN.award,
          MAX_BYTES.award
        )
      ).message
    assert.equal(read(award).ranking.length, 4)
    assert.equal(
      read({ ...award, ranking: [], reliabilityWeightPpm: 0, latencyWeightPpm: 0, localityWeightPpm: 0 }).ranking
        .length,
      0
    )
    const bad = (a: Award, message: RegExp): void => {
      assert.throws(
        () => read(a),
        (err: unknown) => isMessageError(err) && message.test(err.message)
      )
    }
    bad({ ...award, ranking: [{ ...award.ranking[0], reliabilityPpm: 1_000_001 }, ...award.ranking.slice(1)] }, /above 1 000 000/)
    bad({ ...award, ranking: [award.ranking[0], award.ranking[0]] }, /one bid twice/)
    bad({ ...award, ranking: [{ ...award.ranking[0], bidHash: new Uint8Array(5) }] }, /bid_hash/)
    bad({ ...award, localityWeightPpm: 1_000_000 }, /weights out of bounds/)
    bad({ ...award, ranking: award.ranking.slice(1) }, /winning bid at rank 1/)
    // more than 72 inputs do not decode
    const many = Array.from({ length: 73 }, (_, i) => ({ bidHash: new Uint8Array(32).fill(i), reliabilityPpm: 0 }))
    assert.throws(() => read({ ...award, ranking: many }), (err: unknown) => isMessageError(err))
  })
})
