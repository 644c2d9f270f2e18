/**
 * Execution: the job stream protocol (/idlegrid/job/1.0.0), runners (process, docker), GPU
 * slots with tiered preemption, telemetry, signed attestations and receipts. Other folders
 * import only from here: the composition root takes the provider's services, the submit room
 * runs the renter's attempts.
 *
 * Where things are:
 *  - renter/   one attempt of the renter (attempt.ts): ship the inputs, follow the run, check
 *              the outputs and attestation, sign the receipt, within the renter's limits
 *  - provider/ the job service (job-service.ts), the declines at start time (admission.ts),
 *              GPU slots and preemption (scheduler.ts), inputs in, the run, outputs back
 *  - runners/  how a job runs on the provider: process (launcher, cgroups, users) or docker
 *  - shared/   the job stream's framing, file digests and the signed attestation / receipt
 */
export { execServices } from './role-services.js'
export { RUNNER_KINDS, planJobUser, defaultWorkRoot, checkWorkRootOutside } from './runners/index.js'
export type { RunnerKind, DockerSettings } from './runners/index.js'
export { DEFAULT_MAX_SHM_MIB } from './runners/index.js'
export { runAttempt } from './renter/attempt.js'
export { inputManifest } from './renter/attempt-send.js'
export type { AwardedJob, JobPayload, JobEvent, AttemptOutcome, AttemptResult, AttemptOptions } from './renter/attempt.js'
export { DiskBudget, RENTER_LIMITS, printable, renterLimits } from './renter/attempt-limits.js'
export type { RenterLimits } from './renter/attempt-limits.js'
export type { LeaseHost, LeaseRunHooks } from './provider/lease-host.js'
export type { RunHandle } from './runners/index.js'

// the provider's slot scheduler, run by the market simulator (src/sim) in virtual time
export { SlotScheduler } from './provider/scheduler.js'
export type { Lease, PreemptNotice } from './provider/slot-lease.js'
