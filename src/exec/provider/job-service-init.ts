/**
 * The job service's name, capability, defaults, init and the components it uses: what the
 * composition root and tests need to build it, apart from the service itself (job-service.ts).
 */
import type { LeaseHost } from './lease-host.js'
import { type LEDGER_SERVICE, type LedgerService } from '../../ledger/index.js'
import { type MARKET_PROVIDER_SERVICE, type MarketProviderService } from '../../market/index.js'
import type { DiskBudget } from './admission.js'
import type { ConditionOptions } from './conditions.js'
import type { InputTransferLimits } from './receive-inputs.js'
import type { Runner } from '../runners/index.js'
import type { SchedulerGpu, SlotScheduler } from './scheduler.js'
import type { TelemetryRead } from './telemetry.js'
import type { InputCache } from '../../cache/index.js'
import type { ComponentLogger, PeerId, PrivateKey } from '@libp2p/interface'
import type { Registrar } from '@libp2p/interface-internal'

/** The job service's name in the node's service map. */
export const EXEC_SERVICE = 'exec'
/** What the job service provides, for other services' `serviceDependencies`. */
export const EXEC_CAPABILITY = '@idlegrid/exec'

const MiB = 1024 * 1024

export const EXEC_DEFAULTS = {
  maxInputBytes: 4 * 1024 * MiB,
  maxOutputBytes: 4 * 1024 * MiB,
  maxFiles: 4096,
  /** longest silence between frames the provider waits for while receiving */
  idleMs: 30_000,
  /** how often a running job's stream carries a Progress frame */
  keepaliveMs: 5_000,
  /** a Start must arrive this soon after the stream opens */
  startMs: 10_000,
  /** longest wait for a displaced bronze job to stop, beyond its grace */
  slotWaitExtraMs: 10_000,
  maxJobMs: 24 * 60 * 60_000
} as const

/**
 * The default disk budget: (maxInputBytes + maxOutputBytes) × 2 × GPUs, room for a displacing
 * gold/silver job beside each running one.
 */
export function defaultDiskBudgetBytes (init: Pick<ExecServiceInit, 'maxInputBytes' | 'maxOutputBytes' | 'gpus'>): number {
  const input = init.maxInputBytes ?? EXEC_DEFAULTS.maxInputBytes
  const output = init.maxOutputBytes ?? EXEC_DEFAULTS.maxOutputBytes
  return (input + output) * 2 * Math.max(1, init.gpus.length)
}

/** A GPU the provider runs jobs on: one slot each. */
export interface ExecGpu extends SchedulerGpu {
  /** normalised model, e.g. "h100-80gb" */
  modelKey: string
  driverVersion?: string
}

export interface ExecServiceInit {
  runner: Runner
  gpus: readonly ExecGpu[]
  /** where job work dirs are made (each job gets a fresh one, removed afterwards) */
  workRoot: string
  /** SIGTERM-to-SIGKILL notice for preempted or timed-out jobs (default 10 s) */
  graceMs?: number
  maxInputBytes?: number
  maxOutputBytes?: number
  /**
   * Disk all jobs in progress may hold together: each reserves its declared inputs plus
   * `maxOutputBytes` before its first input byte is read. Default
   * (maxInputBytes + maxOutputBytes) × 2 × GPUs: room for a displacing gold/silver job
   * beside each running one.
   */
  diskBudgetBytes?: number
  /**
   * the disk budget itself, shared with the capacity service the bid engine reads (default: one of
   * its own of `diskBudgetBytes`)
   */
  disk?: DiskBudget
  /**
   * Slots one renter may hold or wait for at once (receiving, waiting, running or sending).
   * Default: one per GPU (a renter may fill the provider, never queue beyond it); a job that
   * displaces the renter's own bronze job takes no extra slot.
   */
  maxSlotsPerRenter?: number
  /**
   * How long a renter may take from Start to InputEnd: floor + declared bytes at a minimum
   * rate, capped (INPUT_TRANSFER_DEFAULTS: 30 s + 256 KiB/s, at most 1 h). A job receiving its
   * inputs holds its slot and disk share; past this it is Rejected and gives them back.
   */
  inputTransfer?: Partial<InputTransferLimits>
  idleMs?: number
  keepaliveMs?: number
  /** the provider's max job length, ms */
  maxJobMs?: number
  /** telemetry of the GPUs (readGpuTelemetry); none: attestations carry no samples */
  telemetry?: { read?: TelemetryRead, intervalMs?: number }
  /** availability windows and thermal/power limits that pause the scheduler */
  conditions?: ConditionOptions
  /**
   * Run only awards this provider accepted over the accept protocol (the market provider
   * service's onAccepted feeds noteAccepted). Default true; tests of this layer alone may
   * turn it off.
   */
  requireAccepted?: boolean
  /** keep work dirs after the run (debugging) */
  keepWorkDirs?: boolean
  /** hosts service leases (src/serve); none: lease jobs are rejected (POLICY) */
  leases?: LeaseHost
  /** a scheduler shared with the bid engine (default: one of its own over `gpus`) */
  scheduler?: SlotScheduler
  /**
   * The input cache (src/cache): inputs a job brings are kept for the renter's next jobs, and
   * over /idlegrid/job/1.1.0 the renter sends only what it does not hold. Loaded at start.
   * None: every input is sent every time.
   */
  inputCache?: InputCache
}

export interface ExecComponents {
  peerId: PeerId
  privateKey: PrivateKey
  registrar: Registrar
  logger: ComponentLogger
  /** records our attestations in our feed */
  [LEDGER_SERVICE]: Pick<LedgerService, 'recordAttestation'>
  /** tells us which awards it accepted: only those run */
  [MARKET_PROVIDER_SERVICE]: Pick<MarketProviderService, 'onAccepted'>
}
