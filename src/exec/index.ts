/**
 * Execution: the job stream protocol (/idlegrid/job/1.0.0), runners (process, docker), GPU
 * slots with tiered preemption, telemetry, signed attestations and receipts, and the renter
 * loop that never loses a job.
 */
export { jobExecService, JobExecService, EXEC_DEFAULTS, OutputLimitError } from './provider.js'
export type { ExecServiceInit, ExecComponents, ExecGpu, JobRecord, AttestationEvent, ReceiptEvent } from './provider.js'
export { runAttempt, runJob, inputManifest, summaryJson, RENTER_DEFAULTS } from './renter.js'
export type { AwardedJob, AwardSource, JobPayload, JobRuntime, JobInput, JobEvent, AttemptOutcome, AttemptResult, AttemptOptions, RunJobOptions, JobSummary } from './renter.js'
export { SlotScheduler, DEFAULT_GRACE_MS } from './scheduler.js'
export type { Tier, PauseReason, PreemptReason, PreemptNotice, Lease, Refusal, SlotJob, SlotView, CapacityView, SchedulerGpu } from './scheduler.js'
export { ConditionMonitor } from './conditions.js'
export type { ConditionOptions } from './conditions.js'
export { TelemetrySampler, TelemetryAccumulator } from './telemetry.js'
export type { TelemetrySummary, TelemetryRead } from './telemetry.js'
export { signAttestation, openAttestation, signReceipt, openReceipt, receiptOutcome, RecordError } from './records.js'
export type { SignedRecord, AttestationFields, ReceiptFields } from './records.js'
export { FrameChannel, frameKind, MAX_FRAME_BYTES, CHUNK_BYTES } from './job-stream.js'
export { fileSetDigest, sortEntries, listFileSet, hashFile, checkRelativePath, FileSetTooLargeError } from './digest.js'
export { JobStreamError, JobRejectedError, RunnerError, UnsafePathError } from './errors.js'
export type { JobStreamErrorCode } from './errors.js'
export * from './runners/index.js'
export { execExtensions, execRenter, makeRunner, payloadFromSpec, schedulerCapacity, EXEC_SERVICE, EXEC_RENTER_SERVICE, EXEC_CAPABILITY } from './extensions.js'
export type { ExecExtensionOptions, ExecExtensions, ExecProviderOptions, ExecRenterInit } from './extensions.js'
export { runSubmitFlow, EXEC_SUBMIT_OPTIONS, SubmitError } from './submit-flow.js'
export type { OneShotCall, SubmitOutput } from './submit-flow.js'
