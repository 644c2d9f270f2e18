import { ExecError } from '../errors.js'
import { runGpus, type RunSpec } from './types.js'

/** The only PATH a process job gets: no provider directories. */
export const JOB_PATH = '/usr/bin:/bin'
const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/
const MAX_ENV_VALUE_CHARS = 4096
/** Names the job may not set: ours, and ones that change how the loader or shell behaves for us. */
const RESERVED = /^(IDLEGRID_|LD_|DYLD_)|^(HOME|PATH|NODE_OPTIONS)$/

/** Checks the renter's variables; throws ExecError ERR_RUNNER naming the first bad one. */
export function checkJobEnv (env: Record<string, string>): void {
  for (const [key, value] of Object.entries(env)) {
    if (!ENV_KEY.test(key)) throw new ExecError('ERR_RUNNER', `environment variable name "${key.slice(0, 64)}" is not allowed`)
    if (RESERVED.test(key)) throw new ExecError('ERR_RUNNER', `environment variable ${key} is reserved`)
    if (typeof value !== 'string' || value.length > MAX_ENV_VALUE_CHARS || value.includes('\0')) throw new ExecError('ERR_RUNNER', `environment variable ${key} has a bad value`)
  }
}

/** The IDLEGRID_* variables a job sees, relative to where its work dir appears to it. */
export function jobVariables (spec: RunSpec, workDir: string): Record<string, string> {
  const vars: Record<string, string> = {
    IDLEGRID_JOB_ID: spec.jobId,
    IDLEGRID_WORK_DIR: workDir,
    IDLEGRID_INPUT_DIR: `${workDir}/inputs`,
    IDLEGRID_OUTPUT_DIR: `${workDir}/outputs`,
    IDLEGRID_TIMEOUT_MS: String(spec.timeoutMs),
    IDLEGRID_GRACE_MS: String(spec.graceMs)
  }
  const gpus = runGpus(spec)
  const first = gpus[0]
  if (first != null) {
    vars.IDLEGRID_GPU_INDEX = String(first.index)
    // every GPU of the job, in order (one for a 1-GPU job)
    vars.IDLEGRID_GPU_INDICES = gpus.map(g => g.index).join(',')
    vars.IDLEGRID_GPU_COUNT = String(gpus.length)
    vars.IDLEGRID_GPU_SIMULATED = first.simulated ? '1' : '0'
  }
  return vars
}

/**
 * The whole environment of a process job, built from nothing: PATH, HOME = the work dir,
 * the job's IDLEGRID_* variables and the renter's own. None of the provider's variables.
 */
export function processJobEnv (spec: RunSpec): Record<string, string> {
  checkJobEnv(spec.env)
  const env: Record<string, string> = {
    ...spec.env,
    PATH: JOB_PATH,
    HOME: spec.workDir,
    ...jobVariables(spec, spec.workDir)
  }
  // every GPU of the job by UUID (stable, unlike indexes), none of the box's others; simulated GPUs have none to name
  const real = runGpus(spec).filter(g => !g.simulated)
  if (real.length > 0) env.CUDA_VISIBLE_DEVICES = real.map(g => g.uuid).join(',')
  return env
}
