/**
 * Execution: the job stream protocol (/idlegrid/job/1.0.0), runners (process, docker), GPU
 * slots with tiered preemption, telemetry, signed attestations and receipts, and the
 * renter's side of one attempt.
 */
export { jobExecService, JobExecService, EXEC_DEFAULTS, OutputLimitError } from './provider.js'
export type { ExecServiceInit, ExecComponents, ExecGpu, JobRecord, AttestationEvent, ReceiptEvent } from './provider.js'
export { runAttempt, inputManifest, RENTER_DEFAULTS } from './renter.js'
export type { AwardedJob, JobPayload, JobRuntime, JobInput, JobEvent, AttemptOutcome, AttemptResult, AttemptOptions } from './renter.js'
export { SlotScheduler, DEFAULT_GRACE_MS } from './scheduler.js'
export type { Tier, PauseReason, PreemptReason, PreemptNotice, Lease, Refusal, SlotJob, SlotView, CapacityView, SchedulerGpu } from './scheduler.js'
export { ConditionMonitor } from './conditions.js'
export type { ConditionOptions } from './conditions.js'
export { TelemetrySampler, TelemetryAccumulator } from './telemetry.js'
export type { TelemetrySummary, TelemetryRead } from './telemetry.js'
export { signAttestation, openAttestation, signReceipt, openReceipt, receiptOutcome, RecordError } from './records.js'
export type { SignedRecord, AttestationFields, ReceiptFields } from './records.js'
export { verifyAward, openAward, tierName, AwardCheckError } from './award-check.js'
export type { VerifiedAward } from './award-check.js'
export { FrameChannel, frameKind, MAX_FRAME_BYTES, CHUNK_BYTES } from './job-stream.js'
export { fileSetDigest, sortEntries, listFileSet, hashFile, checkRelativePath, FileSetTooLargeError } from './digest.js'
export { JobStreamError, JobRejectedError, RunnerError, UnsafePathError } from './errors.js'
export type { JobStreamErrorCode } from './errors.js'
export * from './runners/index.js'
export { execExtensions, makeRunner, schedulerCapacity, EXEC_SERVICE, EXEC_CAPABILITY } from './extensions.js'
export type { ExecExtensionOptions, ExecExtensions, ExecProviderOptions } from './extensions.js'
