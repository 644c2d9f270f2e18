import * as assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { markdownReport, parseScenario, runScenario } from '../../src/sim/index.js'
import { LruStore, drawCatalogue, parseDataParams, DATA_DEFAULTS } from '../../src/sim/model/data-cache.js'
import { Rng } from '../../src/sim/model/rng.js'
import { ConfigError } from '../../src/config/index.js'
import { BIN_PATH, tempDir } from '../utils/index.js'
import { NODE_HEADER, POD_HEADER, mixedNodes, mixedPods, node, pod, tinyScenario } from './fixtures.js'
import type { SimJob } from '../../src/sim/model/population.js'

const GIB = 2 ** 30

describe('sim: data and the providers\' input caches', function () {
  this.timeout(60_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  beforeEach(async () => { dir = await tempDir('idlegrid-sim-data-') })
  afterEach(async () => { await dir.cleanup() })

  // one renter, every task reads the renter's one training dataset of exactly 2 GiB (σ 0), no public data
  const oneDataset = { datasetsPerRenter: 1, reuse: 1, publicShare: 0, training: { medianGiB: 2, sigma: 0 } }
  // one owner offering always (no idle windows: a closed one would make a task wait)
  const oneRenter = { owners: 1, ownWorkload: 0, renters: 1, regions: [{ name: 'eu-west', timeZone: 'UTC' }], idleWindowsShare: 0 }
  // four bronze tasks one after another on one 1-GPU provider: each ends before the next arrives
  const fourInARow = [pod(0, 'BE', 0, 600), pod(1, 'BE', 1200, 600), pod(2, 'BE', 2400, 600), pod(3, 'BE', 3600, 600)]

  it('hand-checked: a dataset read by four tasks on one provider moves once with the cache, four times without', async () => {
    const scenario = await tinyScenario(dir.path, [node(0, 1)], fourInARow, {
      population: oneRenter,
      data: { ...oneDataset, cacheGiB: 10 }
    })
    const { report } = await runScenario(scenario)
    const data = report.data
    assert.ok(data != null)
    assert.equal(report.market.tiers.bronze.served, 4)
    // on: job 1 moves 2 GiB, jobs 2–4 find it held; off: 4 × 2 GiB
    assert.deepEqual(
      {
        awards: data.cacheOn.awards,
        moved: data.cacheOn.movedGiB,
        needed: data.cacheOn.neededGiB,
        hits: data.cacheOn.hitRatio,
        byteHits: data.cacheOn.byteHitRatio
      },
      { awards: 4, moved: 2, needed: 8, hits: 0.75, byteHits: 0.75 }
    )
    assert.deepEqual(
      {
        awards: data.cacheOff.awards,
        moved: data.cacheOff.movedGiB,
        needed: data.cacheOff.neededGiB,
        hits: data.cacheOff.hitRatio
      },
      { awards: 4, moved: 8, needed: 8, hits: 0 }
    )
    assert.deepEqual(data.cacheOn.movedPerAwardGiB, { mean: 0.5, p50: 0, p95: 2 })
    assert.deepEqual(data.cacheOff.movedPerAwardGiB, { mean: 2, p50: 2, p95: 2 })
    // 2 GiB at 1 Gbit/s is 17.18 s of transfer: without the cache every start waits for it, with it only the first
    const transfer = 2 * GIB * 8 / 1e9
    const off = data.cacheOff.timeToStartSeconds
    const on = data.cacheOn.timeToStartSeconds
    assert.ok(off.p50 >= transfer && off.p50 - on.p50 >= transfer - 0.01, `off ${JSON.stringify(off)} on ${JSON.stringify(on)}`)
    assert.ok(on.p95 >= transfer)
    assert.ok(markdownReport(report).includes('## Data and the input cache'))
  })

  it('hand-checked: the ranking counts what a provider holds, so a dearer holder wins over a cheaper provider that would have to receive the data', async () => {
    // a P100 (floor 0.17) and a T4 (floor 0.15); the first task must run on the P100, the next three take either:
    // held data discounts the P100's score by 20 % (0.17 × 0.8 < 0.15), so with the cache they stay there
    const pods = [pod(0, 'BE', 0, 600, { spec: 'P100' }), pod(1, 'BE', 1200, 600), pod(2, 'BE', 2400, 600), pod(3, 'BE', 3600, 600)]
    const scenario = await tinyScenario(dir.path, [node(0, 1, 'P100'), node(1, 1, 'T4')], pods, {
      population: { ...oneRenter, owners: 2 },
      market: { floorUsd: { 'p100-16gb': 0.17, 't4-16gb': 0.15 }, reputationRefreshMinutes: 10_080 },
      data: { ...oneDataset, cacheGiB: 10 }
    })
    const { report, runs, providers } = await runScenario(scenario, { recordRuns: true })
    const data = report.data
    assert.ok(data != null)
    const models = runs.market.sort((a, b) => a.start - b.start).map(r => providers[r.provider]?.modelKey)
    assert.deepEqual(models, ['p100-16gb', 'p100-16gb', 'p100-16gb', 'p100-16gb'])
    // on: 2 GiB once (without the locality term the T4 would win tasks 2–4 and receive it too: 4 GiB)
    assert.deepEqual({ moved: data.cacheOn.movedGiB, hits: data.cacheOn.hitRatio }, { moved: 2, hits: 0.75 })
    // off: nothing is held, the T4 is cheaper and wins tasks 2–4, every award moves 2 GiB
    assert.deepEqual({ moved: data.cacheOff.movedGiB, hits: data.cacheOff.hitRatio }, { moved: 8, hits: 0 })
    const off = await runScenario(scenario, { recordRuns: true, data: { cache: false } })
    assert.deepEqual(off.runs.market.sort((a, b) => a.start - b.start).map(r => off.providers[r.provider]?.modelKey), ['p100-16gb', 't4-16gb', 't4-16gb', 't4-16gb'])
  })

  it('the cache budget holds: a dataset bigger than the budget is never kept, and an LRU store never exceeds its budget', async () => {
    const scenario = await tinyScenario(dir.path, [node(0, 1)], fourInARow, {
      population: oneRenter,
      data: { ...oneDataset, cacheGiB: 1 }
    })
    const { report } = await runScenario(scenario)
    const data = report.data
    assert.ok(data != null)
    assert.equal(data.cacheOn.movedGiB, 8)
    assert.equal(data.cacheOn.hitRatio, 0)
    assert.equal(data.cacheOn.peakCacheGiB, 0)

    // budget 10: a(4) b(4) fit; c(4) evicts a (least recent); a again misses and evicts b; c is still held
    const store = new LruStore(10)
    assert.deepEqual([store.use(1, 4), store.use(2, 4), store.use(1, 4), store.use(3, 4)], [false, false, true, false])
    assert.deepEqual([store.has(1), store.has(2), store.has(3)], [true, false, true])
    assert.equal(store.use(2, 4), false)
    assert.deepEqual([store.has(1), store.has(2), store.has(3)], [false, true, true])
    assert.equal(store.use(3, 4), true)
    assert.equal(store.use(4, 11), false)
    assert.equal(store.has(4), false)
    assert.equal(store.usedBytes, 8)
    assert.equal(store.evictions, 2)
    assert.ok(store.peakBytes <= 10)
  })

  it('keeps every provider within its budget on a busier run, and the cache moves fewer bytes than no cache', async () => {
    const scenario = await tinyScenario(dir.path, mixedNodes(10), mixedPods(400), {
      population: { owners: 3, ownWorkload: 0.3, renters: 4, regions: [{ name: 'eu-west', timeZone: 'UTC' }] },
      data: { cacheGiB: 20 }
    })
    const { report } = await runScenario(scenario)
    const data = report.data
    assert.ok(data != null)
    assert.ok(data.cacheOn.awards > 100)
    assert.ok(data.cacheOn.peakCacheGiB <= 20)
    assert.ok(data.cacheOn.evictions > 0, 'a 20 GiB budget fills up')
    assert.equal(data.cacheOff.movedGiB, data.cacheOff.neededGiB)
    assert.ok(data.cacheOn.movedGiB < data.cacheOff.movedGiB)
    assert.ok(data.cacheOn.hitRatio > 0)
  })

  it('one seed gives the same data figures; another seed other ones; without a data section nothing is modelled', async () => {
    const pop = { owners: 3, ownWorkload: 0.3, renters: 4, regions: [{ name: 'eu-west', timeZone: 'UTC' }] }
    const scenario = await tinyScenario(dir.path, mixedNodes(8), mixedPods(200), { population: pop, data: {} })
    const a = await runScenario(scenario)
    const b = await runScenario(scenario)
    assert.equal(JSON.stringify(b.report), JSON.stringify(a.report))
    const c = await runScenario(scenario, { seed: 99 })
    assert.notDeepEqual(c.report.data, a.report.data)
    const plain = await tinyScenario(dir.path, mixedNodes(8), mixedPods(200), { population: pop })
    assert.equal((await runScenario(plain)).report.data, null)
    // a run option models data where the scenario does not, and picks the market run's cache
    const off = await runScenario(plain, { data: { cache: false, cacheGiB: 50 } })
    assert.deepEqual(
      { cache: off.report.data?.params.cache, gib: off.report.data?.params.cacheGiB },
      { cache: false, gib: 50 }
    )
  })

  it('draws datasets as stated: public ones are shared across renters, a renter reads only its own private ones', () => {
    const renters = ['r0', 'r1', 'r2']
    const jobs = Array.from({ length: 3000 }, (_, i) => ({ renter: renters[i % 3], task: { qos: i % 2 === 0 ? 'BE' : 'LS' } })) as unknown as SimJob[]
    const params = { ...DATA_DEFAULTS, datasetsPerRenter: 2, reuse: 1, publicShare: 0.5, publicDatasets: 3 }
    const cat = drawCatalogue(jobs, params, new Rng(5))
    const readers = new Map<number, Set<string>>()
    for (const [j, job] of jobs.entries()) {
      const id = cat.datasetOfJob[j] as number
      if (!readers.has(id)) readers.set(id, new Set())
      readers.get(id)?.add(job.renter)
    }
    // 2 kinds × 3 public, and 3 renters × 2 kinds × 2 private
    assert.equal(cat.bytes.length, 6 + 12)
    for (const [id, who] of readers) {
      if (cat.isPublic[id] === 1) assert.equal(who.size, 3)
      else assert.equal(who.size, 1)
    }
    const share = cat.datasetOfJob.filter(id => cat.isPublic[id] === 1).length / jobs.length
    assert.ok(share > 0.45 && share < 0.55, `public share ${share}`)
    assert.throws(() => parseDataParams({ reuse: 2 }), (err: Error) => err instanceof ConfigError && err.message.includes('data.reuse'))
    assert.throws(() => parseScenario({ trace: { nodes: 'n', tasks: 't' }, data: { cacheGB: 1 } }, dir.path), /data/)
  })

  it('the sim command: --data-cache and --cache-gib set the model, the data table is printed, a bad value exits 2', async () => {
    await writeFile(join(dir.path, 'nodes.csv'), [NODE_HEADER, ...mixedNodes(6)].join('\n'))
    await writeFile(join(dir.path, 'pods.csv'), [POD_HEADER, ...mixedPods(120)].join('\n'))
    await writeFile(join(dir.path, 's.yaml'), 'name: data\ntrace: { nodes: nodes.csv, tasks: pods.csv }\npopulation: { owners: 2, renters: 3 }\n')
    const sim = async (args: string[]): Promise<{ code: number, stdout: string, stderr: string }> =>
      await new Promise(resolve => {
        execFile(process.execPath, [BIN_PATH, 'sim', join(dir.path, 's.yaml'), ...args], { timeout: 60_000 }, (err: any, stdout, stderr) => {
          resolve({ code: err == null ? 0 : Number(err.code ?? 1), stdout, stderr })
        })
      })
    const json = await sim(['--data-cache', 'off', '--cache-gib', '30', '--json'])
    assert.equal(json.code, 0, json.stderr)
    const report = JSON.parse(json.stdout.trim().split('\n')[0] as string)
    assert.deepEqual({ cache: report.data.params.cache, gib: report.data.params.cacheGiB }, { cache: false, gib: 30 })
    assert.equal(report.data.cacheOff.movedGiB, report.data.cacheOff.neededGiB)
    const text = await sim(['--cache-gib', '30'])
    assert.equal(text.code, 0, text.stderr)
    assert.ok(text.stdout.includes('| on, 30 GiB per provider |') || text.stderr.includes('| on, 30 GiB per provider |'))
    const none = await sim(['--json'])
    assert.equal(JSON.parse(none.stdout.trim().split('\n')[0] as string).data, null)
    const bad = await sim(['--data-cache', 'maybe'])
    assert.equal(bad.code, 2)
    assert.ok(bad.stderr.includes('data-cache'))
  })
})
