/**
 * The figure protocols/README.md §7 "Ledger" (reputation, "What one renter can lift") documents
 * (issue 36): a renter with one real job in a provider's own view signs OK receipts for a fresh
 * key; the key rises from the newcomer's 0.500 to (α + 1) / (α + β + 1) = 6 / 11 ≈ 0.545 after
 * one, and to no more than (α + C) / (α + β + C) = 7 / 12 ≈ 0.583 however many it signs. The
 * ranking's market and auction code read this score; the ledger computes it (read here, real
 * keys and signatures).
 */
import * as assert from 'node:assert/strict'
import { DEFAULT_REPUTATION, maxLiftPerCounterparty } from '../../src/ledger/reputation/reputation.js'
import { ReputationView } from '../../src/ledger/reputation/view.js'
import { Feeds, idOf, signers } from '../ledger/feeds.js'
import type { Signer } from '../../src/ledger/dev.js'

const NOW = 1_800_000_000_000
const HOUR = 3600_000
const { priorSuccesses: ALPHA, priorFailures: BETA, counterpartyCap: CAP } = DEFAULT_REPUTATION
/** The documented bounds: a newcomer, one receipt, and one renter's most. */
const NEWCOMER = ALPHA / (ALPHA + BETA)
const ONE_RECEIPT = (ALPHA + 1) / (ALPHA + BETA + 1)
const ONE_RENTER = (ALPHA + CAP) / (ALPHA + BETA + CAP)

describe('reputation: what one renter\'s receipts lift a fresh key in a provider\'s own view (issue 36)', function () {
  this.timeout(60_000)
  let provider: Signer
  let renter: Signer
  let fresh: Signer

  before(async () => { [provider, renter, fresh] = await signers(3) })

  /** The provider's own view after `renter` rented from it once and signed `receipts` OK receipts for the fresh key. */
  function scoreAfter (receipts: number): number {
    const feeds = new Feeds()
    feeds.job(provider, renter, NOW - 10 * HOUR)
    for (let i = 0; i < receipts; i++) feeds.job(fresh, renter, NOW - (1 + i) * 60_000)
    const view = new ReputationView({}, { selfId: idOf(provider) })
    for (const r of feeds.records) view.add(r)
    return view.reputation(idOf(fresh), NOW).score
  }

  it(`one OK receipt lifts a fresh key from ${NEWCOMER.toFixed(3)} to ${ONE_RECEIPT.toFixed(3)}; any number from one renter to at most ${ONE_RENTER.toFixed(3)}`, () => {
    assert.equal(scoreAfter(0), NEWCOMER)
    const one = scoreAfter(1)
    console.log(`      [figures] fresh key after one OK receipt: ${one.toFixed(4)} (lift ${(one - NEWCOMER).toFixed(4)}); after 2, 5: ${scoreAfter(2).toFixed(4)}, ${scoreAfter(5).toFixed(4)}`)
    assert.ok(one <= ONE_RECEIPT + 1e-3, `one receipt lifted the key to ${one}`)
    assert.ok(one > NEWCOMER, 'a renter the provider knows counts')
    for (const n of [2, 5, 20]) assert.ok(scoreAfter(n) <= ONE_RENTER + 1e-3, `${n} receipts of one renter lifted the key to ${scoreAfter(n)}`)
    assert.ok(ONE_RENTER - NEWCOMER <= maxLiftPerCounterparty(), 'within the ledger\'s own per-counterparty bound')
  })
})
