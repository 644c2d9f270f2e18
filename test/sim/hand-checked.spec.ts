import * as assert from 'node:assert/strict'
import { runScenario } from '../../src/sim/index.js'
import { tempDir } from '../utils/index.js'
import { node, pod, tinyScenario } from './fixtures.js'

describe('sim: hand-checked cases', function () {
  this.timeout(30_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  beforeEach(async () => { dir = await tempDir('idlegrid-sim-') })
  afterEach(async () => { await dir.cleanup() })

  it('one provider, one GPU: a gold job preempts the running bronze job, which runs again afterwards', async () => {
    // bronze from 0 for an hour; gold at 10 min for 10 min; nobody owns work, one renter
    const scenario = await tinyScenario(dir.path, [node(0, 1)], [pod(0, 'BE', 0, 3600), pod(1, 'Guaranteed', 600, 600)], {
      population: { owners: 1, ownWorkload: 0, renters: 1, regions: [{ name: 'eu-west', timeZone: 'UTC' }] }
    })
    const { report, runs } = await runScenario(scenario, { recordRuns: true })
    const { gold, bronze } = report.market.tiers
    assert.equal(gold.served, 1)
    assert.equal(bronze.served, 1)
    assert.equal(bronze.preemptions, 1)
    assert.equal(gold.preemptions, 0)
    // the bronze job had run ~10 minutes (plus the bid window and a round trip) when it was stopped
    assert.ok(bronze.lostGpuHours >= 0.16 && bronze.lostGpuHours <= 0.18, `lost ${bronze.lostGpuHours} GPU-h`)
    // gold waited for the window, a round trip and the 10 s grace: well under a minute
    assert.ok(gold.waitP50Minutes < 1)
    // GPU 0: bronze, then gold, then bronze again, in that order
    const onGpu = runs.market.filter(r => r.gpu === 0).sort((a, b) => a.start - b.start)
    assert.equal(onGpu.length, 3)
    assert.ok((onGpu[1] as { start: number }).start >= 600_000)
    // baseline: the renter rents both on demand, nothing is preempted
    assert.equal(report.baseline.tiers.bronze.preemptions, 0)
  })

  it('a task of several GPUs runs on one provider with room for all of them, and is refused where no provider has that many', async () => {
    // a 1-GPU node and a 4-GPU node; a 3-GPU task, then a 6-GPU task no node can hold
    const scenario = await tinyScenario(dir.path, [node(0, 1), node(1, 4)], [pod(0, 'LS', 0, 1800, { gpus: 3 }), pod(1, 'LS', 60, 600, { gpus: 6 })], {
      population: { owners: 2, ownWorkload: 0, renters: 1, regions: [{ name: 'eu-west', timeZone: 'UTC' }] }
    })
    const { report, runs, providers } = await runScenario(scenario, { recordRuns: true })
    const multi = report.market.market.multiGpu
    assert.deepEqual(multi, { jobs: 2, served: 1, servedOnMarket: 1, expired: 0, refused: 1 })
    // the three GPUs of one run, all on the 4-GPU provider, over the same span
    assert.equal(runs.market.length, 3)
    assert.deepEqual(new Set(runs.market.map(r => providers[r.provider]?.gpus)), new Set([4]))
    assert.equal(new Set(runs.market.map(r => r.gpu)).size, 3)
    assert.equal(new Set(runs.market.map(r => `${r.start}-${r.end}`)).size, 1)
    const t = report.market.tiers
    assert.ok(Object.keys(t.gold.topReasons).concat(Object.keys(t.silver.topReasons)).some(r => r.startsWith('refused: multi-gpu')))
  })

  it('a residency constraint is never violated, even when the only other provider is idle', async () => {
    const regions = [{ name: 'eu-west', timeZone: 'UTC' }, { name: 'us-east', timeZone: 'UTC' }]
    const pods = Array.from({ length: 30 }, (_, i) => pod(i, 'LS', i * 60, 1800))
    // two owners: node 0 and node 1, one per region; one renter in eu-west, every job must stay in "eu"
    const scenario = await tinyScenario(dir.path, [node(0, 1), node(1, 4)], pods, {
      population: { owners: 2, ownWorkload: 0, renters: 1, regions, residencyShare: 1 },
      market: { patienceMinutes: { gold: 30, silver: 30, bronze: 30 } }
    })
    const { report, runs, providers } = await runScenario(scenario, { recordRuns: true })
    assert.ok(runs.market.length > 0)
    for (const r of runs.market) assert.equal(providers[r.provider]?.region, 'eu-west')
    // the eu GPU cannot take 30 half-hour jobs in time: some expire rather than move to us-east
    const served = report.market.tiers.gold.served + report.market.tiers.silver.served
    assert.ok(served < 30)
    assert.ok(report.market.tiers.gold.expired + report.market.tiers.silver.expired > 0)
  })
})
