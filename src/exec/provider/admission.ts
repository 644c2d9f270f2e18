/**
 * Declines at start time: what the provider checks in a Start frame before it takes a job in
 * (admitStart): the award (it names us, we accepted it, it was not started before), the
 * runtime its runner and policy allow, an input manifest that is safe and within its limit,
 * the renter's share of the slots, the disk budget and a slot the job's tier can have; and
 * the RunSpec the runtime becomes. A failed check throws an ExecError ERR_START_DECLINED, answered with a
 * Rejected frame (the job stream's wire name for it).
 *
 * Vocabulary: a provider *declines* a job, at three moments: at bid time
 * (market/provider/bid-declines.ts), at award time (market/provider/award-declines.ts) and at
 * start time (here).
 */
import { JobFrame } from '../../../protocols/job.js'
import { toHex } from '../../common/index.js'
import { isAwardCheckError, jobGpuCount, verifyAwardForWinner } from '../../market/index.js'
import { checkRelativePath } from '../shared/digest.js'
import { ExecError, startDecline } from '../errors.js'
import { isCoded } from '../../common/index.js'
import type { VerifiedAward } from '../../market/index.js'
import type { RunGpu, Runner, RunSpec } from '../runners/index.js'
import type { JobBook } from './job-book.js'
import type { SlotScheduler } from './scheduler.js'
import type { Lease } from './slot-lease.js'
import type { InputCache } from '../../cache/index.js'
import type { FileEntry } from '../../../protocols/job.js'
import type { PeerId } from '@libp2p/interface'

export interface RunLimits {
  /** the provider's max job length, ms */
  maxJobMs: number
  /** the provider's SIGTERM-to-SIGKILL notice, ms */
  graceMs: number
}

/**
 * The run of an admitted job: its runtime, its time limit cut to the provider's, its notice at
 * least what the job asked for, every GPU of its lease.
 */
export function jobRunSpec (
  v: VerifiedAward,
  {
    runtime,
    workDir,
    limits,
    gpus = []
  }: { runtime: JobFrame.Runtime, workDir: string, limits: RunLimits, gpus?: readonly RunGpu[] }
): RunSpec {
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

/**
 * Whether an awarded job fits this provider now: runtime, inputs and capacity. Throws an ExecError
 * ERR_START_DECLINED.
 */
export function checkJobFits (start: JobFrame.Start, verified: VerifiedAward, ctx: FitContext): void {
  const runtime = start.runtime
  if (runtime == null) throw startDecline(JobFrame.Rejected.Code.POLICY, 'Start has no runtime')
  // a longer limit than the provider's max job length is cut to it (the bid already checked the estimate)
  if (Number(runtime.timeoutMs) <= 0) throw startDecline(JobFrame.Rejected.Code.POLICY, 'the job has no time limit')
  try {
    ctx.runner.check(jobRunSpec(verified, { runtime, workDir: '/nonexistent', limits: ctx.limits }))
  } catch (err: any) {
    throw startDecline(JobFrame.Rejected.Code.POLICY, isCoded(err, ExecError, 'ERR_RUNNER') ? err.message : 'runtime not allowed')
  }
  checkInputManifest(start.inputs, ctx.maxInputBytes)
  const can = ctx.scheduler.canAccept({
    tier: verified.tier,
    minNoticeMs: verified.jobRequest.constraints?.minPreemptionNoticeMs,
    gpus: jobGpuCount(verified.jobRequest)
  })
  if ('refused' in can) throw startDecline(JobFrame.Rejected.Code.NO_CAPACITY, can.detail)
}

export interface AdmissionContext extends FitContext {
  /** this provider */
  me: PeerId
  /** the awards this provider accepted and the attempts it started */
  book: JobBook
  disk: DiskBudget
  shuttingDown: boolean
  /** only awards this provider's market accepted are run (tests may turn it off) */
  requireAccepted: boolean
  /** a service lease is taken only where something hosts leases (src/serve) */
  hostsLeases: boolean
  maxOutputBytes: number
  maxSlotsPerRenter: number
}

export interface Admitted { verified: VerifiedAward, lease: Lease }

/**
 * Admits a Start: the award and runtime checks, then (synchronously, so no other Start slips
 * in between) the renter's slot limit and the disk budget on the slot the job would take,
 * then the slot itself and the job's disk. Declines are ExecError ERR_START_DECLINED (NO_CAPACITY when it is
 * full for now); nothing is held when one is thrown.
 */
export function admitStart (start: JobFrame.Start, remote: PeerId, ctx: AdmissionContext): Admitted {
  const verified = checkStart(start, remote, ctx)
  const job = {
    key: verified.attemptKey,
    tier: verified.tier,
    minNoticeMs: verified.jobRequest.constraints?.minPreemptionNoticeMs,
    gpus: jobGpuCount(verified.jobRequest)
  }
  const gpus = ctx.scheduler.placement(job)
  if (gpus == null) {
    const can = ctx.scheduler.canAccept(job)
    throw startDecline(JobFrame.Rejected.Code.NO_CAPACITY, 'refused' in can ? can.detail : 'no slot')
  }
  const renter = verified.renter.toString()
  checkRenterSlots(renter, ctx.scheduler.gpusHeldBy(`${renter}/`), gpus.map(g => g.index), ctx.maxSlotsPerRenter)
  const diskBytes = declaredInputBytes(start.inputs) + ctx.maxOutputBytes
  ctx.disk.check(diskBytes)
  // a bronze job this one displaces runs on until this one's inputs are in (the session's lease.claim)
  const placed = ctx.scheduler.reserve(job, { deferDisplacement: true })
  if ('refused' in placed) throw startDecline(JobFrame.Rejected.Code.NO_CAPACITY, placed.detail)
  ctx.disk.hold({ key: verified.attemptKey, renter, diskBytes })
  // marked started in the same synchronous step as the reservation: a second stream with the
  // same Start, read while this one awaits, must find the attempt taken
  ctx.book.answer(verified.attemptKey)
  return { verified, lease: placed }
}

/**
 * The award of a Start: it verifies and names us, comes from its renter, was accepted here and not
 * started before; then checkJobFits.
 */
function checkStart (start: JobFrame.Start, remote: PeerId, ctx: AdmissionContext): VerifiedAward {
  let verified: VerifiedAward
  try {
    verified = verifyAwardForWinner(start.award, start.jobRequest, ctx.me)
  } catch (err) {
    if (isAwardCheckError(err)) throw startDecline(JobFrame.Rejected.Code[err.rejection], err.message)
    throw err
  }
  if (!verified.renter.equals(remote)) throw startDecline(JobFrame.Rejected.Code.NOT_AWARDED, 'the stream does not come from the job\'s renter')
  // its Start came: the slot held for the award is given back, to be reserved just after (same turn) or refused
  ctx.scheduler.fulfil(toHex(verified.awardHash))
  if (ctx.requireAccepted && !ctx.book.isAccepted(toHex(verified.awardHash))) {
    throw startDecline(JobFrame.Rejected.Code.NOT_AWARDED, 'this provider did not accept that award')
  }
  if (ctx.book.wasAnswered(verified.attemptKey)) throw startDecline(JobFrame.Rejected.Code.OTHER, 'this award attempt was already started')
  if (ctx.shuttingDown) throw startDecline(JobFrame.Rejected.Code.OTHER, 'provider is shutting down')
  if (verified.jobRequest.lease != null && !ctx.hostsLeases) throw startDecline(JobFrame.Rejected.Code.POLICY, 'this provider hosts no service leases')
  checkJobFits(start, verified, ctx)
  return verified
}

/** Safe, distinct paths (no file that is also a directory), a sha256 each, and a total within `maxInputBytes`. */
function checkInputManifest (inputs: readonly FileEntry[], maxInputBytes: number): void {
  let total = 0n
  const seen = new Set<string>()
  for (const entry of inputs) {
    try {
      checkRelativePath(entry.path)
    } catch (err: any) {
      throw startDecline(JobFrame.Rejected.Code.INPUT_MISMATCH, err.message)
    }
    if (seen.has(entry.path)) throw startDecline(JobFrame.Rejected.Code.INPUT_MISMATCH, `input ${entry.path} listed twice`)
    // a file and a directory of the same name cannot both exist
    for (const other of seen) if (other.startsWith(entry.path + '/') || entry.path.startsWith(other + '/')) throw startDecline(JobFrame.Rejected.Code.INPUT_MISMATCH, `input ${entry.path} clashes with ${other}`)
    seen.add(entry.path)
    if (entry.sha256.length !== 32) throw startDecline(JobFrame.Rejected.Code.INPUT_MISMATCH, `input ${entry.path} has no sha256`)
    total += entry.size
  }
  if (total > BigInt(maxInputBytes)) throw startDecline(JobFrame.Rejected.Code.INPUT_TOO_LARGE, `inputs of ${total} bytes exceed this provider's ${maxInputBytes}`)
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

  /**
   * Throws an ExecError ERR_START_DECLINED when `bytes` more would not fit: INPUT_TOO_LARGE when
   * they never could, NO_CAPACITY while other jobs hold the room.
   */
  check (bytes: number): void {
    if (bytes > this.budgetBytes) {
      throw startDecline(JobFrame.Rejected.Code.INPUT_TOO_LARGE, `the job needs ${bytes} bytes of disk (inputs and outputs), more than this provider's disk budget of ${this.budgetBytes}`)
    }
    const over = this.used() + (this.cache?.usedBytes() ?? 0) + bytes - this.budgetBytes
    if (over > 0) this.cache?.reclaim(over)
    const used = this.used() + (this.cache?.usedBytes() ?? 0)
    if (used + bytes > this.budgetBytes) {
      throw startDecline(JobFrame.Rejected.Code.NO_CAPACITY, `disk budget full: jobs in progress hold ${used} of ${this.budgetBytes} bytes, this job needs ${bytes}`)
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
 * Throws an ExecError ERR_START_DECLINED (NO_CAPACITY) when the renter would hold more than `maxSlots` slots:
 * `held` are the GPUs its jobs in progress hold or wait for, `next` the one(s) this job would take
 * (a job that displaces the renter's own bronze job takes no extra slot).
 */
export function checkRenterSlots (
  renter: string,
  held: ReadonlySet<number>,
  next: number | readonly number[],
  maxSlots: number
): void {
  const after = new Set(held)
  for (const gpu of typeof next === 'number' ? [next] : next) after.add(gpu)
  if (after.size <= maxSlots) return
  if (held.size === 0) {
    throw startDecline(JobFrame.Rejected.Code.NO_CAPACITY, `the job needs ${after.size} slots, more than this provider gives one renter (at most ${maxSlots})`)
  }
  throw startDecline(JobFrame.Rejected.Code.NO_CAPACITY, `renter ${renter} already holds ${held.size} of this provider's slots (at most ${maxSlots} per renter)`)
}
