/**
 * What the provider checks in a Start frame besides the award before it takes a job in: the
 * runtime its runner and policy allow, an input manifest that is safe and within its limit,
 * and a slot the job's tier can have; and the RunSpec the runtime becomes. A failed check is
 * a Rejection, answered with a Rejected frame.
 */
import { JobFrame } from '../../../protocols/job.js'
import { jobGpuCount } from '../../market/index.js'
import { checkRelativePath } from '../shared/digest.js'
import { RunnerError } from '../errors.js'
import type { VerifiedAward } from '../../market/index.js'
import type { RunGpu, Runner, RunSpec } from '../runners/index.js'
import type { SlotScheduler } from './scheduler.js'
import type { InputCache } from '../../cache/index.js'
import type { FileEntry } from '../../../protocols/job.js'

/** The provider refuses the job: the Rejected code and reason it answers with. */
export class Rejection extends Error {
  constructor (readonly code: JobFrame.Rejected.Code, message: string) {
    super(message)
    this.name = 'Rejection'
  }
}

export interface RunLimits {
  /** the provider's max job length, ms */
  maxJobMs: number
  /** the provider's SIGTERM-to-SIGKILL notice, ms */
  graceMs: number
}

/** The run of an admitted job: its runtime, its time limit cut to the provider's, its notice at least what the job asked for, every GPU of its lease. */
export function jobRunSpec (v: VerifiedAward, runtime: JobFrame.Runtime, workDir: string, limits: RunLimits, gpus: readonly RunGpu[] = []): RunSpec {
  const own = gpus.map(g => ({ index: g.index, uuid: g.uuid, simulated: g.simulated }))
  const env: Record<string, string> = {}
  for (const { key, value } of runtime.env) env[key] = value
  return {
    jobId: v.jobIdHex,
    workDir,
    command: runtime.command,
    image: runtime.image === '' ? undefined : runtime.image,
    env,
    timeoutMs: Math.min(Number(runtime.timeoutMs), limits.maxJobMs),
    graceMs: Math.max(limits.graceMs, v.jobRequest.constraints?.minPreemptionNoticeMs ?? 0),
    gpu: own[0],
    gpus: own.length > 1 ? own : undefined,
    shmSizeMiB: runtime.shmSizeMib > 0 ? runtime.shmSizeMib : undefined
  }
}

export interface FitContext {
  runner: Runner
  scheduler: SlotScheduler
  limits: RunLimits
  maxInputBytes: number
}

/** Whether an awarded job fits this provider now: runtime, inputs and capacity. Throws a Rejection. */
export function checkJobFits (start: JobFrame.Start, verified: VerifiedAward, ctx: FitContext): void {
  const runtime = start.runtime
  if (runtime == null) throw new Rejection(JobFrame.Rejected.Code.POLICY, 'Start has no runtime')
  // a longer limit than the provider's max job length is cut to it (the bid already checked the estimate)
  if (Number(runtime.timeoutMs) <= 0) throw new Rejection(JobFrame.Rejected.Code.POLICY, 'the job has no time limit')
  try {
    ctx.runner.check(jobRunSpec(verified, runtime, '/nonexistent', ctx.limits))
  } catch (err: any) {
    throw new Rejection(JobFrame.Rejected.Code.POLICY, err instanceof RunnerError ? err.message : 'runtime not allowed')
  }
  checkInputManifest(start.inputs, ctx.maxInputBytes)
  const can = ctx.scheduler.canAccept({ tier: verified.tier, minNoticeMs: verified.jobRequest.constraints?.minPreemptionNoticeMs, gpus: jobGpuCount(verified.jobRequest) })
  if ('refused' in can) throw new Rejection(JobFrame.Rejected.Code.NO_CAPACITY, can.detail)
}

/** Safe, distinct paths (no file that is also a directory), a sha256 each, and a total within `maxInputBytes`. */
function checkInputManifest (inputs: readonly FileEntry[], maxInputBytes: number): void {
  let total = 0n
  const seen = new Set<string>()
  for (const entry of inputs) {
    try { checkRelativePath(entry.path) } catch (err: any) { throw new Rejection(JobFrame.Rejected.Code.INPUT_MISMATCH, err.message) }
    if (seen.has(entry.path)) throw new Rejection(JobFrame.Rejected.Code.INPUT_MISMATCH, `input ${entry.path} listed twice`)
    // a file and a directory of the same name cannot both exist
    for (const other of seen) if (other.startsWith(entry.path + '/') || entry.path.startsWith(other + '/')) throw new Rejection(JobFrame.Rejected.Code.INPUT_MISMATCH, `input ${entry.path} clashes with ${other}`)
    seen.add(entry.path)
    if (entry.sha256.length !== 32) throw new Rejection(JobFrame.Rejected.Code.INPUT_MISMATCH, `input ${entry.path} has no sha256`)
    total += entry.size
  }
  if (total > BigInt(maxInputBytes)) throw new Rejection(JobFrame.Rejected.Code.INPUT_TOO_LARGE, `inputs of ${total} bytes exceed this provider's ${maxInputBytes}`)
}

/** The declared size of a job's inputs: the sum of its manifest's sizes. */
export function declaredInputBytes (inputs: readonly FileEntry[]): number {
  let total = 0n
  for (const entry of inputs) total += entry.size
  return Number(total)
}

export interface JobQuota {
  /** the attempt (a slot holder's key) */
  key: string
  /** the renter, as its peer id string */
  renter: string
  /** bytes of disk the job may use: its declared inputs and the provider's output bound */
  diskBytes: number
}

/**
 * What jobs in progress (receiving, waiting for their slot, running or sending) hold besides
 * their slot: disk for their inputs and outputs, within the provider's disk budget. Every job
 * reserves its share, and a slot, before its first input byte is read.
 */
export class DiskBudget {
  private readonly held = new Map<string, JobQuota>()
  private cache?: Pick<InputCache, 'usedBytes' | 'reclaim'>

  constructor (readonly budgetBytes: number) {}

  /**
   * The input cache lives inside this budget: its bytes count, and a job that needs room the
   * cache holds makes it evict (least recently used first) before it is refused.
   */
  includeCache (cache: Pick<InputCache, 'usedBytes' | 'reclaim'>): void {
    this.cache = cache
  }

  /** Bytes held by jobs in progress. */
  used (): number {
    let sum = 0
    for (const q of this.held.values()) sum += q.diskBytes
    return sum
  }

  /** Bytes the jobs in progress leave free. */
  free (): number {
    return Math.max(0, this.budgetBytes - this.used())
  }

  /** Throws a Rejection when `bytes` more would not fit: INPUT_TOO_LARGE when they never could, NO_CAPACITY while other jobs hold the room. */
  check (bytes: number): void {
    if (bytes > this.budgetBytes) {
      throw new Rejection(JobFrame.Rejected.Code.INPUT_TOO_LARGE, `the job needs ${bytes} bytes of disk (inputs and outputs), more than this provider's disk budget of ${this.budgetBytes}`)
    }
    const over = this.used() + (this.cache?.usedBytes() ?? 0) + bytes - this.budgetBytes
    if (over > 0) this.cache?.reclaim(over)
    const used = this.used() + (this.cache?.usedBytes() ?? 0)
    if (used + bytes > this.budgetBytes) {
      throw new Rejection(JobFrame.Rejected.Code.NO_CAPACITY, `disk budget full: jobs in progress hold ${used} of ${this.budgetBytes} bytes, this job needs ${bytes}`)
    }
  }

  hold (quota: JobQuota): void {
    this.held.set(quota.key, quota)
  }

  /** Lowers the job's share to `bytes`, never raises it: what it still holds once part of its disk is free. */
  shrink (key: string, bytes: number): void {
    const held = this.held.get(key)
    if (held != null && bytes < held.diskBytes) this.held.set(key, { ...held, diskBytes: bytes })
  }

  /** Gives the job's share back; safe to call twice. */
  release (key: string): void {
    this.held.delete(key)
  }
}

/**
 * Throws a Rejection (NO_CAPACITY) when the renter would hold more than `maxSlots` slots:
 * `held` are the GPUs its jobs in progress hold or wait for, `next` the one(s) this job would take
 * (a job that displaces the renter's own bronze job takes no extra slot).
 */
export function checkRenterSlots (renter: string, held: ReadonlySet<number>, next: number | readonly number[], maxSlots: number): void {
  const after = new Set(held)
  for (const gpu of typeof next === 'number' ? [next] : next) after.add(gpu)
  if (after.size <= maxSlots) return
  if (held.size === 0) {
    throw new Rejection(JobFrame.Rejected.Code.NO_CAPACITY, `the job needs ${after.size} slots, more than this provider gives one renter (at most ${maxSlots})`)
  }
  throw new Rejection(JobFrame.Rejected.Code.NO_CAPACITY, `renter ${renter} already holds ${held.size} of this provider's slots (at most ${maxSlots} per renter)`)
}
