/**
 * What the provider checks in a Start frame besides the award before it takes a job in: the
 * runtime its runner and policy allow, an input manifest that is safe and within its limit,
 * and a slot the job's tier can have; and the RunSpec the runtime becomes. A failed check is
 * a Rejection, answered with a Rejected frame.
 */
import { JobFrame } from '../../protocols/job.js'
import { checkRelativePath } from './digest.js'
import { RunnerError } from './errors.js'
import type { VerifiedAward } from '../market/index.js'
import type { RunGpu, Runner, RunSpec } from './runners/index.js'
import type { SlotScheduler } from './scheduler.js'
import type { FileEntry } from '../../protocols/job.js'

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

/** The run of an admitted job: its runtime, its time limit cut to the provider's, its notice at least what the job asked for. */
export function jobRunSpec (v: VerifiedAward, runtime: JobFrame.Runtime, workDir: string, limits: RunLimits, gpu?: RunGpu): RunSpec {
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
    gpu: gpu == null ? undefined : { index: gpu.index, uuid: gpu.uuid, simulated: gpu.simulated }
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
  const can = ctx.scheduler.canAccept({ tier: verified.tier, minNoticeMs: verified.jobRequest.constraints?.minPreemptionNoticeMs })
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
