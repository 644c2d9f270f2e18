/**
 * Multi-GPU jobs (issue 39): an 8-GPU gold job's time from award to start (the renter opening
 * the job stream with its award until the provider's Accepted, which it sends once all eight
 * slots are the job's) on a simulated 8-GPU box where four 1-GPU bronze jobs run that it
 * displaces, against the same job on a free 8-GPU box. Real nodes on 127.0.0.1, the process
 * runner; each bronze job traps SIGTERM and writes a checkpoint, and in the last case ignores
 * it, so the provider's grace period (2 s here) bounds the wait.
 */
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { runAttempt, type AttemptResult, type JobPayload } from '../../src/exec/renter/attempt.js'
import { attestedGpus } from '../../src/exec/shared/records.js'
import { makeAward, type AwardOptions } from '../exec/fixtures.js'
import { BRONZE_HOLD, GPU_REPORT, bronzeStarted, capacityOf, runningJobs, startMultiGpuNetwork } from '../exec/multi-gpu-fixtures.js'
import { tempDir, waitFor } from '../utils/index.js'
import { percentile } from './stats.js'
import type { IdlegridNode } from '../../src/node/index.js'

const ROUNDS = 5
const GRACE_MS = 2_000

const median = (xs: number[]): number => percentile([...xs].sort((a, b) => a - b), 0.5)

/** A bronze job that ignores SIGTERM: only the SIGKILL at the end of the grace period stops it. */
const BRONZE_STUBBORN: JobPayload = {
  runtime: { command: ['/bin/sh', '-c', 'trap "" TERM; sleep 60 & wait; sleep 60'], timeoutMs: 60_000 },
  inputs: []
}

export default async function multiGpu (): Promise<Record<string, unknown>> {
  const tmp = await tempDir('idlegrid-bench-multi-gpu-')
  const net = await startMultiGpuNetwork(tmp.path, ['H100:80:8', 'H100:80:8'])
  let n = 0
  const attempt = async (
    r: number,
    p: IdlegridNode,
    payload: JobPayload,
    opts: AwardOptions
  ): Promise<AttemptResult> => {
    const renter = net.renters[r] as IdlegridNode
    return await runAttempt(makeAward(renter, p.peerId, opts), payload, { libp2p: renter.libp2p, privateKey: renter.privateKey, peerId: renter.peerId, dir: join(tmp.path, `a-${n++}`), idleMs: 10_000 })
  }
  const startMs = (res: AttemptResult): number => {
    if (res.outcome !== 'ok' || res.acceptedAt == null) throw new Error(`the 8-GPU job did not run: ${res.outcome} ${res.detail ?? ''}`)
    if (attestedGpus(res.attestation?.message as any).length !== 8) throw new Error('the 8-GPU job was not attested on 8 GPUs')
    return res.acceptedAt - res.startedAt
  }
  const displacing = async (p: IdlegridNode, bronze: JobPayload): Promise<{ ms: number, preempted: number }> => {
    const held = [0, 1, 2, 3].map(async () => await attempt(0, p, bronze, { tier: 'bronze' }))
    await waitFor(async () => runningJobs(p) === 4 && (bronze !== BRONZE_HOLD || await bronzeStarted(tmp.path, 0) === 4), { timeoutMs: 30_000, what: 'four bronze jobs running' })
    const ms = startMs(await attempt(1, p, GPU_REPORT, { tier: 'gold', gpus: 8 }))
    const preempted = (await Promise.all(held)).filter(b => b.outcome === 'preempted').length
    await waitFor(() => capacityOf(p).freeSlots() === 8, { what: 'the box free again' })
    // and the bronze jobs' work dirs gone, so the next round counts only its own
    await waitFor(async () => (await readdir(join(tmp.path, 'work-0'))).length === 0, { what: 'the bronze work dirs removed' })
    return { ms, preempted }
  }
  try {
    const [box, free] = net.providers as [IdlegridNode, IdlegridNode]
    const onFree: number[] = []
    const onBusy: number[] = []
    let preempted = 0
    for (let i = 0; i < ROUNDS; i++) {
      onFree.push(startMs(await attempt(1, free, GPU_REPORT, { tier: 'gold', gpus: 8 })))
      const d = await displacing(box, BRONZE_HOLD)
      onBusy.push(d.ms)
      preempted += d.preempted
    }
    const stubborn = await displacing(box, BRONZE_STUBBORN)
    return {
      rounds: ROUNDS,
      box: 'simulated 8 × H100 80 GB, process runner, 127.0.0.1',
      graceMs: GRACE_MS,
      freeBoxAwardToStartMs: median(onFree),
      freeBoxAwardToStartMsEach: onFree,
      displacingFourBronzeAwardToStartMs: median(onBusy),
      displacingFourBronzeAwardToStartMsEach: onBusy,
      displacementCostMs: median(onBusy) - median(onFree),
      bronzePreempted: `${preempted} of ${4 * ROUNDS}`,
      bronzeIgnoringSigtermAwardToStartMs: stubborn.ms,
      bronzeIgnoringSigtermPreempted: `${stubborn.preempted} of 4`
    }
  } finally {
    await net.stop()
    await tmp.cleanup()
  }
}
