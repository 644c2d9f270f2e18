/**
 * Input cache benchmark (issue 39): five successive jobs of one renter reading the same input
 * (1 GiB; IDLEGRID_BENCH_CACHE_MIB to change) on the same provider, two in-process libp2p nodes
 * on loopback with the process runner, once with the provider's input cache and once without
 * (the same run, the same cores). Per job: the input bytes the renter sent and the time to
 * start (from the attempt's start, the inputs already hashed once for the whole job as
 * `submit` does, to the provider's Accepted). Goals: ≤ 1.05 × the input in all with the cache
 * (not 5 ×), and jobs 2–5 start in ≤ 10 % of job 1's time.
 */
import { randomBytes } from 'node:crypto'
import { chmod, open } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { InputCache } from '../../src/cache/index.js'
import { inputManifest, runAttempt, type JobPayload } from '../../src/exec/index.js'
import { ProcessRunner } from '../../src/exec/runners/index.js'
import { execProviderServices, makeAward } from '../exec/fixtures.js'
import { startInProcessNetwork, tempDir } from '../utils/index.js'
import type { IdlegridNode } from '../../src/node/index.js'

const MiB = 1024 * 1024
const JOBS = 5

interface JobFigure { sentMiB: number, heldMiB: number, startMs: number }

async function writeRandom (file: string, bytes: number): Promise<void> {
  const fh = await open(file, 'w')
  try {
    for (let left = bytes; left > 0; left -= 16 * MiB) await fh.write(randomBytes(Math.min(left, 16 * MiB)))
  } finally {
    await fh.close()
  }
}

export default async function inputCacheBench (): Promise<Record<string, unknown>> {
  const sizeMiB = Number(process.env.IDLEGRID_BENCH_CACHE_MIB ?? 1024)
  const tmp = await tempDir('idlegrid-bench-cache-')
  await chmod(tmp.path, 0o711)
  const provider = (i: number, cache?: InputCache): Record<string, (components: any) => unknown> =>
    execProviderServices(
      {
        runner: new ProcessRunner(),
        gpus: [{ index: 0, uuid: `GPU-sim-bench-cache-${i}`, simulated: true, modelKey: 'h100-80gb' }],
        workRoot: join(tmp.path, `work-${i}`),
        requireAccepted: false,
        ...(cache != null ? { inputCache: cache } : {})
      },
      join(tmp.path, `provider-${i}`)
    )
  const cache = new InputCache({ dir: join(tmp.path, 'work-0', 'input-cache'), budgetBytes: 2 * sizeMiB * MiB })
  const net = await startInProcessNetwork({
    providers: 2,
    renters: 1,
    extensions: (role, i) => role === 'provider' ? { services: provider(i, i === 0 ? cache : undefined) } : {}
  })
  try {
    const renter = net.renters[0] as IdlegridNode
    for (const p of net.providers) await renter.libp2p.dial(p.libp2p.getMultiaddrs()[0] as any)
    const file = join(tmp.path, 'data.bin')
    await writeRandom(file, sizeMiB * MiB)
    const inputs = [{ path: 'data.bin', file }]
    const payload: JobPayload = { runtime: { command: ['/bin/sh', '-c', 'test -s inputs/data.bin && echo read'], timeoutMs: 600_000 }, inputs, manifest: await inputManifest(inputs) }
    const series = async (target: IdlegridNode, label: string): Promise<JobFigure[]> => {
      const out: JobFigure[] = []
      for (let j = 0; j < JOBS; j++) {
        let sent = 0
        let held = 0
        let acceptedAt = 0
        const started = Date.now()
        const result = await runAttempt(makeAward(renter, target.peerId), payload, {
          libp2p: renter.libp2p,
          privateKey: renter.privateKey,
          peerId: renter.peerId,
          dir: join(tmp.path, `${label}-${j}`),
          onEvent: e => {
            if (e.type === 'sending') { sent = e.sentBytes; held = e.cachedBytes ?? 0 }
            if (e.type === 'accepted') acceptedAt = Date.now()
          }
        })
        if (result.outcome !== 'ok') throw new Error(`${label} job ${j + 1} ended ${result.outcome}: ${result.detail ?? ''}`)
        out.push({
          sentMiB: Math.round((sent / MiB) * 10) / 10,
          heldMiB: Math.round((held / MiB) * 10) / 10,
          startMs: acceptedAt - started
        })
      }
      return out
    }
    const cached = await series(net.providers[0] as IdlegridNode, 'cached')
    const plain = await series(net.providers[1] as IdlegridNode, 'plain')
    const totalMiB = (s: JobFigure[]): number => Math.round(s.reduce((sum, f) => sum + f.sentMiB, 0) * 10) / 10
    const laterVsFirst = (s: JobFigure[]): number => {
      const later = s.slice(1).reduce((sum, f) => sum + f.startMs, 0) / (s.length - 1)
      return Math.round(later / Math.max(1, (s[0] as JobFigure).startMs) * 1000) / 1000
    }
    return {
      inputMiB: sizeMiB,
      jobs: JOBS,
      withCache: cached,
      withoutCache: plain,
      sentMiBWithCache: totalMiB(cached),
      sentMiBWithoutCache: totalMiB(plain),
      /** goal ≤ 1.05 */
      sentVsInputWithCache: Math.round(totalMiB(cached) / sizeMiB * 1000) / 1000,
      sentVsInputWithoutCache: Math.round(totalMiB(plain) / sizeMiB * 1000) / 1000,
      /** mean time to start of jobs 2–5 over job 1's; goal ≤ 0.10 */
      startJobs2to5VsJob1WithCache: laterVsFirst(cached),
      startJobs2to5VsJob1WithoutCache: laterVsFirst(plain),
      cache: cache.stats(),
      loadAverage1m: Math.round((loadavg()[0] ?? 0) * 100) / 100
    }
  } finally {
    await net.stop()
    await tmp.cleanup()
  }
}
