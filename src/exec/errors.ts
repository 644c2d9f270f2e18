import { JobFrame } from '../../protocols/job.js'
import { CodedError, isCoded } from '../common/index.js'

/** Why a job stream ended early; the same codes travel in JobFrame.Error. */
export type JobStreamErrorCode = 'FRAME_TOO_LARGE' | 'INPUT_TOO_LARGE' | 'OUTPUT_TOO_LARGE' | 'IDLE_TIMEOUT' | 'PROTOCOL' | 'BAD_SIGNATURE' | 'CANCELLED' | 'INTERNAL' | 'BAD_ATTESTATION' | 'BAD_RECEIPT'

/** Which of the renter's limits a provider broke (README.md "Renter limits"). */
export type RenterLimitName = 'log-bytes' | 'files' | 'depth' | 'output-bytes' | 'deadline' | 'disk'

/**
 * - `ERR_JOB_STREAM`: a violation of the job stream protocol, raised on the side that saw it and
 *   sent to the other; `wireCode` is its JobFrame.Error code, `remote` true when the other side
 *   told us (an Error frame), false when we detected it
 * - `ERR_RENTER_LIMIT`: a provider broke one of the renter's limits (`limit`): the attempt fails,
 *   the job is re-auctioned; a job stream failure too (`wireCode` CANCELLED for the deadline,
 *   OUTPUT_TOO_LARGE for the others)
 * - `ERR_START_DECLINED`: this provider declines a job at start time; `rejection` is the
 *   JobFrame.Rejected code it answers the Start frame with
 * - `ERR_JOB_REJECTED`: the provider declined the job at start time (a Rejected frame:
 *   admission.ts's ERR_START_DECLINED); `reason` is its JobFrame.Rejected.Code name, e.g. NOT_AWARDED
 * - `ERR_RUNNER`: a runner could not start or run a job (bad command, engine missing, policy)
 * - `ERR_UNSAFE_PATH`: a path from the network that is not a safe relative POSIX path
 * - `ERR_OUTPUT_LIMIT`: a job's outputs exceed the provider's limits (file count or bytes); it gets no outputs back
 * - `ERR_EXEC_RECORD`: an attestation or receipt that does not open; `reason` says which check
 *   failed, e.g. "signature", "job-id", "provider"
 */
export type ExecErrorCode = 'ERR_JOB_STREAM' | 'ERR_RENTER_LIMIT' | 'ERR_START_DECLINED' | 'ERR_JOB_REJECTED' | 'ERR_RUNNER' | 'ERR_UNSAFE_PATH' | 'ERR_OUTPUT_LIMIT' | 'ERR_EXEC_RECORD'

export interface ExecErrorOptions extends ErrorOptions {
  wireCode?: JobStreamErrorCode
  remote?: boolean
  reason?: string
  limit?: RenterLimitName
  rejection?: JobFrame.Rejected.Code
}

/** The exec room's error (the codes above). */
export class ExecError<C extends ExecErrorCode = ExecErrorCode> extends CodedError<C> {
  /** the JobFrame.Error code, for ERR_JOB_STREAM and ERR_RENTER_LIMIT */
  readonly wireCode?: JobStreamErrorCode
  /** the other side sent it as an Error frame */
  readonly remote: boolean
  /** why, for ERR_JOB_REJECTED and ERR_EXEC_RECORD */
  readonly reason?: string
  /** the renter's limit broken, for ERR_RENTER_LIMIT */
  readonly limit?: RenterLimitName
  /** the Rejected frame's code, for ERR_START_DECLINED */
  readonly rejection?: JobFrame.Rejected.Code

  constructor (code: C, message: string, options: ExecErrorOptions = {}) {
    super(code, message, { cause: options.cause })
    this.name = 'ExecError'
    this.remote = options.remote ?? false
    if (options.wireCode != null) this.wireCode = options.wireCode
    if (options.reason != null) this.reason = options.reason
    if (options.limit != null) this.limit = options.limit
    if (options.rejection != null) this.rejection = options.rejection
  }
}

/** A job stream failure (ERR_JOB_STREAM, or ERR_RENTER_LIMIT), with the Error frame code that says it. */
export type JobStreamError = ExecError<'ERR_JOB_STREAM' | 'ERR_RENTER_LIMIT'> & { wireCode: JobStreamErrorCode }
export type RenterLimitError = ExecError<'ERR_RENTER_LIMIT'> & { wireCode: JobStreamErrorCode, limit: RenterLimitName }
export type StartDecline = ExecError<'ERR_START_DECLINED'> & { rejection: JobFrame.Rejected.Code }
export type JobRejectedError = ExecError<'ERR_JOB_REJECTED'> & { reason: string }
export type RecordError = ExecError<'ERR_EXEC_RECORD'> & { reason: string }

/** A violation of the job stream protocol: ERR_JOB_STREAM with its Error frame code. */
export function streamError (
  wireCode: JobStreamErrorCode,
  message: string,
  opts: { remote?: boolean, cause?: unknown } = {}
): JobStreamError {
  return new ExecError('ERR_JOB_STREAM', message, { ...opts, wireCode }) as JobStreamError
}

/** A renter's limit the provider broke: ERR_RENTER_LIMIT. */
export function renterLimitError (limit: RenterLimitName, message: string): RenterLimitError {
  return new ExecError('ERR_RENTER_LIMIT', message, { limit, wireCode: limit === 'deadline' ? 'CANCELLED' : 'OUTPUT_TOO_LARGE' }) as RenterLimitError
}

/** This provider declines the job at start: ERR_START_DECLINED with the Rejected code it answers with. */
export function startDecline (rejection: JobFrame.Rejected.Code, message: string): StartDecline {
  return new ExecError('ERR_START_DECLINED', message, { rejection }) as StartDecline
}

/** The provider's Rejected frame: ERR_JOB_REJECTED with its code name. */
export function jobRejected (reason: string, message: string): JobRejectedError {
  return new ExecError('ERR_JOB_REJECTED', message, { reason }) as JobRejectedError
}

/** An attestation or receipt that does not open: ERR_EXEC_RECORD with the check that failed. */
export function recordError (reason: string, message: string, options?: ErrorOptions): RecordError {
  return new ExecError('ERR_EXEC_RECORD', message, { ...options, reason }) as RecordError
}

/** The Error frame that tells the other side about `err`. */
export function errorFrame (err: JobStreamError): JobFrame.Error {
  return { code: JobFrame.Error.Code[err.wireCode], message: err.message.slice(0, 1024) }
}

export function isStreamError (err: unknown): err is JobStreamError {
  return isCoded(err, ExecError, 'ERR_JOB_STREAM', 'ERR_RENTER_LIMIT')
}

export function isRenterLimit (err: unknown): err is RenterLimitError {
  return isCoded(err, ExecError, 'ERR_RENTER_LIMIT')
}

export function isStartDecline (err: unknown): err is StartDecline {
  return isCoded(err, ExecError, 'ERR_START_DECLINED')
}

export function isJobRejected (err: unknown): err is JobRejectedError {
  return isCoded(err, ExecError, 'ERR_JOB_REJECTED')
}

export function isRecordError (err: unknown): err is RecordError {
  return isCoded(err, ExecError, 'ERR_EXEC_RECORD')
}
