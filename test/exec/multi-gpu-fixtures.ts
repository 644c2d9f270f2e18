/**
 * Multi-GPU jobs on real nodes (issue 39): providers on 127.0.0.1 whose boxes are simulated
 * multi-GPU machines (`--simulate-gpu H100:80:8`), the process runner, and the jobs the
 * multi-GPU spec and benchmark run on them.
 */
import { chmod, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { CAPACITY_SERVICE, parseSimulatedGpus, type CapacitySource } from '../../src/capability/index.js'
import { ProcessRunner } from '../../src/exec/runners/index.js'
import { startInProcessNetwork, type InProcessNetwork } from '../utils/index.js'
import { execOf, execProviderServices } from './fixtures.js'
import type { ExecServiceInit } from '../../src/exec/provider/job-service-init.js'
import type { JobPayload } from '../../src/exec/renter/attempt.js'
import type { IdlegridNode } from '../../src/node/index.js'

/**
 * Providers with one simulated box each (`boxes`: `--simulate-gpu` specs such as "H100:80:8"),
 * running any award they are sent (the market is not part of these tests), and `renters`
 * renters connected to every provider.
 */
export async function startMultiGpuNetwork (
  dir: string,
  boxes: readonly string[],
  renters = 2
): Promise<InProcessNetwork> {
  // jobs run as another user when we are root: it must pass through to the work roots
  await chmod(dir, 0o711)
  const init = (i: number): ExecServiceInit => ({
    runner: new ProcessRunner(),
    gpus: parseSimulatedGpus([boxes[i] as string]),
    workRoot: join(dir, `work-${i}`),
    graceMs: 2_000,
    keepaliveMs: 500,
    idleMs: 10_000,
    requireAccepted: false
  })
  const net = await startInProcessNetwork({
    providers: boxes.length,
    renters,
    extensions: (role, i) => role === 'provider' ? { services: execProviderServices(init(i), join(dir, `provider-${i}`)) } : {}
  })
  for (const r of net.renters) for (const p of net.providers) await r.libp2p.dial(p.libp2p.getMultiaddrs()[0] as any)
  return net
}

export function capacityOf (node: IdlegridNode): CapacitySource {
  return (node.libp2p.services as Record<string, unknown>)[CAPACITY_SERVICE] as CapacitySource
}

/** How many of the provider's jobs are running now (its job book). */
export function runningJobs (node: IdlegridNode): number {
  return execOf(node).jobList().filter(j => j.state === 'running').length
}

/**
 * How many BRONZE_HOLD jobs on provider `i` of a startMultiGpuNetwork(dir, …) have begun (their
 * SIGTERM trap set: they wrote outputs/started.txt in their work dir).
 */
export async function bronzeStarted (dir: string, i: number): Promise<number> {
  const root = join(dir, `work-${i}`)
  let n = 0
  const list = async (path: string): Promise<string[]> => await readdir(path).catch(() => [] as string[])
  for (const job of await list(root)) {
    if ((await list(join(root, job, 'outputs'))).includes('started.txt')) n++
  }
  return n
}

/**
 * A job that writes the GPUs it was given (IDLEGRID_GPU_INDICES, IDLEGRID_GPU_COUNT,
 * CUDA_VISIBLE_DEVICES) to outputs/gpus.txt.
 */
export const GPU_REPORT: JobPayload = {
  runtime: {
    // eslint-disable-next-line no-template-curly-in-string -- a shell parameter expansion, not a template
    command: ['/bin/sh', '-c', 'printf "%s\\n%s\\n%s\\n" "$IDLEGRID_GPU_INDICES" "$IDLEGRID_GPU_COUNT" "${CUDA_VISIBLE_DEVICES-unset}" > outputs/gpus.txt'],
    timeoutMs: 20_000
  },
  inputs: []
}

/** A bronze job that runs until stopped and, on SIGTERM, writes a checkpoint and exits. */
export const BRONZE_HOLD: JobPayload = {
  runtime: {
    command: ['/bin/sh', '-c', 'trap \'echo "$IDLEGRID_GPU_INDEX" > outputs/checkpoint.txt; exit 143\' TERM; echo "$IDLEGRID_GPU_INDEX" > outputs/started.txt; sleep 60 & wait'],
    timeoutMs: 60_000
  },
  inputs: []
}
