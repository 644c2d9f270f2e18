/**
 * What execution adds to a node (the composition root merges it in): on providers the job
 * service and, over the same slot scheduler, the capacity service that the market's bid
 * engine and the ledger's uptime summaries read. Wiring only.
 */
import { createHash } from 'node:crypto'
import { join, resolve } from 'node:path'
import { InputCache } from '../cache/index.js'
import { CAPACITY_SERVICE, isAvailable, readGpuTelemetry, type ProviderProfile } from '../capability/index.js'
import { slotCapacity } from './provider/capacity.js'
import { DiskBudget } from './provider/admission.js'
import { defaultDiskBudgetBytes, EXEC_DEFAULTS, EXEC_SERVICE, type ExecGpu } from './provider/job-service-init.js'
import { jobExecService } from './provider/job-service.js'
import { JobLauncher } from './runners/launcher.js'
import { makeRunner } from './runners/make-runner.js'
import { checkWorkRootOutside, defaultWorkRoot } from './runners/work-dirs.js'
import { SlotScheduler } from './provider/scheduler.js'
import type { DockerSettings, RunnerKind } from './runners/index.js'
import type { LeaseHost } from './provider/lease-host.js'
import type { Role } from '../config/index.js'
import type { NodeExtensions } from '../node/index.js'

export interface ExecProviderOptions {
  profile: ProviderProfile
  /** default docker; process runs commands unisolated and must be asked for */
  runner?: RunnerKind
  /** nvidia-smi binary for telemetry (default on PATH) */
  nvidiaSmi?: string
  /**
   * where job work dirs are made (`--work-root`); never inside the data dir (default
   * `<tmpdir>/idlegrid-jobs-<hash of the data dir>`)
   */
  workRoot?: string
  /** process runner: whom jobs run as (`--job-user`) */
  jobUser?: string
  /** the docker runner's engine, job user and pull policy */
  docker?: DockerSettings
  /** hosts service leases (src/serve); none: lease jobs are rejected */
  leases?: LeaseHost
}

export interface ExecServicesOptions {
  role: Role
  dataDir: string
  provider?: ExecProviderOptions
}

const GiB = 1024 ** 3

function execGpus (profile: ProviderProfile): ExecGpu[] {
  return profile.gpus.map(g => ({
    index: g.index,
    uuid: g.uuid,
    simulated: g.simulated,
    modelKey: g.modelKey,
    driverVersion: g.driverVersion
  }))
}

/** One slot per GPU of `profile`, with its preemption grace. */
export function slotSchedulerFor (profile: ProviderProfile): SlotScheduler {
  return new SlotScheduler({ gpus: execGpus(profile), graceMs: profile.policy.preemptionGraceSeconds * 1000 })
}

/**
 * The input cache, in `<work root>/input-cache` (the same file system as the jobs' dirs, so an
 * input reaches a job by a hard link), its budget inside the disk budget: `cacheGiB`, or a
 * quarter of the disk budget; none at 0.
 */
function inputCacheFor (cacheGiB: number | undefined, disk: DiskBudget, workRoot: string): InputCache | undefined {
  const budgetBytes = cacheGiB != null ? Math.round(cacheGiB * GiB) : Math.floor(disk.budgetBytes / 4)
  if (budgetBytes <= 0) return undefined
  const cache = new InputCache({ dir: join(workRoot, 'input-cache'), budgetBytes: Math.min(budgetBytes, disk.budgetBytes) })
  disk.includeCache(cache)
  return cache
}

export function execServices (opts: ExecServicesOptions): Required<NodeExtensions> {
  const none: Required<NodeExtensions> = { services: {}, dhtValidators: {}, dhtSelectors: {} }
  if (opts.role !== 'provider' || opts.provider == null) return none
  const { profile, nvidiaSmi } = opts.provider
  const policy = profile.policy
  const scheduler = slotSchedulerFor(profile)
  const gpus = execGpus(profile)
  // one launcher for the runner's processes and the GPU telemetry's nvidia-smi (every second while a job runs)
  const launcher = new JobLauncher()
  const read = profile.simulated
    ? undefined
    : async () =>
      await readGpuTelemetry({
        nvidiaSmi,
        run: async (file, args, options) => await launcher.call(file, args, options)
      })
  const workRoot = opts.provider.workRoot ?? defaultWorkRoot(opts.dataDir)
  checkWorkRootOutside(workRoot, opts.dataDir)
  // one disk budget, which the job service holds shares of and the bid engine reads
  const disk = new DiskBudget(
    policy.diskBudgetGiB != null ? Math.round(policy.diskBudgetGiB * GiB) : defaultDiskBudgetBytes({ gpus })
  )
  const inputCache = inputCacheFor(policy.inputCacheGiB, disk, workRoot)
  return {
    ...none,
    services: {
      [CAPACITY_SERVICE]: slotCapacity(
        scheduler,
        { budget: disk, outputBoundBytes: EXEC_DEFAULTS.maxOutputBytes },
        inputCache
      ),
      [EXEC_SERVICE]: jobExecService({
        runner: makeRunner(opts.provider.runner ?? 'docker', profile, { jobUser: opts.provider.jobUser, fileBytes: EXEC_DEFAULTS.maxOutputBytes, docker: opts.provider.docker, launcher, owner: createHash('sha256').update(resolve(workRoot)).digest('hex').slice(0, 16) }),
        gpus,
        scheduler,
        disk,
        inputCache,
        leases: opts.provider.leases,
        maxSlotsPerRenter: policy.maxSlotsPerRenter,
        workRoot,
        maxJobMs: policy.maxJobMinutes * 60_000,
        telemetry: { read },
        conditions: {
          available: (now) => isAvailable(policy.availability.windows, policy.availability.timeZone, now),
          read,
          maxTemperatureC: policy.thermal.maxTemperatureC,
          maxPowerWatts: policy.power.maxPowerWatts
        }
      })
    }
  }
}
