/**
 * Red team, in the simulator: lying providers (half the floor, bad outputs) vouched for by
 * Sybil renters who write an OK receipt a day for each of them. The node's trust graph
 * (ledger/reputation/trust.ts) gives the Sybils no weight (no path of good jobs from a real renter reaches
 * them), so they buy nothing, and honest renters must still get their work done (failover).
 */
import * as assert from 'node:assert/strict'
import { runScenario } from '../../src/sim/index.js'
import { maxLiftPerCounterparty } from '../../src/ledger/reputation/reputation.js'
import { recordAttack, tempDir } from '../utils/index.js'
import { mixedNodes, pod, tinyScenario } from './fixtures.js'

describe('sim: red team', function () {
  this.timeout(60_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  beforeEach(async () => { dir = await tempDir('idlegrid-sim-rt-') })
  afterEach(async () => { await dir.cleanup() })

  it('red team: Sybil renters vouching for lying providers lift them by nothing (trust weighs their receipts 0), and renters still get their work done', async () => {
    const sybils = 5
    // two days of short one-GPU jobs, so that the Sybils' daily receipts come into play
    const pods = Array.from({ length: 600 }, (_, i) => pod(i, i % 3 === 0 ? 'LS' : 'BE', i * 288, 600 + (i * 97) % 1800))
    const run = async (sybilRenters: number): Promise<Awaited<ReturnType<typeof runScenario>>['report']> => {
      const scenario = await tinyScenario(dir.path, mixedNodes(24), pods, {
        population: { owners: 6, ownWorkload: 0, renters: 8 },
        adversarial: { lying: 0.25, sybilRenters }
      })
      return (await runScenario(scenario)).report
    }
    const alone = await run(0)
    const backed = await run(sybils)
    const lift = backed.market.conduct.lying.meanReliability - alone.market.conduct.lying.meanReliability
    const bound = sybils * maxLiftPerCounterparty()
    const awards = (r: typeof backed): number =>
      r.market.conduct.lying.awards / Math.max(1, r.market.conduct.lying.awards + r.market.conduct.honest.awards)
    recordAttack({
      issue: '16',
      attack: `${sybils} Sybil renters vouch daily for lying providers (25 % of them, half the floor, bad outputs) in a simulated market`,
      got: `liars' reliability ${alone.market.conduct.lying.meanReliability} → ${backed.market.conduct.lying.meanReliability} (+${lift.toFixed(3)}), share of awards ${(awards(alone) * 100).toFixed(1)} % → ${(awards(backed) * 100).toFixed(1)} %; honest ${backed.market.conduct.honest.meanReliability}`,
      limit: `liars stay below honest providers' reliability; lift < 0.05 and no more awards (without trust: +0.134, awards 9 → 34; the cap allows ${sybils} × maxLiftPerCounterparty = ${bound.toFixed(3)}); every job failed over to an honest provider`
    })
    assert.ok(backed.market.conduct.lying.providers > 0)
    assert.ok(lift <= bound, `lift ${lift} above ${bound}`)
    // without trust these Sybils lifted the liars by 0.134 and tripled their awards (9 → 34);
    // with it what is left is the two runs drifting apart (other awards, other timings)
    assert.ok(lift < 0.05, `Sybils lifted liars by ${lift}`)
    assert.ok(awards(backed) <= awards(alone) * 1.5, `liars' share of awards ${awards(alone)} → ${awards(backed)}`)
    assert.ok(backed.market.market.trustComputations > 0)
    // the attacker's goal, to look as reliable as an honest provider, is not reached
    assert.ok(backed.market.conduct.lying.meanReliability < backed.market.conduct.honest.meanReliability)
    // honest service continues: bad outputs fail over, every renter job is served
    for (const t of ['gold', 'silver', 'bronze'] as const) {
      const s = backed.market.tiers[t]
      assert.equal(s.served, s.jobs, `${t}: ${JSON.stringify(s.topReasons)}`)
    }
    assert.ok(
      backed.market.tiers.bronze.failovers +
        backed.market.tiers.silver.failovers +
        backed.market.tiers.gold.failovers >
        0
    )
  })
})
