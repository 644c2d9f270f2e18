/**
 * What the renter ships for a job spec: the runtime with its time limit and the inputs by
 * file name, and the bounds a submission is checked against before any auction.
 */
import { basename, resolve } from 'node:path'
import { SubmitError } from './errors.js'
import { inputManifest, RENTER_LIMITS, type JobPayload, type RenterLimits } from '../exec/index.js'
import type { JobLimits, JobSpec } from '../market/index.js'

export const SUBMIT_DEFAULTS = {
  /** attempts (one run on one provider each) before a job is given up */
  maxAttempts: 3,
  /** the most attempts a caller may ask for */
  maxAttemptsLimit: 10,
  /** what one attempt may spend besides the job's own time limit: auction rounds and transfers */
  attemptOverheadMs: 5 * 60_000
} as const

/** The job as the renter node runs it: from a job spec, with absolute input paths. */
export function payloadFromSpec (spec: Pick<JobSpec, 'runtime' | 'inputs' | 'publicInputs' | 'estimatedMinutes'>): JobPayload {
  const seen = new Set<string>()
  const open = new Set((spec.publicInputs ?? []).map(f => resolve(f)))
  const inputs = spec.inputs.map(file => {
    const path = basename(file)
    if (seen.has(path)) throw new SubmitError('ERR_SUBMIT', `two inputs are named ${path}; inputs land in the job's inputs/ by file name`)
    seen.add(path)
    return { path, file: resolve(file), ...(open.has(resolve(file)) ? { public: true } : {}) }
  })
  // the estimate plus half again, at least a minute; the provider cuts it to its max job length
  const timeoutMs = Math.max(60_000, Math.round(spec.estimatedMinutes * 60_000 * 1.5))
  return {
    runtime: {
      image: spec.runtime.image,
      command: spec.runtime.command,
      timeoutMs,
      ...(spec.runtime.shmSizeMiB != null ? { shmSizeMiB: spec.runtime.shmSizeMiB } : {})
    },
    inputs
  }
}

/** A whole number of attempts within the limit, or a SubmitError naming what was given. */
export function checkMaxAttempts (value: unknown): number {
  const n = value == null ? SUBMIT_DEFAULTS.maxAttempts : Number(value)
  if (!Number.isInteger(n) || n < 1 || n > SUBMIT_DEFAULTS.maxAttemptsLimit) throw new SubmitError('ERR_SUBMIT', `--max-attempts must be a whole number from 1 to ${SUBMIT_DEFAULTS.maxAttemptsLimit}, got ${String(value)}`)
  return n
}

export interface CheckedSubmission {
  payload: JobPayload
  maxAttempts: number
  /** the longest the whole job may take: every attempt its time limit plus the auction and transfers */
  timeoutMs: number
}

/** Checks a job before any auction: runnable, attempts within bounds; says how long it may take. */
export function checkSubmission (spec: Pick<JobSpec, 'runtime' | 'inputs' | 'publicInputs' | 'estimatedMinutes' | 'limits'>, maxAttempts?: unknown): CheckedSubmission {
  const attempts = checkMaxAttempts(maxAttempts)
  const payload = payloadFromSpec(spec)
  if (payload.runtime.command.length === 0 && (payload.runtime.image ?? '') === '') throw new SubmitError('ERR_SUBMIT', 'the job has neither an image nor a command')
  // a longer deadline margin than the default (limits.deadlineMarginSeconds) adds to each attempt
  const extraMarginMs = Math.max(
    0,
    (renterLimitsFromSpec(spec.limits).deadlineMarginMs ?? 0) - RENTER_LIMITS.deadlineMarginMs
  )
  return {
    payload,
    maxAttempts: attempts,
    timeoutMs: attempts * (payload.runtime.timeoutMs + SUBMIT_DEFAULTS.attemptOverheadMs + extraMarginMs)
  }
}

const MiB = 1024 * 1024

/** Inputs at least this large are named in the job request as datasets (data-aware placement). */
export const NAMED_INPUT_MIN_BYTES = MiB
/** JobRequest.dataset_digests' limit. */
const MAX_DATASETS = 16

/**
 * Hashes the inputs once for the whole job (every attempt sends this manifest) and names the
 * largest (NAMED_INPUT_MIN_BYTES and up, with the job file's `datasets`, 16 at most) in the job
 * request, with their bytes, so providers holding them in their input cache say so in their bids.
 * Only digests travel, never names or contents.
 */
export async function withInputDatasets<S extends Pick<JobSpec, 'datasets' | 'datasetBytes'>> (spec: S, payload: JobPayload): Promise<{ spec: S, payload: JobPayload }> {
  const manifest = payload.manifest ?? await inputManifest(payload.inputs)
  const named = new Set(spec.datasets)
  const bySize = [...manifest]
    .filter(f => Number(f.size) >= NAMED_INPUT_MIN_BYTES)
    .sort((a, b) => Number(b.size - a.size))
  for (const f of bySize) {
    if (named.size >= MAX_DATASETS) break
    named.add(Buffer.from(f.sha256).toString('hex'))
  }
  const sizes = new Map(manifest.map(f => [Buffer.from(f.sha256).toString('hex'), Number(f.size)]))
  let datasetBytes = 0
  for (const hex of named) datasetBytes += sizes.get(hex) ?? 0
  return {
    spec: { ...spec, datasets: [...named], ...(datasetBytes > 0 ? { datasetBytes } : {}) },
    payload: { ...payload, manifest }
  }
}

/** The job file's `limits:` as the renter's limits (only those set; runAttempt fills in its defaults). */
export function renterLimitsFromSpec (limits: JobLimits | undefined): Partial<RenterLimits> {
  const out: Partial<RenterLimits> = {}
  if (limits == null) return out
  if (limits.maxLogMiB != null) out.maxLogBytes = Math.round(limits.maxLogMiB * MiB)
  if (limits.maxOutputFiles != null) out.maxFiles = limits.maxOutputFiles
  if (limits.maxOutputDepth != null) out.maxDepth = limits.maxOutputDepth
  if (limits.maxOutputMiB != null) out.maxOutputBytes = Math.round(limits.maxOutputMiB * MiB)
  if (limits.deadlineMarginSeconds != null) out.deadlineMarginMs = Math.round(limits.deadlineMarginSeconds * 1000)
  if (limits.maxDiskMiB != null) out.maxJobDiskBytes = Math.round(limits.maxDiskMiB * MiB)
  return out
}
