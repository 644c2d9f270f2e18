/**
 * Unit tests of the price-learning rules (issue 13 item 3): which awards teach a clearing price
 * (clearing-check.ts), one sample per renter (bid-engine.ts), and the bounded pull of the
 * samples on a bid (pricing.ts).
 */
import * as assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { parseSimulatedGpus } from '../../src/capability/gpu/simulated-gpus.js'
import { parsePolicy } from '../../src/capability/policy/policy.js'
import { providerProfile } from '../../src/capability/policy/profile.js'
import { BidEngine } from '../../src/market/provider/bid-engine.js'
import { clearingSample } from '../../src/market/provider/clearing-check.js'
import { isClearingSampleError } from '../../src/market/errors.js'
import { parseJobSpec, toJobRequest } from '../../src/market/renter/job-spec.js'
import { PricingRule, signAward, signBid, signJobRequest, usdToMicro, type Award, type Bid, type JobRequest } from '../../src/market/shared/messages.js'
import { DEFAULT_PRICING, clearingNudge, quotePrice } from '../../src/market/provider/pricing.js'
import type { Signed } from '../../src/identity/index.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

interface Party { key: Ed25519PrivateKey, peerId: PeerId, bytes: Uint8Array }

async function party (): Promise<Party> {
  const key = await generateKeyPair('Ed25519')
  const peerId = peerIdFromPrivateKey(key)
  return { key, peerId, bytes: peerId.toMultihash().bytes }
}

describe('market: price learning (issue 13)', () => {
  let renter: Party
  let winner: Party
  let other: Party

  before(async () => {
    [renter, winner, other] = await Promise.all([party(), party(), party()])
  })

  function jobOf (over: Partial<JobRequest> = {}, pricing: 'first-price' | 'second-price' = 'first-price'): Signed<JobRequest> {
    const spec = parseJobSpec({ runtime: { image: 'ghcr.io/acme/eval:1' }, auction: { pricing } })
    return signJobRequest(renter.key, renter.peerId, { ...toJobRequest(spec, { renter: renter.bytes }), ...over })
  }

  function bidOf (job: JobRequest, by: Party, usd: number, over: Partial<Bid> = {}): Signed<Bid> {
    const now = Date.now()
    return signBid(by.key, by.peerId, {
      jobId: job.jobId,
      provider: by.bytes,
      priceMicroUsd: usdToMicro(usd),
      gpuModel: 'h100',
      vramMib: 81_920,
      region: '',
      residency: '',
      createdAt: BigInt(now),
      expiresAt: BigInt(now + 30_000),
      capabilitySeq: 0n,
      jobNonce: job.nonce,
      simulated: true,
      cachedDatasets: 0,
      addrs: [],
      ...over
    })
  }

  function awardOf (job: JobRequest, bid: Signed<Bid>, usd: number, over: Partial<Award> = {}): Signed<Award> {
    const now = Date.now()
    return signAward(renter.key, renter.peerId, {
      jobId: job.jobId,
      renter: renter.bytes,
      winner: bid.message.provider,
      clearingPriceMicroUsd: usdToMicro(usd),
      pricingRule: job.pricingRule,
      bidsDigest: new Uint8Array(32),
      runnerUp: [],
      ranking: [],
      reliabilityWeightPpm: 0,
      latencyWeightPpm: 0,
      localityWeightPpm: 0,
      acceptDeadline: BigInt(now + 3_000),
      createdAt: BigInt(now),
      expiresAt: BigInt(now + 60_000),
      attempt: 1,
      validBids: 1,
      winnerBidHash: bid.hash,
      jobNonce: job.nonce,
      ...over
    })
  }

  function refused (fn: () => unknown, reason: string, message: RegExp): void {
    assert.throws(fn, (err: unknown) => {
      assert.ok(isClearingSampleError(err), String(err))
      assert.equal(err.code, 'ERR_CLEARING_SAMPLE')
      assert.equal(err.reason, reason)
      assert.match(err.message, message)
      return true
    })
  }

  describe('clearing-check: which awards teach a price', () => {
    it('first price: teaches the winning bid\'s price when that bid was heard', () => {
      const job = jobOf()
      const bid = bidOf(job.message, winner, 2)
      assert.equal(clearingSample(awardOf(job.message, bid, 2), job, [bid]), usdToMicro(2))
    })

    it('refuses an award whose winning bid was never heard (made-up winner_bid_hash)', () => {
      const job = jobOf()
      const bid = bidOf(job.message, winner, 1000)
      refused(() => clearingSample(awardOf(job.message, bid, 1000), job, [bidOf(job.message, other, 2)]), 'unseen-bid', /never seen on the bids topic/)
    })

    it('refuses an award that names its own renter as winner', () => {
      const job = jobOf()
      const bid = bidOf(job.message, renter, 1000)
      refused(() => clearingSample(awardOf(job.message, bid, 1000), job, [bid]), 'self-award', /own renter/)
    })

    it('refuses an award whose pricing rule is not the job\'s', () => {
      const job = jobOf()
      const bid = bidOf(job.message, winner, 2)
      refused(() => clearingSample(awardOf(job.message, bid, 2, { pricingRule: PricingRule.SECOND_PRICE }), job, [bid]), 'rule-mismatch', /pricing rule/)
    })

    it('refuses an award whose winning bid is another provider\'s', () => {
      const job = jobOf()
      const bid = bidOf(job.message, other, 2)
      refused(() => clearingSample(awardOf(job.message, bid, 2, { winner: winner.bytes }), job, [bid]), 'wrong-bidder', /another provider/)
    })

    it('refuses an award whose winning bid is for another auction', () => {
      const job = jobOf()
      const bid = bidOf(job.message, winner, 2, { jobNonce: new Uint8Array(16).fill(7) })
      refused(() => clearingSample(awardOf(job.message, bid, 2), job, [bid]), 'other-auction', /another auction/)
    })

    it('refuses an award whose winning bid was made after the bid window', () => {
      const job = jobOf()
      const late = job.message.createdAt + BigInt(job.message.bidWindowMs) + 1n
      const bid = bidOf(job.message, winner, 2, { createdAt: late })
      refused(() => clearingSample(awardOf(job.message, bid, 2), job, [bid]), 'late-bid', /after the bid window/)
    })

    it('first price: refuses a clearing price other than the winning bid', () => {
      const job = jobOf()
      const bid = bidOf(job.message, winner, 2)
      refused(() => clearingSample(awardOf(job.message, bid, 1000), job, [bid]), 'price-not-bid', /first price pays the winning bid/)
    })

    it('second price: exactly the rule\'s price from the named runner-up\'s bid; no runner-up pays the bid', () => {
      const job = jobOf({}, 'second-price')
      const bid = bidOf(job.message, winner, 2)
      const runnerUp = bidOf(job.message, other, 3)
      const named = { runnerUp: [other.bytes] }
      assert.equal(clearingSample(awardOf(job.message, bid, 3, named), job, [bid, runnerUp]), usdToMicro(3))
      assert.equal(clearingSample(awardOf(job.message, bid, 2), job, [bid]), usdToMicro(2))
      refused(() => clearingSample(awardOf(job.message, bid, 1, named), job, [bid, runnerUp]), 'price-below-bid', /at least the winning bid/)
      refused(() => clearingSample(awardOf(job.message, bid, 3), job, [bid, runnerUp]), 'price-not-derived', /no runner-up named pays the winning bid/)
      refused(() => clearingSample(awardOf(job.message, bid, 3, named), job, [bid]), 'unseen-runner-up', /runner-up made no bid/)
      // the runner-up's kept bid is its lowest: a higher one of its bids does not raise the price
      const higher = bidOf(job.message, other, 5)
      assert.equal(clearingSample(awardOf(job.message, bid, 3, named), job, [bid, higher, runnerUp]), usdToMicro(3))
      refused(() => clearingSample(awardOf(job.message, bid, 5, named), job, [bid, higher, runnerUp]), 'price-not-derived', /is 3000000 micro-USD, the award says 5000000/)
      const capped = jobOf({ constraints: { ...(jobOf().message.constraints as NonNullable<JobRequest['constraints']>), maxPriceMicroUsd: usdToMicro(2.5) } }, 'second-price')
      const cappedBid = bidOf(capped.message, winner, 2)
      const cappedNext = bidOf(capped.message, other, 3)
      refused(() => clearingSample(awardOf(capped.message, cappedBid, 3, named), capped, [cappedBid, cappedNext]), 'price-above-max', /above the job's max price/)
      assert.equal(clearingSample(awardOf(capped.message, cappedBid, 2.5, named), capped, [cappedBid, cappedNext]), usdToMicro(2.5), 'capped at the max price')
    })

    it('second price, audited (issue 41 point 3): the price the renter\'s bids audit re-derived is taken; every other check still holds', () => {
      const job = jobOf({}, 'second-price')
      const bid = bidOf(job.message, winner, 2)
      const named = { runnerUp: [other.bytes] }
      assert.equal(
        clearingSample(awardOf(job.message, bid, 3.1, named), job, [bid], { priceAudited: true }),
        usdToMicro(3.1)
      )
      refused(() => clearingSample(awardOf(job.message, bid, 1, named), job, [bid], { priceAudited: true }), 'price-below-bid', /at least the winning bid/)
      refused(() => clearingSample(awardOf(job.message, bid, 3, named), job, [], { priceAudited: true }), 'unseen-bid', /never seen/)
    })

    it('second price: the locality term of both bids enters the derived price', () => {
      const digests = [new Uint8Array(32).fill(1), new Uint8Array(32).fill(2)]
      const job = jobOf({ datasetDigests: digests }, 'second-price')
      // the winner holds both datasets: factor 1/(1 − 0.2) against the runner-up's 1
      const bid = bidOf(job.message, winner, 2, { cachedDatasets: 2 })
      const runnerUp = bidOf(job.message, other, 2, { cachedDatasets: 0 })
      const named = { runnerUp: [other.bytes] }
      assert.equal(clearingSample(awardOf(job.message, bid, 2.5, named), job, [bid, runnerUp]), usdToMicro(2.5))
      refused(() => clearingSample(awardOf(job.message, bid, 2, named), job, [bid, runnerUp]), 'price-not-derived', /is 2500000 micro-USD/)
    })
  })

  describe('pricing: bounded pull of clearing prices', () => {
    const base = { floorMicroUsd: 1_000_000, tier: 'bronze' as const, utilization: 0, timeClass: 'normal' as const }
    const at = (usd: number, n = 1): Array<{ priceMicroUsd: number, tier: 'bronze' }> => Array.from({ length: n }, () => ({ priceMicroUsd: usd * 1e6, tier: 'bronze' }))

    it('clamps each sample into the band: however high, the bid rises at most clearingWeight × clearingBand', () => {
      const max = 1 + DEFAULT_PRICING.clearingWeight * DEFAULT_PRICING.clearingBand
      assert.equal(quotePrice({ ...base, recentClearing: at(1000, 20) }), Math.round(1_000_000 * max))
      assert.equal(quotePrice({ ...base, recentClearing: at(1_000_000, 1) }), Math.round(1_000_000 * max))
      assert.ok(max <= 1.10)
    })

    it('clamps low samples too: the nudge down is at most clearingWeight × band / (1 + band)', () => {
      const b = 4_000_000
      const nudge = clearingNudge(b, at(0.000001, 20))
      const band = DEFAULT_PRICING.clearingBand
      assert.ok(Math.abs(nudge + b * DEFAULT_PRICING.clearingWeight * band / (1 + band)) < 1e-6, String(nudge))
    })

    it('follows the median, so a minority of outliers moves nothing', () => {
      const honest = at(1.1, 5)
      assert.equal(
        quotePrice({ ...base, recentClearing: [...honest, ...at(1000, 4)] }),
        quotePrice({ ...base, recentClearing: honest })
      )
    })

    it('follows moderate clearing prices as before', () => {
      assert.equal(quotePrice({ ...base, recentClearing: at(1.1) }), Math.round(1_000_000 * (1 + 0.3 * 0.1)))
      assert.equal(clearingNudge(1_000_000, []), 0)
      assert.equal(clearingNudge(1_000_000, at(1000), { ...DEFAULT_PRICING, clearingBand: 0 }), 0)
    })
  })

  describe('bid engine: one sample per renter', () => {
    const profile = providerProfile(parsePolicy({ region: 'eu-west', priceFloor: 1, images: ['*'] }), parseSimulatedGpus(['H100:80']))
    const capacity = { freeSlots: () => 1, preemptibleSlots: () => 0, totalSlots: () => 1, thermalOk: () => true }

    it('keeps a renter\'s newest sample only, and forgets the oldest renter past the memory', () => {
      const engine = new BidEngine({ profile: () => profile, capacity, clearingMemory: 3 })
      for (let i = 1; i <= 20; i++) engine.observeClearing('sybil', usdToMicro(1000 + i), 'bronze')
      assert.deepEqual(engine.stats().recentClearingUsd, [1020])
      engine.observeClearing('a', usdToMicro(1), 'bronze')
      engine.observeClearing('b', usdToMicro(2), 'bronze')
      engine.observeClearing('c', usdToMicro(3), 'bronze')
      assert.deepEqual(engine.stats().recentClearingUsd, [1, 2, 3])
      engine.observeClearing('a', usdToMicro(4), 'bronze')
      assert.deepEqual(engine.stats().recentClearingUsd, [2, 3, 4])
    })
  })
})
