/**
 * What execution adds to a node (the composition root merges it in): on providers the job
 * service with its slot scheduler, whose capacity the market's bid engine reads. Wiring only.
 */
import { join } from 'node:path'
import { isAvailable, readGpuTelemetry, type ProviderProfile } from '../capability/index.js'
import { schedulerCapacity } from './capacity.js'
import { EXEC_SERVICE, jobExecService } from './provider.js'
import { makeRunner } from './runners/make-runner.js'
import { SlotScheduler } from './scheduler.js'
import type { RunnerKind } from './runners/index.js'
import type { Role } from '../config/index.js'
import type { CapacitySource } from '../market/index.js'
import type { NodeExtensions } from '../node/index.js'

export interface ExecProviderOptions {
  profile: ProviderProfile
  /** default docker; process runs commands unisolated and must be asked for */
  runner?: RunnerKind
  /** nvidia-smi binary for telemetry (default on PATH) */
  nvidiaSmi?: string
}

export interface ExecServicesOptions {
  role: Role
  dataDir: string
  provider?: ExecProviderOptions
}

export interface ExecServices extends Required<NodeExtensions> {
  /** the provider's slots as the market's bid engine sees them (providers only) */
  capacity?: CapacitySource
}

export function execServices (opts: ExecServicesOptions): ExecServices {
  const none: ExecServices = { services: {}, dhtValidators: {}, dhtSelectors: {} }
  if (opts.role !== 'provider' || opts.provider == null) return none
  const { profile, nvidiaSmi } = opts.provider
  const policy = profile.policy
  const gpus = profile.gpus.map(g => ({ index: g.index, uuid: g.uuid, simulated: g.simulated, modelKey: g.modelKey, driverVersion: g.driverVersion }))
  const scheduler = new SlotScheduler({ gpus, graceMs: policy.preemptionGraceSeconds * 1000 })
  const read = profile.simulated ? undefined : async () => await readGpuTelemetry({ nvidiaSmi })
  return {
    ...none,
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
        }
      })
    }
  }
}
