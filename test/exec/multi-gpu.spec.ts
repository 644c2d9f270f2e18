/**
 * Multi-GPU jobs on real nodes (issue 39): a simulated 8-GPU box and a simulated 4-GPU box on
 * 127.0.0.1, jobs sent over /idlegrid/job/1.0.0 with real signatures. A job gets exactly its N
 * GPUs, the attestation names every one, a job of more GPUs than the box has is refused with
 * the reason, and an 8-GPU gold job displaces four 1-GPU bronze jobs at once.
 */
import { strict as assert } from 'node:assert'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { runAttempt, type AttemptResult, type JobPayload } from '../../src/exec/renter/attempt.js'
import { attestedGpus } from '../../src/exec/shared/records.js'
import { parseSimulatedGpus } from '../../src/capability/index.js'
import { sha256 } from '../../src/identity/index.js'
import { tempDir, waitFor, type InProcessNetwork } from '../utils/index.js'
import { makeAward, type AwardOptions } from './fixtures.js'
import { BRONZE_HOLD, GPU_REPORT, bronzeStarted, capacityOf, runningJobs, startMultiGpuNetwork } from './multi-gpu-fixtures.js'
import type { IdlegridNode } from '../../src/node/index.js'

describe('exec: multi-GPU jobs on simulated 8- and 4-GPU boxes (issue 39)', function () {
  this.timeout(120_000)
  let net: InProcessNetwork
  let tmp: { path: string, cleanup: () => Promise<void> }

  before(async () => {
    tmp = await tempDir('idlegrid-multi-gpu-')
    net = await startMultiGpuNetwork(tmp.path, ['H100:80:8', 'H100:80:4'])
  })

  afterEach(async () => {
    for (const p of net.providers) await waitFor(() => capacityOf(p).freeSlots() === capacityOf(p).totalSlots(), { what: 'the provider\'s slots free again' })
  })

  after(async () => {
    await net?.stop()
    await tmp?.cleanup()
  })

  const renter = (i: number): IdlegridNode => net.renters[i] as IdlegridNode
  const box8 = (): IdlegridNode => net.providers[0] as IdlegridNode
  const box4 = (): IdlegridNode => net.providers[1] as IdlegridNode
  const attempt = async (
    r: number,
    provider: IdlegridNode,
    payload: JobPayload,
    dir: string,
    opts: AwardOptions
  ): Promise<AttemptResult> =>
    await runAttempt(makeAward(renter(r), provider.peerId, opts), payload, {
      libp2p: renter(r).libp2p,
      privateKey: renter(r).privateKey,
      peerId: renter(r).peerId,
      dir: join(tmp.path, dir),
      idleMs: 10_000
    })
  // what each box's GPUs are called (GPU-sim-h100-<index>): the attestation names their sha256
  const uuidHashes = (box: string, indexes: number[]): string[] => indexes.map(i => Buffer.from(sha256((parseSimulatedGpus([box])[i] as { uuid: string }).uuid)).toString('hex'))

  it('a 4-GPU job on the 4-GPU box gets all four, and the attestation names every one', async () => {
    const res = await attempt(0, box4(), GPU_REPORT, 'four', { gpus: 4 })
    assert.equal(res.outcome, 'ok', res.detail)
    const [indices, count, cuda] = (await readFile(join(tmp.path, 'four', 'outputs', 'gpus.txt'), 'utf8')).trim().split('\n')
    assert.equal(indices, '0,1,2,3')
    assert.equal(count, '4')
    assert.equal(cuda, 'unset', 'simulated GPUs have no CUDA device to name')
    const att = res.attestation?.message
    assert.ok(att != null)
    assert.deepEqual(attestedGpus(att).map(g => Buffer.from(g.uuidHash).toString('hex')), uuidHashes('H100:80:4', [0, 1, 2, 3]))
    assert.deepEqual(att.gpu?.uuidHash, att.gpus[0]?.uuidHash, 'gpu is the first of gpus, for old readers')
    assert.ok(att.gpus.every(g => g.model === 'h100'))
  })

  it('a 1-GPU job is attested as before: gpu alone, gpus empty', async () => {
    const res = await attempt(0, box4(), GPU_REPORT, 'one', {})
    assert.equal(res.outcome, 'ok', res.detail)
    assert.equal((await readFile(join(tmp.path, 'one', 'outputs', 'gpus.txt'), 'utf8')).split('\n')[1], '1')
    assert.equal(res.attestation?.message.gpus.length, 0)
    assert.equal(attestedGpus(res.attestation?.message as any).length, 1)
  })

  it('an 8-GPU job sent to the 4-GPU box is refused at Start with the reason, and nothing is held', async () => {
    const res = await attempt(0, box4(), GPU_REPORT, 'too-many', { gpus: 8, tier: 'gold' })
    assert.equal(res.outcome, 'rejected')
    assert.match(res.detail ?? '', /needs 8 GPUs on one box, this provider has 4/)
    assert.equal(capacityOf(box4()).freeSlots(), 4)
  })

  it('an 8-GPU gold job displaces four 1-GPU bronze jobs at once: all four preempted, it gets all eight', async () => {
    const bronze = [0, 1, 2, 3].map(async i => await attempt(0, box8(), BRONZE_HOLD, `bronze-${i}`, { tier: 'bronze' }))
    // running, and their SIGTERM trap set (a notice before it would kill the shell with no checkpoint)
    await waitFor(async () => runningJobs(box8()) === 4 && await bronzeStarted(tmp.path, 0) === 4, { what: 'four bronze jobs running on the 8-GPU box' })
    assert.equal(capacityOf(box8()).freeSlots(), 4)
    assert.equal(capacityOf(box8()).preemptibleSlots(), 4)
    const gold = await attempt(1, box8(), GPU_REPORT, 'gold-8', { tier: 'gold', gpus: 8 })
    assert.equal(gold.outcome, 'ok', gold.detail)
    const [indices, count] = (await readFile(join(tmp.path, 'gold-8', 'outputs', 'gpus.txt'), 'utf8')).trim().split('\n')
    assert.equal(indices, '0,1,2,3,4,5,6,7')
    assert.equal(count, '8')
    assert.deepEqual(attestedGpus(gold.attestation?.message as any).map(g => Buffer.from(g.uuidHash).toString('hex')), uuidHashes('H100:80:8', [0, 1, 2, 3, 4, 5, 6, 7]))
    const ended = await Promise.all(bronze)
    assert.deepEqual(ended.map(b => b.outcome), ['preempted', 'preempted', 'preempted', 'preempted'], ended.map(b => b.detail).join('; '))
    // each bronze job had its notice and wrote its checkpoint on its own GPU
    const checkpoints = await Promise.all([0, 1, 2, 3].map(async i => (await readFile(join(tmp.path, `bronze-${i}`, 'outputs', 'checkpoint.txt'), 'utf8')).trim()))
    assert.deepEqual(checkpoints.sort(), ['0', '1', '2', '3'])
    assert.ok(ended.every(b => b.attestation?.message.preemptible === true))
  })

  it('a 4-GPU bronze job on a box with 3 free GPUs is refused, and a gold one displaces a 4-GPU bronze job as a whole', async () => {
    const hold = attempt(0, box4(), BRONZE_HOLD, 'hold-1', { tier: 'bronze' })
    await waitFor(() => runningJobs(box4()) === 1, { what: 'a bronze job on the 4-GPU box' })
    const refused = await attempt(0, box4(), GPU_REPORT, 'bronze-4', { tier: 'bronze', gpus: 4 })
    assert.equal(refused.outcome, 'rejected')
    assert.match(refused.detail ?? '', /needs 4 GPUs, 3 of 4 free/)
    // gold takes the three free GPUs and the bronze job's
    const gold = await attempt(1, box4(), GPU_REPORT, 'gold-4', { tier: 'gold', gpus: 4 })
    assert.equal(gold.outcome, 'ok', gold.detail)
    assert.equal((await hold).outcome, 'preempted')
    // a 4-GPU bronze job is preempted once, as a whole, and gives all four back
    const big = attempt(0, box4(), BRONZE_HOLD, 'bronze-big', { tier: 'bronze', gpus: 4 })
    await waitFor(() => runningJobs(box4()) === 1 && capacityOf(box4()).freeSlots() === 0, { what: 'a 4-GPU bronze job holding the box' })
    const silver = await attempt(1, box4(), GPU_REPORT, 'silver-1', { tier: 'silver' })
    assert.equal(silver.outcome, 'ok', silver.detail)
    const bigEnd = await big
    assert.equal(bigEnd.outcome, 'preempted')
    assert.equal(attestedGpus(bigEnd.attestation?.message as any).length, 4)
  })
})
