/**
 * The provider profile: its validated policy plus the GPUs it offers (detected with
 * nvidia-smi, or simulated for development). It is what the capability record is built
 * from and what the market's bid engine checks jobs against.
 */

import { ConfigError, asNumber, asString, asStringList, type Fields } from '../../config/index.js'
import { detectGpus, gpuDetectionError, groupGpus, type DetectedGpu, type GpuGroup } from '../gpu/gpu.js'
import { parseSimulatedGpus } from '../gpu/simulated-gpus.js'
import { applyPolicyFlags, parsePolicy, type ProviderPolicy } from './policy.js'

export interface ProviderProfile {
  policy: ProviderPolicy
  /** every GPU, one entry per physical (or simulated) card */
  gpus: DetectedGpu[]
  /** identical GPUs grouped, in first-seen order */
  groups: GpuGroup[]
  /** true when any GPU is simulated */
  simulated: boolean
}

/** Default lifetime of a capability record. */
export const DEFAULT_RECORD_TTL_SECONDS = 30 * 60
/**
 * Bounds of --record-ttl-seconds: records must live long enough to be refreshed, and at most 2 h
 * (protocols/README.md §6).
 */
export const RECORD_TTL_BOUNDS = { min: 5, max: 2 * 60 * 60 } as const

/** Builds a profile from a policy and a GPU list (no detection). */
export function providerProfile (policy: ProviderPolicy, gpus: readonly DetectedGpu[]): ProviderProfile {
  if (gpus.length === 0) throw gpuDetectionError('no GPUs to advertise: nvidia-smi listed none; use --simulate-gpu MODEL:VRAM_GB[:COUNT] for development')
  return { policy, gpus: [...gpus], groups: groupGpus(gpus), simulated: gpus.some(g => g.simulated) }
}

export interface LoadProfileOptions {
  /**
   * the config file's raw `provider:` section: the policy fields (see policy.ts) plus
   * `simulateGpu` (list of MODEL:VRAM_GB[:COUNT]), `nvidiaSmi` and `recordTtlSeconds`
   */
  raw?: Fields
  /** policy flags by name without dashes (`region`, `price-floor` …, see POLICY_FLAGS) */
  flags?: Record<string, string | string[] | undefined>
  /** `--simulate-gpu` specs (replace the file's); when any are given, nvidia-smi is not run */
  simulateGpu?: readonly string[]
  /** path or name of nvidia-smi (default `nvidia-smi` on PATH) */
  nvidiaSmi?: string
  /** `--record-ttl-seconds` (overrides the file's) */
  recordTtlSeconds?: string | number
  /** detection time bound (default 10 s) */
  detectTimeoutMs?: number
}

export interface ProviderSetup {
  profile: ProviderProfile
  /** capability record lifetime */
  recordTtlMs: number
}

/** Keys of the `provider:` section that configure the node rather than the policy. */
const SETUP_KEYS = ['simulateGpu', 'nvidiaSmi', 'recordTtlSeconds'] as const

/**
 * Merges flags over the file's provider section, validates the policy (ConfigError naming
 * the field), then detects or simulates the GPUs. Without GPUs it throws CapabilityError
 * ERR_GPU_DETECTION with nvidia-smi's reason: a provider with nothing to offer must not advertise.
 */
export async function loadProviderSetup (opts: LoadProfileOptions = {}): Promise<ProviderSetup> {
  const raw: Fields = { ...(opts.raw ?? {}) }
  const file: Partial<Record<typeof SETUP_KEYS[number], unknown>> = {}
  for (const key of SETUP_KEYS) {
    file[key] = raw[key]
    delete raw[key]
  }
  const policy = parsePolicy(applyPolicyFlags(raw, opts.flags ?? {}))
  const recordTtlMs = opts.recordTtlSeconds !== undefined
    ? parseRecordTtlSeconds(opts.recordTtlSeconds, 'record-ttl-seconds') * 1000
    : parseRecordTtlSeconds(file.recordTtlSeconds, 'provider.recordTtlSeconds') * 1000
  const simulate = opts.simulateGpu != null && opts.simulateGpu.length > 0
    ? opts.simulateGpu
    : file.simulateGpu === undefined ? [] : asStringList(file.simulateGpu, 'provider.simulateGpu')
  const nvidiaSmi = opts.nvidiaSmi ?? (file.nvidiaSmi === undefined ? undefined : asString(file.nvidiaSmi, 'provider.nvidiaSmi', { nonEmpty: true }))
  const gpus = simulate.length > 0
    ? parseSimulatedGpus(simulate)
    : await detectGpus({ nvidiaSmi, timeoutMs: opts.detectTimeoutMs })
  return { profile: providerProfile(policy, gpus), recordTtlMs }
}

/** Validates a record TTL given in seconds (flag or config), naming `field` on error. */
function parseRecordTtlSeconds (value: unknown, field = 'recordTtlSeconds'): number {
  if (value === undefined) return DEFAULT_RECORD_TTL_SECONDS
  const seconds = asNumber(value, field, { min: RECORD_TTL_BOUNDS.min, max: RECORD_TTL_BOUNDS.max })
  if (!Number.isFinite(seconds)) throw new ConfigError(field, `seconds from ${RECORD_TTL_BOUNDS.min} to ${RECORD_TTL_BOUNDS.max}`, value)
  return seconds
}
