/**
 * What execution adds to a node (the composition root merges it in): on providers the job
 * service with its slot scheduler, whose capacity the market's bid engine reads; on renters
 * the `exec.submit` control method that runs a job end to end.
 */
import { randomBytes } from 'node:crypto'
import { basename, join, resolve } from 'node:path'
import { isAvailable, readGpuTelemetry, type ProviderProfile } from '../capability/index.js'
import { toHex } from './digest.js'
import { RunnerError } from './errors.js'
import { jobExecService, type JobExecService } from './provider.js'
import { runJob, summaryJson, RENTER_DEFAULTS, type AwardSource, type JobEvent, type JobPayload } from './renter.js'
import { DockerRunner, ProcessRunner, type Runner, type RunnerKind } from './runners/index.js'
import { SlotScheduler } from './scheduler.js'
import type { SignedRecord } from './records.js'
import type { Receipt } from '../../protocols/job.js'
import type { ControlHandler } from '../control/index.js'
import type { AuctionOptions, CapacitySource, JobSpec, MarketRenterService } from '../market/index.js'
import type { Role } from '../config/index.js'
import type { ComponentLogger, Ed25519PrivateKey, PeerId, PrivateKey, Startable } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'

/** Service names in the node's service map. */
export const EXEC_SERVICE = 'exec'
export const EXEC_RENTER_SERVICE = 'execRenter'
/** What the job service provides, for other services' `serviceDependencies`. */
export const EXEC_CAPABILITY = '@idlegrid/exec'
/** Where the market's renter service sits (see src/market extensions). */
const MARKET_RENTER = 'marketRenter'
const MARKET_PROVIDER = 'marketProvider'
/** Auctions tried for one award before giving up, and the pause between them. */
const AUCTIONS_PER_ATTEMPT = 3
const AUCTION_RETRY_MS = 1_000

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
  if (opts.role === 'renter') return { services: { [EXEC_RENTER_SERVICE]: execRenter({ defaultBaseDir: resolve('idlegrid-out') }) } }
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

/** The job as the renter node runs it: from a job spec, with absolute input paths. */
export function payloadFromSpec (spec: Pick<JobSpec, 'runtime' | 'inputs' | 'estimatedMinutes'>): JobPayload {
  const seen = new Set<string>()
  const inputs = spec.inputs.map(file => {
    const path = basename(file)
    if (seen.has(path)) throw new RunnerError(`two inputs are named ${path}; inputs land in the job's inputs/ by file name`)
    seen.add(path)
    return { path, file: resolve(file) }
  })
  // the estimate plus half again, at least a minute; the provider cuts it to its max job length
  const timeoutMs = Math.max(60_000, Math.round(spec.estimatedMinutes * 60_000 * 1.5))
  return { runtime: { image: spec.runtime.image, command: spec.runtime.command, timeoutMs }, inputs }
}

interface RenterComponents {
  peerId: PeerId
  privateKey: PrivateKey
  connectionManager: ConnectionManager
  logger: ComponentLogger
}

export interface ExecRenterInit {
  /** where outputs go when the caller names no directory */
  defaultBaseDir: string
}

/** Renter-side control: `exec.submit` runs auction, transfer, execution, verification and receipt. */
class ExecRenter implements Startable {
  private readonly receiptHandlers = new Set<(event: { receipt: SignedRecord<Receipt> }) => void>()

  constructor (private readonly components: RenterComponents & Record<string, unknown>, private readonly init: ExecRenterInit) {}

  /** Called with every receipt this renter signs; the ledger records them. Returns an unsubscribe. */
  onRenterReceipt (handler: (event: { receipt: SignedRecord<Receipt> }) => void): () => void {
    this.receiptHandlers.add(handler)
    return () => this.receiptHandlers.delete(handler)
  }

  start (): void {}
  stop (): void {}

  controlHandlers (): Record<string, ControlHandler> {
    return {
      /** params: { spec (job fields, flags applied), baseDir?, maxAttempts?, explain? } */
      'exec.submit': async (params, emit, signal) => {
        let market: MarketRenterService | undefined
        try {
          market = this.components[MARKET_RENTER] as MarketRenterService | undefined
        } catch {} // libp2p's components throw for a service that is not there
        if (market == null) throw new RunnerError('this node runs no auctions (not a renter)')
        const { parseJobSpec } = await import('../market/index.js')
        const spec = parseJobSpec(params.spec)
        const payload = payloadFromSpec(spec)
        const jobId = new Uint8Array(randomBytes(16))
        const send = (event: unknown): void => { try { emit(event) } catch {} }
        const awards: AwardSource = {
          next: async ({ exclude, attempt, signal: s }) => {
            // an auction may find nobody yet (a provider that has not seen the job topic): that gets
            // a bounded number of fresh auctions; providers that already failed this job are excluded
            let why = 'no award'
            for (let tries = 0; tries < AUCTIONS_PER_ATTEMPT; tries++) {
              if (tries > 0) await new Promise(resolve => setTimeout(resolve, AUCTION_RETRY_MS))
              const options: AuctionOptions = { jobId, signal: s, exclude, explainBelow: params.explain === true ? 3 : 0, onEvent: (e) => { send({ type: 'auction', attempt, event: e }) } }
              const report = await market.auction(spec, options)
              const award = report.signed?.award
              if (award == null) {
                const declines = Object.entries(report.noBids?.declines ?? {}).map(([reason, n]) => `${n} ${reason}`).join(', ')
                why = `${report.noBids?.reason ?? report.noAward?.reason ?? 'no award'}${declines !== '' ? ` (${declines})` : ''}`
                continue
              }
              return { award: award.envelope, jobRequest: (report.signed as NonNullable<typeof report.signed>).job.envelope }
            }
            throw new RunnerError(why)
          }
        }
        const baseDir = typeof params.baseDir === 'string' ? params.baseDir : this.init.defaultBaseDir
        const maxAttempts = typeof params.maxAttempts === 'number' ? params.maxAttempts : RENTER_DEFAULTS.maxAttempts
        const summary = await runJob({
          libp2p: { dialProtocol: async (peer, protocol, options) => await (await this.components.connectionManager.openConnection(peer as PeerId, options)).newStream(protocol, options) },
          privateKey: this.components.privateKey as Ed25519PrivateKey,
          peerId: this.components.peerId,
          awards,
          payload,
          jobId: toHex(jobId),
          baseDir,
          maxAttempts,
          signal,
          onEvent: (e: JobEvent) => { send(e) },
          onReceipt: (receipt) => { for (const handler of this.receiptHandlers) handler({ receipt }) }
        })
        return summaryJson(summary)
      }
    }
  }
}

export function execRenter (init: ExecRenterInit): (components: RenterComponents) => ExecRenter {
  return (components) => new ExecRenter(components as RenterComponents & Record<string, unknown>, init)
}

export type { JobExecService }
