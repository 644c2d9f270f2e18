/**
 * Execution: the job stream protocol (/idlegrid/job/1.0.0), runners (process, docker), GPU
 * slots with tiered preemption, telemetry, signed attestations and receipts. Other folders
 * import only from here: the composition root takes the provider's services, the submit room
 * runs the renter's attempts.
 */
export { execServices } from './services.js'
export { EXEC_SERVICE, EXEC_CAPABILITY } from './job-service-init.js'
export { RUNNER_KINDS, planJobUser, defaultWorkRoot, checkWorkRootOutside } from './runners/index.js'
export type { RunnerKind, DockerSettings } from './runners/index.js'
export { DEFAULT_MAX_SHM_MIB } from './runners/index.js'
export { runAttempt } from './renter.js'
export { inputManifest } from './attempt-send.js'
export type { AwardedJob, JobPayload, JobEvent, AttemptOutcome, AttemptResult, AttemptOptions, ReceiptAckState } from './renter.js'
export { DiskBudget, RENTER_LIMITS, RenterLimitError, printable, renterLimits } from './attempt-limits.js'
export type { RenterLimits, RenterLimitName } from './attempt-limits.js'
export type { LeaseHost, LeaseRunHooks } from './lease-host.js'
export type { RunHandle } from './runners/index.js'

// the provider's slot scheduler, run by the market simulator (src/sim) in virtual time
export { SlotScheduler } from './scheduler.js'
export type { Lease, PreemptNotice } from './scheduler.js'
