/**
 * The bounds the provider's job service works within, from its init or else the defaults
 * (EXEC_DEFAULTS): a run's time and grace, input and output bytes, slots per renter, and the
 * bounds on receiving a job's inputs (job-service.ts).
 */
import type { FileEntry } from '../../../protocols/job.js'
import { declaredInputBytes, type RunLimits } from './admission.js'
import { EXEC_DEFAULTS, type ExecServiceInit } from './job-service-init.js'
import { INPUT_TRANSFER_DEFAULTS, inputDeadlineMs, maxInputChunks, type ReceiveLimits } from './receive-inputs.js'

/** A run's time bound, and the grace a stopped job has (the scheduler's). */
export function runLimits (init: ExecServiceInit, graceMs: number): RunLimits {
  return { maxJobMs: init.maxJobMs ?? EXEC_DEFAULTS.maxJobMs, graceMs }
}

/**
 * The bounds on receiving `manifest`: its declared bytes (within ours), a deadline counted from
 * Start, a number of chunks.
 */
export function receiveLimits (init: ExecServiceInit, manifest: FileEntry[], startedAt: number): ReceiveLimits {
  const declared = declaredInputBytes(manifest)
  const transfer = { ...INPUT_TRANSFER_DEFAULTS, ...init.inputTransfer }
  return {
    maxInputBytes: Math.min(maxInputBytes(init), declared),
    deadlineMs: inputDeadlineMs(declared, transfer),
    startedAt,
    maxChunks: maxInputChunks(manifest.length, declared)
  }
}

export function maxInputBytes (init: ExecServiceInit): number {
  return init.maxInputBytes ?? EXEC_DEFAULTS.maxInputBytes
}

export function maxOutputBytes (init: ExecServiceInit): number {
  return init.maxOutputBytes ?? EXEC_DEFAULTS.maxOutputBytes
}

export function maxSlotsPerRenter (init: ExecServiceInit): number {
  return init.maxSlotsPerRenter ?? Math.max(1, init.gpus.length)
}
