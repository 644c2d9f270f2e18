/** Simulated GPUs for development and tests (`--simulate-gpu MODEL:VRAM_GB[:COUNT]`). */

import { ConfigError } from '../../config/index.js'
import { normaliseGpuModel } from './gpu-model.js'
import type { DetectedGpu } from './gpu.js'

const MAX_SIM_COUNT = 64
const MAX_SIM_VRAM_GB = 1024

/**
 * Parses a `--simulate-gpu` spec "MODEL:VRAM_GB[:COUNT]" ("H100:80", "A100:40:8",
 * "RTX 4090:24"). VRAM may be fractional (converted to MiB); COUNT defaults to 1. If the
 * model names a memory size ("H100 80GB") it must agree with VRAM_GB. uuids are
 * deterministic: `GPU-sim-<modelKey>-<index>`, indexes counted from `firstIndex`.
 * Errors are ConfigErrors for field `simulateGpu`.
 */
export function parseSimulatedGpu (spec: string, firstIndex = 0): DetectedGpu[] {
  const field = 'simulateGpu'
  const expected = 'MODEL:VRAM_GB[:COUNT], e.g. "H100:80" or "A100:40:8"'
  if (typeof spec !== 'string') throw new ConfigError(field, expected, spec)
  const parts = spec.split(':').map(p => p.trim())
  if (parts.length < 2 || parts.length > 3) throw new ConfigError(field, expected, spec)
  const [model, vramText, countText] = parts as [string, string, string | undefined]
  if (model === '' || !/^[A-Za-z0-9][A-Za-z0-9 ._\-/]*$/.test(model) || model.length > 64) {
    throw new ConfigError(field, `${expected}; MODEL is letters, digits, spaces or dashes`, spec)
  }
  const modelKey = normaliseGpuModel(model)
  if (modelKey === '') throw new ConfigError(field, `${expected}; MODEL names no GPU`, spec)
  const gb = /^\d+(\.\d+)?$/.test(vramText) ? Number(vramText) : NaN
  if (!(gb > 0 && gb <= MAX_SIM_VRAM_GB)) {
    throw new ConfigError(field, `${expected}; VRAM_GB is a number of gigabytes > 0 and <= ${MAX_SIM_VRAM_GB}`, spec)
  }
  let count = 1
  if (countText !== undefined) {
    count = /^\d+$/.test(countText) ? Number(countText) : NaN
    if (!(count >= 1 && count <= MAX_SIM_COUNT)) {
      throw new ConfigError(field, `${expected}; COUNT is a whole number from 1 to ${MAX_SIM_COUNT}`, spec)
    }
  }
  const named = /(\d+)gb/.exec(modelKey)
  if (named != null && Number(named[1]) !== gb) {
    throw new ConfigError(field, `${expected}; the model says ${named[1]} GB but VRAM_GB is ${vramText}`, spec)
  }
  const gpus: DetectedGpu[] = []
  for (let i = 0; i < count; i++) {
    const index = firstIndex + i
    gpus.push({
      index,
      uuid: `GPU-sim-${modelKey}-${index}`,
      model: model.replace(/\s+/g, ' '),
      modelKey,
      vramMib: Math.round(gb * 1024),
      simulated: true
    })
  }
  return gpus
}

/** Several `--simulate-gpu` specs (the flag is repeatable), numbered consecutively. */
export function parseSimulatedGpus (specs: readonly string[]): DetectedGpu[] {
  const out: DetectedGpu[] = []
  for (const spec of specs) out.push(...parseSimulatedGpu(spec, out.length))
  return out
}
