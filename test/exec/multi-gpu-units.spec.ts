/**
 * Multi-GPU jobs, piece by piece (issue 39): the slot scheduler's all-or-none leases, the
 * runners' GPU arguments, the provider's bid decision, the renter's "no provider has N GPUs",
 * the job file's `gpus:` and the wire field's bound.
 */
import { strict as assert } from 'node:assert'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { DOMAIN, jobShardOf } from '../../protocols/ids.js'
import { DeclineReason, JobRequest } from '../../protocols/market.js'
import { parseSimulatedGpus } from '../../src/capability/index.js'
import { parsePolicy } from '../../src/capability/policy/policy.js'
import { providerProfile } from '../../src/capability/policy/profile.js'
import { ConfigError } from '../../src/config/index.js'
import { dockerRunArgs } from '../../src/exec/runners/docker.js'
import { processJobEnv } from '../../src/exec/runners/environment.js'
import { SlotScheduler } from '../../src/exec/provider/scheduler.js'
import type { Lease } from '../../src/exec/provider/slot-lease.js'
import { TelemetrySampler } from '../../src/exec/provider/telemetry.js'
import { openEnvelope, sealEnvelope } from '../../src/identity/index.js'
import { noBidsReason } from '../../src/market/renter/auction-report.js'
import { BidEngine } from '../../src/market/provider/bid-engine.js'
import { parseJobSpec, toJobRequest } from '../../src/market/renter/job-spec.js'
import { matchJob, type CapacitySnapshot } from '../../src/market/provider/bid-declines.js'
import { readJobRequest } from '../../src/market/shared/messages.js'
import { validateJobRequest } from '../../src/market/shared/validation.js'
import { waitFor } from '../utils/index.js'
import type { GpuTelemetry } from '../../src/capability/index.js'
import type { RunSpec } from '../../src/exec/runners/index.js'

const gpus = (n: number): Array<{ index: number, uuid: string, simulated: boolean }> => Array.from({ length: n }, (_, index) => ({ index, uuid: `GPU-${index}`, simulated: true }))
const lease = (x: ReturnType<SlotScheduler['reserve']>): Lease => { if ('refused' in x) assert.fail(x.detail); return x }
const settled = async (p: Promise<void>): Promise<boolean> =>
  await Promise.race([
    p.then(() => true),
    new Promise<boolean>(resolve =>
      setImmediate(() => {
        resolve(false)
      })
    )
  ])

describe('exec: the slot scheduler holds N GPUs per lease (issue 39)', () => {
  it('a 4-GPU job takes four free slots at once and gives all four back', async () => {
    const s = new SlotScheduler({ gpus: gpus(8) })
    const l = lease(s.reserve({ key: 'A/1', tier: 'silver', gpus: 4 }))
    assert.deepEqual(l.gpus.map(g => g.index), [0, 1, 2, 3])
    assert.equal(l.gpu.index, 0)
    assert.equal(await settled(l.ready), true)
    assert.equal(s.freeCount(), 4)
    l.release()
    assert.equal(s.freeCount(), 8)
  })

  it('refuses a job of more GPUs than the box has (gpu-count), and a bronze one that does not fit the free slots (no-capacity), holding nothing', () => {
    const s = new SlotScheduler({ gpus: gpus(4) })
    const big = s.reserve({ key: 'A/1', tier: 'gold', gpus: 8 })
    assert.ok('refused' in big && big.refused === 'gpu-count' && big.detail === 'needs 8 GPUs on one box, this provider has 4')
    lease(s.reserve({ key: 'A/2', tier: 'bronze' }))
    const bronze = s.reserve({ key: 'A/3', tier: 'bronze', gpus: 4 })
    assert.ok('refused' in bronze && bronze.refused === 'no-capacity' && /needs 4 GPUs, 3 of 4 free/.test(bronze.detail))
    assert.equal(s.freeCount(), 3)
    assert.equal(s.placement({ tier: 'bronze', gpus: 4 }), undefined)
    assert.deepEqual(s.placement({ tier: 'gold', gpus: 4 })?.map(g => g.index), [0, 1, 2, 3])
  })

  it('a gold 8-GPU job displaces four 1-GPU bronze jobs atomically: one notice each, ready once all four released', async () => {
    const s = new SlotScheduler({ gpus: gpus(8), graceMs: 5_000 })
    const bronze = [0, 1, 2, 3].map(i => lease(s.reserve({ key: `B/${i}`, tier: 'bronze' })))
    const notices = bronze.map(() => 0)
    bronze.forEach((b, i) => { b.onPreempt(n => { notices[i]++; assert.equal(n.reason, 'tier'); assert.equal(n.graceMs, 5_000) }) })
    const gold = lease(s.reserve({ key: 'G/1', tier: 'gold', gpus: 8 }, { deferDisplacement: true }))
    assert.deepEqual(gold.gpus.map(g => g.index), [0, 1, 2, 3, 4, 5, 6, 7])
    assert.deepEqual(notices, [0, 0, 0, 0], 'deferred: nobody told to stop before claim()')
    assert.equal(s.freeCount(), 0, 'the four free slots are the gold job\'s already')
    gold.claim()
    assert.deepEqual(notices, [1, 1, 1, 1])
    for (const b of bronze.slice(0, 3)) b.release()
    assert.equal(await settled(gold.ready), false, 'not ready while one bronze job still holds its slot')
    bronze[3]?.release()
    assert.equal(await settled(gold.ready), true)
    assert.deepEqual([...s.gpusHeldBy('G/')].sort(), [0, 1, 2, 3, 4, 5, 6, 7])
    gold.release()
    assert.equal(s.freeCount(), 8)
  })

  it('a multi-GPU bronze job gets one notice however many of its slots are taken, and a pause stops it once', () => {
    const s = new SlotScheduler({ gpus: gpus(4) })
    const big = lease(s.reserve({ key: 'B/1', tier: 'bronze', gpus: 4 }))
    let notices = 0
    big.onPreempt(() => { notices++ })
    lease(s.reserve({ key: 'S/1', tier: 'silver', gpus: 2 }))
    assert.equal(notices, 1)
    s.setPause('thermal', true, 'too hot')
    assert.equal(notices, 1, 'already stopping: no second notice')
  })

  it('a displacing job that gives up before it is ready releases the free slots it held and leaves the rest to come free', () => {
    const s = new SlotScheduler({ gpus: gpus(4) })
    const b = lease(s.reserve({ key: 'B/1', tier: 'bronze', gpus: 2 }))
    const g = lease(s.reserve({ key: 'G/1', tier: 'gold', gpus: 4 }))
    assert.equal(s.freeCount(), 0)
    g.release()
    assert.equal(s.freeCount(), 2)
    b.release()
    assert.equal(s.freeCount(), 4)
  })
})

describe('exec: runners give a job every one of its GPUs (issue 39)', () => {
  const base: RunSpec = { jobId: 'ab'.repeat(16), workDir: '/tmp/x', command: ['run'], image: 'ghcr.io/acme/train:1', env: {}, timeoutMs: 60_000, graceMs: 10_000 }
  const real = [0, 1, 2, 3].map(index => ({ index, uuid: `GPU-${index}aaa-bbbb`, simulated: false }))

  it('docker: --gpus names every UUID, quoted as one CSV value', () => {
    const args = dockerRunArgs({ ...base, gpu: real[0], gpus: real }, 'n', { allowedImages: [] })
    const at = args.indexOf('--gpus')
    assert.equal(args[at + 1], '"device=GPU-0aaa-bbbb,GPU-1aaa-bbbb,GPU-2aaa-bbbb,GPU-3aaa-bbbb"')
    assert.equal(args.filter(a => a === '--gpus').length, 1)
    assert.ok(args.includes('IDLEGRID_GPU_INDICES=0,1,2,3') && args.includes('IDLEGRID_GPU_COUNT=4'))
    assert.equal(dockerRunArgs({ ...base, gpu: real[0] }, 'n', { allowedImages: [] })[at + 1], 'device=GPU-0aaa-bbbb', 'one GPU: as before')
  })

  it('process: CUDA_VISIBLE_DEVICES holds every UUID and no other; simulated GPUs set none', () => {
    const env = processJobEnv({ ...base, image: undefined, gpu: real[0], gpus: real })
    assert.equal(env.CUDA_VISIBLE_DEVICES, 'GPU-0aaa-bbbb,GPU-1aaa-bbbb,GPU-2aaa-bbbb,GPU-3aaa-bbbb')
    assert.equal(env.IDLEGRID_GPU_INDEX, '0')
    assert.equal(env.IDLEGRID_GPU_INDICES, '0,1,2,3')
    const sim = processJobEnv({ ...base, image: undefined, gpu: { ...real[0] as any, simulated: true } })
    assert.equal(sim.CUDA_VISIBLE_DEVICES, undefined)
    assert.equal(sim.IDLEGRID_GPU_COUNT, '1')
  })
})

describe('exec: telemetry of a multi-GPU job covers every GPU (issue 39)', () => {
  it('one sample: mean utilisation, highest temperature, summed power of the job\'s GPUs, none of the others', async () => {
    const read = async (): Promise<GpuTelemetry[]> => [
      { index: 0, utilizationPct: 100, temperatureC: 60, powerDrawW: 300 },
      { index: 1, utilizationPct: 50, temperatureC: 80, powerDrawW: 200 },
      { index: 2, utilizationPct: 0, temperatureC: 95, powerDrawW: 700 }
    ]
    let t = 0
    const sampler = new TelemetrySampler({
      gpuIndex: 0,
      gpuIndices: [0, 1],
      simulated: false,
      read,
      intervalMs: 3_600_000,
      now: () => t
    })
    sampler.start()
    await waitFor(() => sampler.errors === 0 && (sampler as any).inFlight == null, { what: 'the first sample' })
    t = 1000
    await (sampler as any).sample()
    const s = await sampler.stop()
    assert.equal(s.samples, 2)
    assert.equal(s.avgUtilPpm, 750_000)
    assert.equal(s.maxTempC, 80, 'GPU 2 is not the job\'s')
    assert.equal(s.energyMj, 500_000n, '(300 + 200) W × 1 s')
  })
})

describe('market: multi-GPU jobs in the job file, on the wire and in the bid decision (issue 39)', () => {
  const profile = (box: string): ReturnType<typeof providerProfile> => providerProfile(parsePolicy({ region: 'eu-west', priceFloor: 1, images: ['*'] }), parseSimulatedGpus([box]))
  const snapshot = (total: number, free: number, preemptible = 0): CapacitySnapshot => ({
    freeSlots: free,
    preemptibleSlots: preemptible,
    totalSlots: total,
    thermalOk: true,
    powerOk: true
  })
  const renter = new Uint8Array(38)
  const job = (raw: Record<string, unknown>): JobRequest => toJobRequest(parseJobSpec({ runtime: { image: 'ghcr.io/acme/train:1' }, ...raw }), { renter })

  it('gpus: N in the job file and --gpus; 0, 99 and words are refused with the field named', () => {
    assert.equal(parseJobSpec({ runtime: { command: ['x'] } }).gpus, 1)
    assert.equal(parseJobSpec({ gpus: 8, runtime: { command: ['x'] } }).gpus, 8)
    assert.equal(parseJobSpec({ gpus: '4', runtime: { command: ['x'] } }).gpus, 4, 'as the --gpus flag gives it')
    for (const bad of [0, 99, 'four', 2.5, -1, true]) {
      assert.throws(() => parseJobSpec({ gpus: bad, runtime: { command: ['x'] } }), (err: unknown) =>
        err instanceof ConfigError && err.field === 'gpus' && /expected a whole number of GPUs from 1 to 16 \(all on one box\)/.test(err.message), `gpus: ${String(bad)}`)
    }
  })

  it('the wire field: absent for one GPU (the same bytes as before), N otherwise; more than 16 is ignored on gossip', async () => {
    assert.equal(job({}).gpus, 0)
    assert.equal(job({ gpus: 8 }).gpus, 8)
    const key = await generateKeyPair('Ed25519')
    const peerId = peerIdFromPrivateKey(key)
    const now = Date.now()
    const signed = (gpus: number): ReturnType<typeof openEnvelope> => openEnvelope(sealEnvelope(key, peerId, DOMAIN.jobRequest, JobRequest.encode({ ...toJobRequest(parseJobSpec({ runtime: { command: ['x'] } }), { renter: peerId.toMultihash().bytes, now }), gpus })), { domain: DOMAIN.jobRequest })
    assert.equal(readJobRequest(signed(16), now).message.gpus, 16)
    assert.throws(() => readJobRequest(signed(17), now), /the job asks 17 GPUs, at most 16 may be asked/)
    const topic = jobShardOf(undefined)
    assert.equal(validateJobRequest(signed(17), topic, now).action, 'ignore')
    assert.equal(validateJobRequest(signed(8), topic, now).action, 'accept')
  })

  it('a provider declines GPU_COUNT when the job needs more GPUs than its box has (or has of the asked kind)', () => {
    const r = matchJob(profile('H100:80:4'), job({ gpus: 8, tier: 'gold' }), snapshot(4, 4), Date.now())
    assert.ok(!r.ok && r.reason === DeclineReason.GPU_COUNT && r.detail === 'needs 8 GPUs on one box, this provider has 4')
    const mixed = providerProfile(parsePolicy({ region: 'eu-west', priceFloor: 1, images: ['*'] }), parseSimulatedGpus(['H100:80:2', 'RTX 4090:24:4']))
    const m = matchJob(mixed, job({ gpus: 4, constraints: { minVramGb: 40 } }), snapshot(6, 6), Date.now())
    assert.ok(!m.ok && m.reason === DeclineReason.GPU_COUNT && /needs 4 GPUs of 37\.\d GiB on one box, this provider has 2 such/.test(m.detail), !m.ok ? m.detail : '')
    assert.ok(matchJob(profile('H100:80:8'), job({ gpus: 8 }), snapshot(8, 8), Date.now()).ok)
  })

  it('tier rules hold for all N: bronze needs N free; gold and silver may count bronze slots to displace', () => {
    const p = profile('H100:80:8')
    const bronze = matchJob(p, job({ gpus: 8, tier: 'bronze' }), snapshot(8, 4, 4), Date.now())
    assert.ok(!bronze.ok && bronze.reason === DeclineReason.NO_CAPACITY && bronze.detail === 'needs 8 GPUs, 4 of 8 free')
    assert.ok(matchJob(p, job({ gpus: 8, tier: 'gold' }), snapshot(8, 4, 4), Date.now()).ok)
    const busy = matchJob(p, job({ gpus: 8, tier: 'gold' }), snapshot(8, 4, 3), Date.now())
    assert.ok(!busy.ok && busy.reason === DeclineReason.NO_CAPACITY && busy.detail === 'needs 8 GPUs, 4 of 8 free and 3 preemptible')
  })

  it('the bid stays per GPU-hour; expected earnings count every GPU', () => {
    const capacity = {
      freeSlots: () => 8,
      preemptibleSlots: () => 0,
      totalSlots: () => 8,
      busySlots: () => 0,
      thermalOk: () => true
    }
    const engine = new BidEngine({ profile: () => profile('H100:80:8'), capacity })
    const j = job({ gpus: 8, estimatedMinutes: 60 })
    const d = engine.decide(j)
    assert.ok(d.bid)
    engine.recordWin(2_000_000n, j)
    assert.equal(engine.stats().expectedEarningsUsd, 16, '2 USD/GPU-hour × 8 GPUs × 1 h')
  })

  it('the renter says no provider has N GPUs when every answer is GPU_COUNT', () => {
    const counts = { asked: 3, answered: 3, declines: { 'gpu-count': 3 }, details: [{ provider: 'p', reason: 'gpu-count', detail: 'needs 8 GPUs on one box, this provider has 4' }] }
    assert.equal(noBidsReason(0, [], counts, 8), 'no provider has 8 GPUs on one box that fit the job: all 3 of 3 asked have fewer (e.g. "needs 8 GPUs on one box, this provider has 4")')
    assert.equal(noBidsReason(0, [], { ...counts, declines: { 'gpu-count': 2, 'no-capacity': 1 } }, 8), 'no provider bid; 3 of 3 asked said why')
  })
})
