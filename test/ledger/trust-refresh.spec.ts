import * as assert from 'node:assert/strict'
import { ReputationView } from '../../src/ledger/reputation/view.js'
import { waitFor } from '../utils/index.js'
import { Feeds, idOf, signers } from './feeds.js'

// The trust vector is recomputed off the auction's path (issue 15.3): reliability() serves
// the last vector and schedules one background refresh when it is stale.

const HOUR = 3600_000

describe('ledger trust: background refresh of the trust vector (issue 15.3)', function () {
  this.timeout(30_000)

  it('reliability() never computes trust in place once primed; a stale vector is refreshed in the background and the new score follows', async () => {
    const [viewer, friend, provider] = await signers(3)
    const feeds = new Feeds()
    const view = new ReputationView({}, { selfId: idOf(viewer), trustedPeers: [idOf(friend)], trustRefreshMs: 0 })
    view.refreshTrust()
    const primed = view.trustComputations
    const before = view.reliability(idOf(provider))
    // a trusted renter's OK job for the provider: its score rises once trust is recomputed
    feeds.job(provider, friend, Date.now() - HOUR)
    for (const r of feeds.records) view.add(r)
    const served = view.reliability(idOf(provider))
    assert.equal(view.trustComputations, primed, 'the auction path ran no trust computation')
    await waitFor(() => view.trustComputations > primed, { timeoutMs: 5_000, what: 'the background refresh' })
    const after = view.reliability(idOf(provider))
    const exact = view.reputation(idOf(provider)).score
    assert.ok(after > before, `the refreshed vector lifts the provider (${before} → ${after}; served meanwhile ${served})`)
    assert.ok(Math.abs(after - exact) < 1e-6, `the served score equals the exact one (${after} vs ${exact})`)
    view.stop()
  })
})
