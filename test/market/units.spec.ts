import * as assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { parseSimulatedGpus } from '../../src/capability/gpu/simulated-gpus.js'
import { parsePolicy } from '../../src/capability/policy/policy.js'
import { providerProfile, type ProviderProfile } from '../../src/capability/policy/profile.js'
import { ConfigError } from '../../src/config/index.js'
import { openEnvelope, sealEnvelope } from '../../src/identity/index.js'
import type { Signed } from '../../src/identity/index.js'
import { applyJobFlags, parseJobSpec, readJobFile, toJobRequest, type JobSpec } from '../../src/market/renter/job-spec.js'
import { matchJob, type CapacitySnapshot } from '../../src/market/provider/bid-declines.js'
import { BidAck, DeclineReason, PricingRule, signAward, signBid, signJobRequest, usdToMicro } from '../../src/market/shared/messages.js'
import { answerBid } from '../../src/market/shared/bid-stream.js'
import { jobShardTopic } from '../../protocols/ids.js'
import { DEFAULT_PRICING, quotePrice, timeClassAt } from '../../src/market/provider/pricing.js'
import { auditAward, bidsDigest, clearingPrice, rankBids, selectValidBids } from '../../src/market/shared/ranking.js'
import { fixedReputation } from '../../src/market/shared/reputation.js'
import { AwardValidator, validateJobRequest } from '../../src/market/shared/validation.js'
import type { Award, Bid, JobRequest } from '../../protocols/market.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

interface Party { key: Ed25519PrivateKey, peerId: PeerId, bytes: Uint8Array }

async function party (): Promise<Party> {
  const key = await generateKeyPair('Ed25519')
  const peerId = peerIdFromPrivateKey(key)
  return { key, peerId, bytes: peerId.toMultihash().bytes }
}

const FREE: CapacitySnapshot = { freeSlots: 1, preemptibleSlots: 0, totalSlots: 1, thermalOk: true, powerOk: true }

function profile (policy: Record<string, unknown>, gpus: string[] = ['H100:80']): ProviderProfile {
  return providerProfile(parsePolicy({ region: 'eu-west', priceFloor: 1, images: ['*'], ...policy }), parseSimulatedGpus(gpus))
}

function spec (raw: Record<string, unknown> = {}): JobSpec {
  return parseJobSpec({ runtime: { image: 'ghcr.io/acme/eval:1' }, ...raw })
}

/** the shard of job(…) without constraints: no residency, no VRAM floor */
const SHARD = jobShardTopic('any', 0)

function job (renter: Party, raw: Record<string, unknown> = {}, now = Date.now()): JobRequest {
  return toJobRequest(spec(raw), { renter: renter.bytes, now })
}

function bidFor (p: Party, j: JobRequest, price: number, extra: Partial<Bid> = {}): Signed<Bid> {
  const now = Date.now()
  return signBid(p.key, p.peerId, {
    jobId: j.jobId,
    provider: p.bytes,
    priceMicroUsd: usdToMicro(price),
    gpuModel: 'h100-80gb',
    vramMib: 81920,
    region: 'eu-west',
    residency: 'eu',
    createdAt: BigInt(now),
    expiresAt: BigInt(now + 60_000),
    capabilitySeq: 0n,
    jobNonce: j.nonce,
    simulated: true,
    cachedDatasets: 0,
    addrs: [],
    ...extra
  })
}

describe('market units', () => {
  describe('job specs', () => {
    it('parses every documented example job file', async () => {
      for (const name of ['llama-eval.yaml', 'finetune-gold.yaml', 'sweep-bronze.yaml', 'finetune-8gpu.yaml']) {
        const s = parseJobSpec(await readJobFile(`examples/jobs/${name}`), 'examples/jobs')
        assert.ok(s.name.length > 0, name)
      }
      assert.equal(parseJobSpec(await readJobFile('examples/jobs/finetune-8gpu.yaml'), 'examples/jobs').gpus, 8)
    })

    it('fills defaults and converts to a wire request', async () => {
      const renter = await party()
      const s = spec({ constraints: { minVramGb: 80, maxPriceUsd: 2.5, minReliability: 0.9, residency: 'EU' } })
      assert.equal(s.tier, 'silver')
      assert.equal(s.auction.bidWindowMs, 1000)
      const j = toJobRequest(s, { renter: renter.bytes, now: 1_000 })
      assert.equal(j.constraints?.maxPriceMicroUsd, 2_500_000n)
      assert.equal(j.constraints?.minReliabilityPpm, 900_000)
      assert.equal(j.constraints?.residency, 'eu')
      // 93 % of 80 GiB: an H100 80GB reports 81 559 MiB and must qualify
      assert.ok((j.constraints?.minVramMib ?? 0) <= 81_559)
      assert.equal(j.createdAt + BigInt(j.bidWindowMs) <= j.expiresAt, true)
    })

    it('names the bad field', () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ tier: 'platinum' }, 'tier'],
        [{ workload: 'mining' }, 'workload'],
        [{ runtime: {} }, 'runtime'],
        [{ constraints: { maxPriceUsd: -1 } }, 'constraints.maxPriceUsd'],
        [{ constraints: { minReliability: 1.5 } }, 'constraints.minReliability'],
        [{ constraints: { gpuModels: ['h100', 'bad model!'] } }, 'constraints.gpuModels[1]'],
        [{ constraints: { colour: 'red' } }, 'constraints.colour'],
        [{ auction: { bidWindowMs: 10 } }, 'auction.bidWindowMs'],
        [{ tier: 'gold', constraints: { preemptible: true } }, 'constraints.preemptible'],
        [{ datasets: ['abc'] }, 'datasets[0]'],
        [{ outputs: ['../escape'] }, 'outputs[0]']
      ]
      for (const [raw, field] of cases) {
        assert.throws(() => spec(raw), (err: unknown) => err instanceof ConfigError && err.field === field, field)
      }
    })

    it('lets flags override the file', () => {
      const raw = { tier: 'gold', runtime: { image: 'a/b:1' }, constraints: { regions: ['us-east'], maxPriceUsd: 9 } }
      const s = parseJobSpec(applyJobFlags(raw, { tier: 'bronze', region: ['eu-west', 'eu-north'], 'max-price': '1.5', 'min-vram': '24', preemptible: true, 'second-price': true }, ['python', 'x.py']))
      assert.equal(s.tier, 'bronze')
      assert.deepEqual(s.constraints.regions, ['eu-west', 'eu-north'])
      assert.equal(s.constraints.maxPriceUsd, 1.5)
      assert.equal(s.constraints.minVramGb, 24)
      assert.deepEqual(s.runtime.command, ['python', 'x.py'])
      assert.equal(s.runtime.image, 'a/b:1')
      assert.equal(s.auction.pricing, 'second-price')
    })
  })

  describe('matching', () => {
    let renter: Party
    before(async () => { renter = await party() })

    it('accepts a fitting job and offers the smallest fitting GPU', () => {
      const p = profile({}, ['H100:80', 'RTX 4090:24'])
      const r = matchJob(p, job(renter, { constraints: { minVramGb: 20 } }), FREE, Date.now())
      assert.equal(r.ok, true)
      assert.equal(r.ok && r.gpu.modelKey, 'rtx-4090')
    })

    it('declines with the first failing reason', () => {
      const now = Date.now()
      const cases: Array<[ProviderProfile, Record<string, unknown>, CapacitySnapshot, DeclineReason]> = [
        [profile({}), {}, { ...FREE, freeSlots: 0 }, DeclineReason.NO_CAPACITY],
        [profile({}), { constraints: { minVramGb: 141 } }, FREE, DeclineReason.VRAM],
        [profile({}), { constraints: { gpuModels: ['a100'] } }, FREE, DeclineReason.GPU_MODEL],
        [profile({}), { constraints: { regions: ['us-east'] } }, FREE, DeclineReason.REGION],
        [profile({ region: 'us-east' }), { constraints: { residency: 'eu' } }, FREE, DeclineReason.RESIDENCY],
        [profile({ tiers: ['bronze'] }), { tier: 'gold' }, FREE, DeclineReason.TIER],
        [profile({ workloads: ['inference'] }), { workload: 'training' }, FREE, DeclineReason.WORKLOAD],
        [profile({ images: ['nvcr.io/nvidia/*'] }), {}, FREE, DeclineReason.IMAGE],
        [profile({ availability: { windows: ['sat-sun'] } }), { estimatedMinutes: 60 * 24 * 8 }, FREE, DeclineReason.AVAILABILITY_WINDOW],
        [profile({ priceFloor: 3 }), { constraints: { maxPriceUsd: 2 } }, FREE, DeclineReason.PRICE_FLOOR],
        [profile({}), {}, { ...FREE, thermalOk: false }, DeclineReason.THERMAL],
        [profile({}), {}, { ...FREE, powerOk: false }, DeclineReason.POWER],
        [profile({ maxJobMinutes: 30 }), { estimatedMinutes: 60 }, FREE, DeclineReason.MAX_JOB_LENGTH],
        [profile({ preemptionGraceSeconds: 5 }), { tier: 'bronze', constraints: { minPreemptionNoticeSeconds: 30 } }, FREE, DeclineReason.PREEMPTION_NOTICE]
      ]
      for (const [p, raw, cap, reason] of cases) {
        const r = matchJob(p, job(renter, raw, now), cap, now)
        assert.equal(r.ok ? 'ok' : r.reason, reason, `${reason}: ${JSON.stringify(raw)}`)
      }
    })

    it('lets gold and silver displace preemptible work but not bronze', () => {
      const busy = { ...FREE, freeSlots: 0, preemptibleSlots: 1 }
      assert.equal(matchJob(profile({}), job(renter, { tier: 'silver' }), busy, Date.now()).ok, true)
      assert.equal(matchJob(profile({}), job(renter, { tier: 'bronze' }), busy, Date.now()).ok, false)
    })
  })

  describe('pricing', () => {
    const base = { floorMicroUsd: 1_000_000, tier: 'bronze' as const, utilization: 0, timeClass: 'normal' as const }

    it('never goes below the floor and keeps bronze < silver < gold', () => {
      for (const timeClass of ['peak', 'normal', 'off-peak'] as const) {
        for (const recent of [[], [{ priceMicroUsd: 1, tier: 'gold' as const }], [{ priceMicroUsd: 50_000_000, tier: 'bronze' as const }]]) {
          const q = (tier: 'bronze' | 'silver' | 'gold'): number => quotePrice({ ...base, tier, timeClass, recentClearing: recent })
          assert.ok(q('bronze') >= 1_000_000)
          assert.ok(q('bronze') < q('silver') && q('silver') < q('gold'), `${timeClass} ${JSON.stringify(recent)}`)
        }
      }
    })

    it('rises with utilization and at peak, falls off-peak, follows clearing prices', () => {
      const q = (over: Record<string, unknown>): number => quotePrice({ ...base, floorMicroUsd: 2_000_000, ...over })
      assert.ok(q({ utilization: 0.9 }) > q({ utilization: 0.1 }))
      assert.ok(q({ timeClass: 'peak' }) > q({}))
      assert.ok(q({ timeClass: 'off-peak', utilization: 0.8 }) < q({ utilization: 0.8 }))
      assert.ok(q({ recentClearing: [{ priceMicroUsd: 4_000_000, tier: 'bronze' }] }) > q({}))
      assert.equal(q({ timeClass: 'off-peak', recentClearing: [{ priceMicroUsd: 1, tier: 'bronze' }] }), 2_000_000)
    })

    it('classifies hours in the provider time zone', () => {
      const wedNoonUtc = Date.UTC(2024, 0, 10, 12, 0)
      assert.equal(timeClassAt('UTC', wedNoonUtc), 'peak')
      assert.equal(timeClassAt('UTC', Date.UTC(2024, 0, 13, 12, 0)), 'normal')
      assert.equal(timeClassAt('UTC', Date.UTC(2024, 0, 10, 3, 0)), 'off-peak')
      assert.equal(timeClassAt('Asia/Tokyo', wedNoonUtc), 'normal') // 21:00 in Tokyo
      assert.ok(DEFAULT_PRICING.tierMultiplier.bronze < DEFAULT_PRICING.tierMultiplier.gold)
    })
  })

  describe('ranking and audit', () => {
    let renter: Party
    let a: Party
    let b: Party
    let c: Party
    before(async () => { [renter, a, b, c] = await Promise.all([party(), party(), party(), party()]) })

    it('ranks by price / reliability^w', () => {
      const j = job(renter)
      const rep = fixedReputation({ [a.peerId.toString()]: 0.5, [b.peerId.toString()]: 1, [c.peerId.toString()]: 0.9 })
      const bids = [bidFor(a, j, 1), bidFor(b, j, 3), bidFor(c, j, 2)]
      const ranked = rankBids(selectValidBids(bids, j, { reputation: rep }, Date.now()).valid, j, { reputation: rep })
      // scores: a 1/0.25 = 4, b 3/1 = 3, c 2/0.81 ≈ 2.47
      assert.deepEqual(ranked.map(r => r.provider), [c, b, a].map(p => p.peerId.toString()))
    })

    it('breaks ties by price, then by bid hash', () => {
      const j = job(renter)
      const rep = fixedReputation({ [a.peerId.toString()]: 1, [b.peerId.toString()]: 0.5 })
      // equal scores: a 1.0/1 = 1.0 and b 0.25/0.25 = 1.0 → the lower price wins
      const ranked = rankBids([bidFor(a, j, 1), bidFor(b, j, 0.25)], j, { reputation: rep })
      assert.equal(ranked[0]?.provider, b.peerId.toString())
      const same = [bidFor(a, j, 1), bidFor(c, j, 1)]
      const order = rankBids(same, j, { reputation: fixedReputation({}, 1) }).map(r => r.bid.hash)
      assert.ok(Buffer.compare(Buffer.from(order[0] as Uint8Array), Buffer.from(order[1] as Uint8Array)) < 0)
    })

    it('drops invalid bids with reasons and keeps a provider\'s lowest', () => {
      const j = job(renter, { constraints: { maxPriceUsd: 2, residency: 'eu', minReliability: 0.6, gpuModels: ['h100'] } })
      const other = job(renter)
      const rep = fixedReputation({ [c.peerId.toString()]: 0.1 }, 0.9)
      const kept = bidFor(a, j, 1.0)
      const bids = [
        bidFor(a, j, 1.5), kept, bidFor(a, other, 0.5),
        bidFor(b, j, 2.5), bidFor(b, j, 1, { residency: 'us', region: 'us-east' }), bidFor(b, j, 1, { gpuModel: 'a100-80gb' }),
        bidFor(b, j, 1, { expiresAt: BigInt(Date.now() - 1) }), bidFor(c, j, 1)
      ]
      const { valid, dropped } = selectValidBids(bids, j, { reputation: rep }, Date.now())
      assert.deepEqual(valid.map(v => v.hash), [kept.hash])
      assert.deepEqual(dropped.map(d => d.reason).sort(), ['duplicate', 'expired', 'gpu-model', 'over-max-price', 'reliability', 'residency', 'wrong-job'].sort())
      // a re-auction: a provider that already failed this job is not valid, whatever it bids
      const again = selectValidBids(
        [bidFor(a, j, 0.5), kept],
        j,
        { reputation: rep, exclude: new Set([a.peerId.toString()]) },
        Date.now()
      )
      assert.deepEqual(again.valid, [])
      assert.deepEqual(again.dropped.map(d => d.reason), ['failed-this-job', 'failed-this-job'])
    })

    it('computes the second price from the runner-up, capped at max price', () => {
      const j = job(renter, { constraints: { maxPriceUsd: 1.8 } })
      const rep = fixedReputation({ [a.peerId.toString()]: 1, [b.peerId.toString()]: 0.8 })
      const ranked = rankBids([bidFor(a, j, 1), bidFor(b, j, 1.2)], j, { reputation: rep })
      assert.equal(ranked[0]?.provider, a.peerId.toString())
      // runner-up score 1.2 / 0.64 = 1.875 → at a's terms 1.875, capped at 1.8
      assert.equal(clearingPrice(ranked, 0, PricingRule.SECOND_PRICE, usdToMicro(1.8)), 1_800_000n)
      assert.equal(clearingPrice(ranked, 0, PricingRule.SECOND_PRICE, 0n), 1_875_000n)
      assert.equal(clearingPrice(ranked, 0, PricingRule.FIRST_PRICE, 0n), 1_000_000n)
      assert.equal(clearingPrice(ranked, 1, PricingRule.SECOND_PRICE, 0n), 1_200_000n) // no next: own bid
    })

    it('digests bids independently of order; the audit accepts a fair award and catches a wrong one', () => {
      const j = job(renter)
      const rep = fixedReputation({}, 0.9)
      const bids = [bidFor(a, j, 1), bidFor(b, j, 2), bidFor(c, j, 3)]
      assert.deepEqual(bidsDigest(bids), bidsDigest([...bids].reverse()))
      const ranked = rankBids(bids, j, { reputation: rep })
      const award = (winner: number, price: bigint): Award => ({
        jobId: j.jobId,
        renter: j.renter,
        winner: ranked[winner]?.bid.signer.toMultihash().bytes as Uint8Array,
        clearingPriceMicroUsd: price,
        pricingRule: PricingRule.FIRST_PRICE,
        bidsDigest: bidsDigest(bids),
        runnerUp: ranked.slice(winner + 1).map(r => r.bid.signer.toMultihash().bytes),
        ranking: [],
        reliabilityWeightPpm: 0,
        latencyWeightPpm: 0,
        localityWeightPpm: 0,
        acceptDeadline: BigInt(Date.now() + 1000),
        createdAt: BigInt(Date.now()),
        expiresAt: BigInt(Date.now() + 60_000),
        attempt: 1,
        validBids: 3,
        winnerBidHash: ranked[winner]?.bid.hash as Uint8Array,
        jobNonce: j.nonce
      })
      assert.deepEqual(auditAward(award(0, 1_000_000n), bids, { job: j, reputation: rep }).problems, [])
      assert.equal(auditAward(award(1, 2_000_000n), bids, { job: j, reputation: rep }).ok, false)
      assert.equal(auditAward(award(0, 1_500_000n), bids, { job: j, reputation: rep }).ok, false)
      assert.equal(auditAward(award(0, 1_000_000n), bids.slice(0, 2), { job: j, reputation: rep }).digestMatches, false)
    })
  })

  describe('gossip validation', () => {
    let renter: Party
    let p: Party
    before(async () => { [renter, p] = await Promise.all([party(), party()]) })

    const open = (bytes: Uint8Array, domain: string): ReturnType<typeof openEnvelope> => openEnvelope(bytes, { domain })

    it('accepts good job requests, rejects malformed, forged and overlong ones, ignores future and expired ones (clock rules)', () => {
      const good = signJobRequest(renter.key, renter.peerId, job(renter))
      assert.equal(validateJobRequest(open(good.envelope, 'job-request'), SHARD).action, 'accept')
      const garbage = sealEnvelope(renter.key, renter.peerId, 'job-request', Uint8Array.of(0xff, 0xff, 0xff))
      assert.equal(validateJobRequest(open(garbage, 'job-request'), SHARD).action, 'reject')
      const forged = signJobRequest(renter.key, renter.peerId, { ...job(renter), renter: p.bytes })
      assert.deepEqual(validateJobRequest(open(forged.envelope, 'job-request'), SHARD), { action: 'reject', reason: 'wrong-signer' })
      const future = signJobRequest(renter.key, renter.peerId, job(renter, {}, Date.now() + 120_000))
      assert.deepEqual(validateJobRequest(open(future.envelope, 'job-request'), SHARD), { action: 'ignore', reason: 'from-the-future' })
      const expired = signJobRequest(renter.key, renter.peerId, job(renter, {}, Date.now() - 11 * 60_000))
      assert.deepEqual(validateJobRequest(open(expired.envelope, 'job-request'), SHARD), { action: 'ignore', reason: 'expired' })
      const long = signJobRequest(renter.key, renter.peerId, {
        ...job(renter),
        expiresAt: BigInt(Date.now() + 60 * 60_000)
      })
      assert.deepEqual(validateJobRequest(open(long.envelope, 'job-request'), SHARD), { action: 'reject', reason: 'lifetime' })
    })

    it('rejects a valid job request on a shard it does not belong to', () => {
      const good = signJobRequest(renter.key, renter.peerId, job(renter))
      assert.deepEqual(validateJobRequest(open(good.envelope, 'job-request'), jobShardTopic('us', 80)), { action: 'reject', reason: 'wrong-shard' })
    })

    it('the bid stream checks bids without auction context, and only from their signer', () => {
      const j = job(renter)
      const kept = (): 'kept' => 'kept'
      const ack = (bytes: Uint8Array, from = p.peerId): BidAck => BidAck.decode(answerBid(bytes, from, kept))
      assert.equal(ack(bidFor(p, j, 1).envelope).status, BidAck.Status.KEPT)
      assert.match(ack(bidFor(p, j, 1).envelope, renter.peerId).detail, /^wrong-signer/)
      const invalid = [
        bidFor(p, j, 1, { provider: renter.bytes }).envelope,
        bidFor(p, j, 1, { expiresAt: BigInt(Date.now() - 5) }).envelope,
        bidFor(p, j, 1, { jobId: new Uint8Array(3) }).envelope,
        bidFor(p, j, 0).envelope,
        bidFor(p, j, 1, { addrs: [new Uint8Array(65)] }).envelope,
        bidFor(p, j, 1, { addrs: Array.from({ length: 5 }, () => new Uint8Array(8)) }).envelope,
        Uint8Array.of(1, 2, 3)
      ]
      for (const bytes of invalid) assert.equal(ack(bytes).status, BidAck.Status.INVALID)
    })

    it('ignores awards that do not raise the attempt for their job', () => {
      const j = job(renter)
      const mk = (attempt: number): Uint8Array => signAward(renter.key, renter.peerId, {
        jobId: j.jobId,
        renter: renter.bytes,
        winner: p.bytes,
        clearingPriceMicroUsd: 1n,
        pricingRule: PricingRule.FIRST_PRICE,
        bidsDigest: new Uint8Array(32),
        runnerUp: [],
        ranking: [],
        reliabilityWeightPpm: 0,
        latencyWeightPpm: 0,
        localityWeightPpm: 0,
        acceptDeadline: BigInt(Date.now() + 1000),
        createdAt: BigInt(Date.now()),
        expiresAt: BigInt(Date.now() + 60_000),
        attempt,
        validBids: 1,
        winnerBidHash: new Uint8Array(32),
        jobNonce: j.nonce
      }).envelope
      const v = new AwardValidator()
      assert.equal(v.validate(open(mk(1), 'award')).action, 'accept')
      assert.equal(v.validate(open(mk(2), 'award')).action, 'accept')
      assert.deepEqual(v.validate(open(mk(2), 'award')), { action: 'ignore', reason: 'stale-attempt' })
      assert.equal(v.validate(open(mk(0), 'award')).action, 'reject')
    })
  })
})
