/**
 * What execution adds to a node (the composition root merges it in): on providers the job
 * service with its slot scheduler, whose capacity the market's bid engine reads. (The
 * renter's job path is the submit room's.)
 */
import { join } from 'node:path'
import { isAvailable, readGpuTelemetry, type ProviderProfile } from '../capability/index.js'
import { RunnerError } from './errors.js'
import { jobExecService, type JobExecService } from './provider.js'
import { DockerRunner, ProcessRunner, type Runner, type RunnerKind } from './runners/index.js'
import { SlotScheduler } from './scheduler.js'
import type { CapacitySource } from '../market/index.js'
import type { Role } from '../config/index.js'

/** Service names in the node's service map. */
export const EXEC_SERVICE = 'exec'
/** What the job service provides, for other services' `serviceDependencies`. */
export const EXEC_CAPABILITY = '@idlegrid/exec'
/** Where the market's provider service sits (see src/market extensions). */
const MARKET_PROVIDER = 'marketProvider'

export interface ExecProviderOptions {
  profile: ProviderProfile
  /** default docker; process runs commands unisolated and must be asked for */
  runner?: RunnerKind
  /** nvidia-smi binary for telemetry (default on PATH) */
  nvidiaSmi?: string
}

export interface ExecExtensionOptions {
  role: Role
  dataDir: string
  provider?: ExecProviderOptions
}

export interface ExecExtensions {
  services: Record<string, (components: any) => unknown>
  /** the provider's slots as the market's bid engine sees them (providers only) */
  capacity?: CapacitySource
}

export function makeRunner (kind: RunnerKind, profile: ProviderProfile): Runner {
  switch (kind) {
    case 'process': return new ProcessRunner()
    case 'docker': return new DockerRunner({ allowedImages: profile.policy.images })
    default: throw new RunnerError(`unknown runner "${String(kind)}": use docker or process`)
  }
}

/** The scheduler's view in the shape the bid engine reads; a pause means no capacity at all. */
export function schedulerCapacity (scheduler: SlotScheduler): CapacitySource {
  return {
    freeSlots: () => { const c = scheduler.capacity(); return c.paused.length > 0 ? 0 : c.free },
    preemptibleSlots: () => { const c = scheduler.capacity(); return c.paused.length > 0 ? 0 : c.preemptible },
    totalSlots: () => scheduler.capacity().total,
    thermalOk: () => !scheduler.capacity().paused.includes('thermal'),
    powerOk: () => !scheduler.capacity().paused.includes('power')
  }
}

export function execExtensions (opts: ExecExtensionOptions): ExecExtensions {
  if (opts.role !== 'provider' || opts.provider == null) return { services: {} }
  const { profile, nvidiaSmi } = opts.provider
  const gpus = profile.gpus.map(g => ({ index: g.index, uuid: g.uuid, simulated: g.simulated, modelKey: g.modelKey, driverVersion: g.driverVersion }))
  const scheduler = new SlotScheduler({ gpus, graceMs: profile.policy.preemptionGraceSeconds * 1000 })
  const read = profile.simulated ? undefined : async () => await readGpuTelemetry({ nvidiaSmi })
  const policy = profile.policy
  return {
    capacity: schedulerCapacity(scheduler),
    services: {
      [EXEC_SERVICE]: jobExecService({
        runner: makeRunner(opts.provider.runner ?? 'docker', profile),
        gpus,
        scheduler,
        workRoot: join(opts.dataDir, 'jobs'),
        maxJobMs: policy.maxJobMinutes * 60_000,
        telemetry: { read },
        conditions: {
          available: (now) => isAvailable(policy.availability.windows, policy.availability.timeZone, now),
          read,
          maxTemperatureC: policy.thermal.maxTemperatureC,
          maxPowerWatts: policy.power.maxPowerWatts
        },
        marketService: MARKET_PROVIDER
      })
    }
  }
}

export type { JobExecService }
