/**
 * Red team, market (issue 13 item 3: anyone sets the price), on real in-process libp2p nodes.
 * The attacker runs two nodes of its own: a "renter" that publishes job requests and awards,
 * and a "provider" that bids 1000 USD/h on them. It publishes 20 self-made auctions awarded
 * at 1000 USD/h, hoping the honest provider learns that price and bids it to real renters.
 *
 * Round A is the original attack: awards whose winning bid never went out on gossip (made-up
 * winner_bid_hash). Round B goes further: the self-made 1000 USD/h bids are really published,
 * so every award names a bid the provider heard. The test measures the honest provider's
 * quote for the same job before and after each round, and the price a real renter then pays.
 * The sybil round spreads the 20 awards over several renter keys (one node each).
 */
import * as assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { parseSimulatedGpus } from '../../src/capability/simulated-gpus.js'
import { parsePolicy } from '../../src/capability/policy.js'
import { providerProfile } from '../../src/capability/profile.js'
import { parseJobSpec, toJobRequest } from '../../src/market/job-spec.js'
import { microToUsd, readBid, signAward, signBid, signJobRequest, usdToMicro, type Award, type Bid, type JobRequest } from '../../src/market/messages.js'
import { DEFAULT_PRICING } from '../../src/market/pricing.js'
import { MARKET_PROVIDER_SERVICE, type AwardSeenEvent, type MarketProviderService } from '../../src/market/provider-service.js'
import { bidsDigest } from '../../src/market/ranking.js'
import { MARKET_RENTER_SERVICE, type MarketRenterService } from '../../src/market/renter-service.js'
import { marketServices } from '../../src/market/services.js'
import { neutralReputation } from '../../src/market/reputation.js'
import { LEDGER_SERVICE } from '../../src/ledger/index.js'
import { providerMarketServices, reputationService, waitForMarketMesh } from './fixtures.js'
import { GOSSIP_SERVICE, type GossipRouter, type IdlegridNode } from '../../src/node/index.js'
import { TOPIC } from '../../protocols/ids.js'
import { MAX_LIFETIME_MS } from '../../protocols/codec.js'
import { recordAttack, startInProcessNetwork, waitFor, type InProcessNetwork } from '../utils/index.js'
import type { Signed } from '../../src/identity/index.js'

/** peak and off-peak flattened so that the clock does not move the quote between measurements */
const PRICING = { ...DEFAULT_PRICING, peakMultiplier: 1, offPeakMultiplier: 1 }
const FLOOR_USD = 1.25
const ATTACK_USD = 1000
const AUCTIONS = 20
const WINDOW_MS = 1000
/** extra renter identities of the attacker in the sybil round */
const SYBILS = 3

describe('red team: market (issue 13)', function () {
  this.timeout(120_000)
  let net: InProcessNetwork
  const profile = providerProfile(parsePolicy({ region: 'eu-west', priceFloor: FLOOR_USD, images: ['*'] }), parseSimulatedGpus(['H100:80']))
  const victim = (): IdlegridNode => net.renters[0] as IdlegridNode
  const attacker = (): IdlegridNode => net.renters[1] as IdlegridNode
  const shill = (): IdlegridNode => net.renters[2] as IdlegridNode
  const honest = (): IdlegridNode => net.providers[0] as IdlegridNode
  const gossip = (n: IdlegridNode): GossipRouter => n.libp2p.services[GOSSIP_SERVICE]
  const market = (): MarketProviderService => honest().libp2p.services[MARKET_PROVIDER_SERVICE] as unknown as MarketProviderService
  const spec = (name: string): ReturnType<typeof parseJobSpec> =>
    parseJobSpec({ name, runtime: { image: 'ghcr.io/acme/eval:1' }, auction: { bidWindowMs: WINDOW_MS, acceptTimeoutMs: 1500 } })
  /** the honest provider's quote now for a job like the victim's, USD per GPU-hour */
  const quote = (): number => {
    const d = market().explain(toJobRequest(spec('probe'), { renter: victim().peerId.toMultihash().bytes }))
    assert.ok(d.bid, 'the honest provider would bid')
    return microToUsd(d.priceMicroUsd)
  }

  before(async () => {
    net = await startInProcessNetwork({
      providers: 1,
      renters: 3 + SYBILS, // the victim, the attacker's renter, the attacker's shill bidder, more renter keys of the attacker
      extensions: (role) => {
        if (role === 'provider') {
          const ext = providerMarketServices(profile, { pricing: PRICING })
          return ext
        }
        const ext = marketServices({ role })
        if (role === 'renter') ext.services[LEDGER_SERVICE] = reputationService(neutralReputation())
        return ext
      }
    })
    await waitForMarketMesh(net)
  })

  after(async () => { await net?.stop() })

  /**
   * Runs AUCTIONS self-made auctions at once, each awarded to the shill at ATTACK_USD. With
   * `publishBids` the shill's bids go out on gossip; otherwise the awards name bids nobody saw.
   * Resolves with the honest provider's award events for them.
   */
  async function attack (publishBids: boolean, renters: IdlegridNode[] = [attacker()]): Promise<AwardSeenEvent[]> {
    const bidder = shill()
    const jobs: Array<Signed<JobRequest>> = []
    const bids = new Map<string, Array<Signed<Bid>>>()
    const events: AwardSeenEvent[] = []
    const onAward = (evt: Event): void => {
      const e = (evt as CustomEvent<AwardSeenEvent>).detail
      if (jobs.some(j => Buffer.from(j.message.jobId).toString('hex') === e.jobId)) events.push(e)
    }
    market().events.addEventListener('award', onAward)
    const offBids = gossip(victim()).onMessage(TOPIC.bids, (envelope) => {
      const bid = readBid(envelope)
      const key = Buffer.from(bid.message.jobId).toString('hex')
      bids.set(key, [...(bids.get(key) ?? []), bid])
    })
    try {
      for (let i = 0; i < AUCTIONS; i++) {
        const me = renters[i % renters.length] as IdlegridNode
        const job = signJobRequest(me.privateKey, me.peerId, toJobRequest(spec(`pump-${i}`), { renter: me.peerId.toMultihash().bytes }))
        jobs.push(job)
        await me.libp2p.services.pubsub.publish(TOPIC.jobs, job.envelope)
        const mine = signBid(bidder.privateKey, bidder.peerId, shillBid(job.message, bidder.peerId.toMultihash().bytes))
        if (publishBids) await bidder.libp2p.services.pubsub.publish(TOPIC.bids, mine.envelope)
        const key = Buffer.from(job.message.jobId).toString('hex')
        bids.set(key, [...(bids.get(key) ?? []), mine])
      }
      // the honest provider bids too; the attacker awards its shill all the same, once every window closed
      await waitFor(() => jobs.every(j => (bids.get(Buffer.from(j.message.jobId).toString('hex'))?.length ?? 0) >= 2), { timeoutMs: 10_000, what: 'the honest provider to bid on every self-made job' })
      await new Promise(resolve => setTimeout(resolve, WINDOW_MS))
      for (const job of jobs) {
        const me = renters.find(r => r.peerId.equals(job.signer)) as IdlegridNode
        const all = bids.get(Buffer.from(job.message.jobId).toString('hex')) ?? []
        const winning = all.find(b => b.signer.equals(bidder.peerId)) as Signed<Bid>
        const award = signAward(me.privateKey, me.peerId, {
          ...awardOf(job.message, bidder.peerId.toMultihash().bytes, usdToMicro(ATTACK_USD)),
          bidsDigest: bidsDigest(all),
          validBids: all.length,
          winnerBidHash: publishBids ? winning.hash : new Uint8Array(randomBytes(32))
        })
        await me.libp2p.services.pubsub.publish(TOPIC.awards, award.envelope)
      }
      await waitFor(() => events.length === AUCTIONS, { timeoutMs: 10_000, what: 'the honest provider to see every self-made award' })
      return events
    } finally {
      offBids()
      market().events.removeEventListener('award', onAward)
    }
  }

  /** the honest provider's quote before any attack */
  let honestQuote = 0

  it('anyone sets the price: 20 self-made awards at 1000 USD/h move an honest provider\'s bid by at most 10 %, and a real renter pays the honest price', async () => {
    const before = quote()
    honestQuote = before

    // A: awards whose winning bid never went out on gossip teach nothing
    const a = await attack(false)
    const afterA = quote()

    // B: the shill's bids are real and heard; the attacker is still one renter, one sample, clamped to the band
    const b = await attack(true)
    const afterB = quote()
    const samples = market().stats().recentClearingUsd

    // a real renter's auction after the attack
    const report = await (victim().libp2p.services[MARKET_RENTER_SERVICE] as unknown as MarketRenterService).auction(spec('after-the-pump'))
    assert.ok(report.award != null, JSON.stringify(report.attempts))
    assert.ok(report.award.winner === honest().peerId.toString())
    const paid = report.award.price
    // the real award names the honest provider's own bid: it still teaches a price, the victim's one sample
    await waitFor(() => market().stats().recentClearingUsd.length === 2, { timeoutMs: 5_000, what: 'the victim\'s award to feed the price memory' })
    assert.deepEqual(market().stats().recentClearingUsd, [ATTACK_USD, paid])

    const move = (x: number): string => `${(100 * (x / before - 1)).toFixed(2)} %`
    console.log(`      [figures] honest bid before: ${before.toFixed(4)} USD/h; after ${AUCTIONS} awards of unseen bids at ${ATTACK_USD} USD/h: ${afterA.toFixed(4)} (${move(afterA)}); ` +
      `after ${AUCTIONS} awards of heard self-made bids at ${ATTACK_USD} USD/h: ${afterB.toFixed(4)} (${move(afterB)}); a real renter then paid ${paid.toFixed(4)} (${move(paid)})`)
    assert.equal(a.filter(e => e.priced).length, 0, 'an award naming an unseen bid fed the price memory')
    assert.ok(a.every(e => /never seen on the bids topic/.test(e.notPriced ?? '')), JSON.stringify(a[0]))
    assert.equal(afterA, before)
    assert.equal(b.filter(e => e.priced).length, AUCTIONS, 'awards of heard bids count (each replaces the renter\'s previous sample)')
    assert.deepEqual(samples, [ATTACK_USD], 'one sample per renter')
    assert.ok(afterB <= before * 1.10, `bid moved from ${before} to ${afterB}`)
    assert.ok(paid <= before * 1.10, `a real renter paid ${paid}, the honest price is ${before}`)
    recordAttack({ issue: '13.3', attack: `${AUCTIONS} self-made awards at ${ATTACK_USD} USD/h naming unseen bids`, got: `honest bid ${move(afterA)}`, limit: 'price learnt only from a heard winning bid' })
    recordAttack({ issue: '13.3', attack: `${AUCTIONS} self-made awards at ${ATTACK_USD} USD/h with published shill bids`, got: `honest bid ${move(afterB)}; a real renter paid ${move(paid)}`, limit: 'one sample per renter, clamped to base/1.25…base×1.25 (≤ 10 %)' })
  })

  it('anyone sets the price, with sybils: 20 self-made awards from several renter keys still move the bid by at most 10 %', async () => {
    assert.ok(honestQuote > 0, 'runs after the single-renter round')
    const keys = [attacker(), ...net.renters.slice(3)]
    const events = await attack(true, keys)
    const after = quote()
    const samples = market().stats().recentClearingUsd
    console.log(`      [figures] honest bid before any attack: ${honestQuote.toFixed(4)} USD/h; after ${AUCTIONS} awards at ${ATTACK_USD} USD/h from ${keys.length} renter keys: ` +
      `${after.toFixed(4)} (${(100 * (after / honestQuote - 1)).toFixed(2)} %); price memory ${JSON.stringify(samples)}`)
    assert.equal(events.filter(e => e.priced).length, AUCTIONS)
    assert.equal(samples.filter(p => p === ATTACK_USD).length, keys.length, 'one sample per renter key')
    assert.ok(after <= honestQuote * 1.10, `bid moved from ${honestQuote} to ${after}`)
    recordAttack({ issue: '13.3', attack: `${AUCTIONS} self-made awards at ${ATTACK_USD} USD/h from ${keys.length} renter keys`, got: `honest bid ${(100 * (after / honestQuote - 1)).toFixed(2)} %`, limit: 'median of band-clamped samples (≤ 10 %)' })
  })

  /**
   * One self-made second-price auction by `renter`: the shill bids 0.5 USD/h, the honest provider
   * bids what it bids; the award names the shill as winner, the honest provider as runner-up,
   * and pays `price(honestBid)`. Resolves with the honest provider's award event.
   */
  async function secondPriceAuction (renter: IdlegridNode, price: (honestBid: bigint) => bigint): Promise<AwardSeenEvent> {
    const bidder = shill()
    const job = signJobRequest(renter.privateKey, renter.peerId, toJobRequest(parseJobSpec({ name: 'second', runtime: { image: 'ghcr.io/acme/eval:1' }, auction: { bidWindowMs: WINDOW_MS, pricing: 'second-price' } }), { renter: renter.peerId.toMultihash().bytes }))
    const jobId = Buffer.from(job.message.jobId).toString('hex')
    let event: AwardSeenEvent | undefined
    const onAward = (evt: Event): void => { const e = (evt as CustomEvent<AwardSeenEvent>).detail; if (e.jobId === jobId) event = e }
    let honestBid: Signed<Bid> | undefined
    const offBids = gossip(renter).onMessage(TOPIC.bids, (envelope) => {
      const bid = readBid(envelope)
      if (bid.signer.equals(honest().peerId) && Buffer.from(bid.message.jobId).toString('hex') === jobId) honestBid = bid
    })
    market().events.addEventListener('award', onAward)
    try {
      await renter.libp2p.services.pubsub.publish(TOPIC.jobs, job.envelope)
      const mine = signBid(bidder.privateKey, bidder.peerId, { ...shillBid(job.message, bidder.peerId.toMultihash().bytes), priceMicroUsd: usdToMicro(0.5) })
      await bidder.libp2p.services.pubsub.publish(TOPIC.bids, mine.envelope)
      await waitFor(() => honestBid != null, { timeoutMs: 10_000, what: 'the honest provider to bid' })
      await new Promise(resolve => setTimeout(resolve, WINDOW_MS))
      const runnerUp = honestBid as Signed<Bid>
      const award = signAward(renter.privateKey, renter.peerId, {
        ...awardOf(job.message, bidder.peerId.toMultihash().bytes, price(runnerUp.message.priceMicroUsd)),
        runnerUp: [honest().peerId.toMultihash().bytes],
        bidsDigest: bidsDigest([mine, runnerUp]),
        validBids: 2,
        winnerBidHash: mine.hash
      })
      await renter.libp2p.services.pubsub.publish(TOPIC.awards, award.envelope)
      await waitFor(() => event != null, { timeoutMs: 10_000, what: 'the honest provider to see the award' })
      return event as AwardSeenEvent
    } finally {
      offBids()
      market().events.removeEventListener('award', onAward)
    }
  }

  it('red team: a renter-signed second-price award paying far above what its named runner-up\'s bid gives teaches no price; the exact one does', async () => {
    const cheat = await secondPriceAuction(attacker(), () => usdToMicro(ATTACK_USD))
    const exact = await secondPriceAuction(net.renters[3] as IdlegridNode, (honestBid) => honestBid)
    console.log(`      [figures] second-price award at ${ATTACK_USD} USD/h over a runner-up bid of ${exact.priceUsd} USD/h: priced ${String(cheat.priced)} (${cheat.notPriced ?? ''}); the rule's own price: priced ${String(exact.priced)}`)
    assert.equal(cheat.priced, false, 'a second price above the rule\'s fed the price memory')
    assert.match(cheat.notPriced ?? '', /second price from the runner-up's bid is \d+ micro-USD, the award says 1000000000/)
    assert.equal(exact.priced, true, exact.notPriced)
    recordAttack({ issue: '13.3', attack: `second-price award at ${ATTACK_USD} USD/h naming a heard runner-up bid of ${exact.priceUsd} USD/h`, got: cheat.priced ? `learnt ${ATTACK_USD} USD/h` : 'no price learnt', limit: 'second price must equal the rule\'s price from the named runner-up\'s bid' })
  })
})

/** The shill's bid on `job` at ATTACK_USD, as a provider's bid engine would fill it. */
function shillBid (job: JobRequest, provider: Uint8Array): Bid {
  const now = Date.now()
  return {
    jobId: job.jobId,
    provider,
    priceMicroUsd: usdToMicro(ATTACK_USD),
    gpuModel: 'h100',
    vramMib: 81_920,
    region: 'eu-west',
    residency: '',
    createdAt: BigInt(now),
    expiresAt: BigInt(Math.min(Number(job.expiresAt), now + MAX_LIFETIME_MS.bid)),
    capabilitySeq: 0n,
    jobNonce: job.nonce,
    simulated: true,
    cachedDatasets: 0,
    addrs: []
  }
}

/** An award of `job` to `winner` at `price`, fields as a renter fills them. */
function awardOf (job: JobRequest, winner: Uint8Array, price: bigint): Award {
  const now = Date.now()
  return {
    jobId: job.jobId,
    renter: job.renter,
    winner,
    clearingPriceMicroUsd: price,
    pricingRule: job.pricingRule,
    bidsDigest: new Uint8Array(32),
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
    winnerBidHash: new Uint8Array(32),
    jobNonce: job.nonce
  }
}
