/**
 * What clearing price a provider accepts for its own bid (issue 36 item 5, protocols/README.md
 * §7 "Auction"): first price pays the bid, second price at least the bid, neither above the job's
 * max price, under the rule the job request announced. Anything else is declined `OTHER` and is
 * not counted as a win. Real in-process nodes: the provider bids on the renter's job request
 * over gossip and the bid stream, and answers awards on the accept stream.
 */
import * as assert from 'node:assert/strict'
import { parseSimulatedGpus } from '../../src/capability/gpu/simulated-gpus.js'
import { parsePolicy } from '../../src/capability/policy/policy.js'
import { providerProfile } from '../../src/capability/policy/profile.js'
import { awardPriceProblem } from '../../src/market/shared/award-check.js'
import { parseJobSpec, toJobRequest } from '../../src/market/renter/job-spec.js'
import { DeclineReason, PricingRule, signAward, signJobRequest, usdToMicro, type Award, type Bid, type JobRequest } from '../../src/market/shared/messages.js'
import { DEFAULT_PRICING } from '../../src/market/provider/pricing.js'
import { MARKET_PROVIDER_SERVICE, type MarketProviderService } from '../../src/market/provider/provider-service.js'
import { marketServices } from '../../src/market/role-services.js'
import { LEDGER_SERVICE } from '../../src/ledger/index.js'
import { awardFor } from '../redteam/attacks/forge.js'
import { askAccept, providerMarketServices, publishAndTakeBid, reputationService, waitForMarketMesh } from './fixtures.js'
import { startInProcessNetwork, type InProcessNetwork } from '../utils/index.js'
import type { Signed } from '../../src/identity/index.js'
import type { IdlegridNode } from '../../src/node/index.js'

const MAX_USD = 5
const FLAT = { ...DEFAULT_PRICING, peakMultiplier: 1, offPeakMultiplier: 1, clearingWeight: 0 }

describe('award price: a provider accepts its bid or the rule\'s second price, never above the max (issue 36)', function () {
  this.timeout(120_000)
  let net: InProcessNetwork
  const profile = providerProfile(parsePolicy({ region: 'eu-west', priceFloor: 1, images: ['*'] }), parseSimulatedGpus(['H100:80']))
  const renter = (): IdlegridNode => net.renters[0] as IdlegridNode
  const provider = (): IdlegridNode => net.providers[0] as IdlegridNode
  const market = (): MarketProviderService =>
    provider().libp2p.services[MARKET_PROVIDER_SERVICE] as unknown as MarketProviderService

  before(async () => {
    net = await startInProcessNetwork({
      providers: 1,
      renters: 1,
      extensions: (role) => {
        if (role === 'provider') return providerMarketServices(profile, { pricing: FLAT })
        const ext = marketServices({ role })
        if (role === 'renter') ext.services[LEDGER_SERVICE] = reputationService()
        return ext
      }
    })
    await waitForMarketMesh(net)
  })

  after(async () => { await net?.stop() })

  /** The renter's job under `pricing` with the max price, and the provider's bid on it. */
  async function auction (pricing: 'first-price' | 'second-price'): Promise<{ job: Signed<JobRequest>, bid: Signed<Bid> }> {
    const r = renter()
    const spec = parseJobSpec({ name: pricing, runtime: { image: 'ghcr.io/acme/eval:1' }, constraints: { maxPriceUsd: MAX_USD }, auction: { bidWindowMs: 60_000, pricing } })
    const job = signJobRequest(r.privateKey, r.peerId, toJobRequest(spec, { renter: r.peerId.toMultihash().bytes }))
    return { job, bid: await publishAndTakeBid(r, job) }
  }

  function award (
    job: Signed<JobRequest>,
    bid: Signed<Bid>,
    priceMicroUsd: bigint,
    over: Partial<Award> = {}
  ): Uint8Array {
    const now = Date.now()
    return signAward(
      renter().privateKey,
      renter().peerId,
      awardFor(job.message, provider().peerId, priceMicroUsd, {
        acceptDeadline: BigInt(now + 30_000),
        expiresAt: BigInt(now + 60_000),
        validBids: 2,
        winnerBidHash: bid.hash,
        ...over
      })
    ).envelope
  }

  /** Offers each price in turn; every one must be declined `OTHER` naming the clearing price, with no win counted. */
  async function refused (
    job: Signed<JobRequest>,
    bid: Signed<Bid>,
    offers: Array<{ price: bigint, over?: Partial<Award>, why: RegExp }>
  ): Promise<void> {
    const { wins, expectedEarningsUsd } = market().stats()
    for (const { price, over, why } of offers) {
      const answer = await askAccept(renter(), provider().peerId, award(job, bid, price, over))
      assert.equal(answer.accepted, false, `accepted ${price} micro-USD on a bid of ${bid.message.priceMicroUsd}`)
      assert.equal(answer.reason, DeclineReason.OTHER)
      assert.match(answer.detail, why)
    }
    assert.equal(market().stats().wins, wins, 'a refused award counts no win')
    assert.equal(market().stats().expectedEarningsUsd, expectedEarningsUsd)
  }

  it('first price: an award above or below the bid, or above the max, is refused; the bid itself is accepted', async () => {
    const { job, bid } = await auction('first-price')
    const own = bid.message.priceMicroUsd
    const max = usdToMicro(MAX_USD)
    assert.ok(own < max, `the bid ${own} is below the max ${max}`)
    await refused(job, bid, [
      { price: own + 1n, why: /not this provider's bid/ },
      { price: own - 1n, why: /not this provider's bid/ },
      { price: max + 1n, why: /above the job's max price/ },
      // the award cannot switch the rule the job announced to pay more
      { price: own + 1n, over: { pricingRule: PricingRule.SECOND_PRICE }, why: /pricing rule/ }
    ])
    const before = market().stats().wins
    const answer = await askAccept(renter(), provider().peerId, award(job, bid, own))
    assert.equal(answer.accepted, true, `${answer.reason} ${answer.detail}`)
    assert.equal(market().stats().wins, before + 1)
  })

  it('second price: below the bid or above the max is refused; any price from the bid to the max is accepted', async () => {
    const { job, bid } = await auction('second-price')
    const own = bid.message.priceMicroUsd
    const max = usdToMicro(MAX_USD)
    await refused(job, bid, [
      { price: own - 1n, why: /below this provider's bid/ },
      { price: max + 1n, why: /above the job's max price/ },
      { price: max, over: { pricingRule: PricingRule.FIRST_PRICE }, why: /pricing rule/ }
    ])
    const before = market().stats()
    const answer = await askAccept(renter(), provider().peerId, award(job, bid, max))
    assert.equal(answer.accepted, true, `${answer.reason} ${answer.detail}`)
    assert.equal(market().stats().wins, before.wins + 1)
  })

  it('the price rule, case by case', () => {
    const job = (pricingRule: PricingRule, maxPriceMicroUsd: bigint): JobRequest =>
      ({ pricingRule, constraints: { maxPriceMicroUsd } }) as unknown as JobRequest
    const offer = (pricingRule: PricingRule, price: bigint): Award =>
      ({ pricingRule, clearingPriceMicroUsd: price }) as unknown as Award
    const bid = { priceMicroUsd: 100n }
    const { FIRST_PRICE: FIRST, SECOND_PRICE: SECOND } = PricingRule
    // accepted
    assert.equal(awardPriceProblem(offer(FIRST, 100n), job(FIRST, 200n), bid), undefined)
    assert.equal(awardPriceProblem(offer(FIRST, 100n), job(FIRST, 0n), bid), undefined, 'no max price set')
    assert.equal(awardPriceProblem(offer(SECOND, 100n), job(SECOND, 200n), bid), undefined)
    assert.equal(awardPriceProblem(offer(SECOND, 150n), job(SECOND, 200n), bid), undefined)
    assert.equal(awardPriceProblem(offer(SECOND, 200n), job(SECOND, 200n), bid), undefined)
    assert.equal(awardPriceProblem(offer(SECOND, 10_000n), job(SECOND, 0n), bid), undefined, 'no max: the runner-up cannot be checked')
    // refused
    assert.match(awardPriceProblem(offer(FIRST, 101n), job(FIRST, 200n), bid) ?? '', /not this provider's bid/)
    assert.match(awardPriceProblem(offer(FIRST, 99n), job(FIRST, 200n), bid) ?? '', /not this provider's bid/)
    assert.match(awardPriceProblem(offer(SECOND, 99n), job(SECOND, 200n), bid) ?? '', /below/)
    assert.match(awardPriceProblem(offer(SECOND, 201n), job(SECOND, 200n), bid) ?? '', /above the job's max/)
    assert.match(awardPriceProblem(offer(FIRST, 201n), job(FIRST, 200n), { priceMicroUsd: 201n }) ?? '', /above the job's max/)
    assert.match(awardPriceProblem(offer(SECOND, 150n), job(FIRST, 200n), bid) ?? '', /pricing rule/)
  })
})
