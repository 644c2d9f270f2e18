import * as assert from 'node:assert/strict'
import { runScenario } from '../../src/sim/index.js'
import { tempDir } from '../utils/index.js'
import { node, pod, tinyScenario } from './fixtures.js'

// virtual time 0 is Monday 00:00 UTC; an idle-windows owner offers "mon-fri 19:00-07:00" and
// "sat-sun": closed Monday 00:00-19:00, open until Tuesday 07:00
const OPENS_S = 19 * 3600
const CLOSES_S = 31 * 3600
const regions = [{ name: 'eu-west', timeZone: 'UTC' }]

describe('sim: the end of an idle window', function () {
  this.timeout(30_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  beforeEach(async () => { dir = await tempDir('idlegrid-sim-') })
  afterEach(async () => { await dir.cleanup() })

  it('preempts bronze work still running when the owner takes its GPU back, and never places market work while closed', async () => {
    // a bronze job whose estimate ends exactly at the window's end: the provider bids (it fits),
    // but the award's delay (bid window, round trip) carries the run past the end
    // (trace times count from the first arrival: pod 1 arrives at 0, while the window is closed)
    const pods = [pod(0, 'BE', CLOSES_S - 3600, 3600), pod(1, 'BE', 0, 600)]
    const scenario = await tinyScenario(dir.path, [node(0, 1)], pods, {
      population: { owners: 1, ownWorkload: 0, renters: 1, regions, idleWindowsShare: 1 },
      market: { patienceMinutes: { gold: 60, silver: 60, bronze: 24 * 60 } }
    })
    const { report, runs } = await runScenario(scenario, { recordRuns: true })
    const { bronze } = report.market.tiers
    assert.equal(bronze.windowPreemptions, 1)
    assert.equal(bronze.preemptions, 1)
    // nearly the whole hour ran and is lost
    assert.ok(bronze.lostGpuHours > 0.99 && bronze.lostGpuHours <= 1, `lost ${bronze.lostGpuHours} GPU-h`)
    assert.equal(bronze.served, 2)
    // no market run starts while the window is closed (Monday before 19:00, Tuesday 07:00-19:00)
    for (const r of runs.market) {
      const start = r.start / 1000
      assert.ok(start >= OPENS_S && (start < CLOSES_S || start >= CLOSES_S + 12 * 3600), `a run started at ${start} s`)
    }
  })

  it('lets gold work run on past the end (the scheduler never preempts it) and counts the overrun', async () => {
    const pods = [pod(0, 'Guaranteed', CLOSES_S - 3600, 3600), pod(1, 'BE', 0, 60)]
    const scenario = await tinyScenario(dir.path, [node(0, 1)], pods, {
      population: { owners: 1, ownWorkload: 0, renters: 1, regions, idleWindowsShare: 1 }
    })
    const { report } = await runScenario(scenario)
    assert.equal(report.market.tiers.gold.served, 1)
    assert.equal(report.market.tiers.gold.preemptions, 0)
    const overrun = report.market.market.windowOverrunGpuHours
    assert.ok(overrun > 0 && overrun < 0.01, `overrun ${overrun} GPU-h`)
  })

  it('runs the owner\'s own work on its GPUs while the window is closed', async () => {
    const pods = [pod(0, 'LS', 0, 600), pod(1, 'BE', 3600, 600)]
    const scenario = await tinyScenario(dir.path, [node(0, 2)], pods, {
      population: { owners: 1, ownWorkload: 1, renters: 1, regions, idleWindowsShare: 1 }
    })
    const { report, runs } = await runScenario(scenario, { recordRuns: true })
    const served =
      report.market.tiers.gold.served + report.market.tiers.silver.served + report.market.tiers.bronze.served
    assert.equal(served, 2)
    assert.deepEqual(runs.market.map(r => r.start), [0, 3600_000])
  })
})
