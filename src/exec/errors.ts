import { JobFrame } from '../../protocols/job.js'

/** Why a job stream ended early; the same codes travel in JobFrame.Error. */
export type JobStreamErrorCode = 'FRAME_TOO_LARGE' | 'INPUT_TOO_LARGE' | 'OUTPUT_TOO_LARGE' | 'IDLE_TIMEOUT' | 'PROTOCOL' | 'BAD_SIGNATURE' | 'CANCELLED' | 'INTERNAL' | 'BAD_ATTESTATION' | 'BAD_RECEIPT'

/** A violation of the job stream protocol, raised on the side that saw it and sent to the other. */
export class JobStreamError extends Error {
  readonly code: JobStreamErrorCode
  /** true when the other side told us (an Error frame), false when we detected it */
  readonly remote: boolean

  constructor (code: JobStreamErrorCode, message: string, opts: { remote?: boolean, cause?: unknown } = {}) {
    super(message, { cause: opts.cause })
    this.name = 'JobStreamError'
    this.code = code
    this.remote = opts.remote ?? false
  }

  toFrame (): JobFrame.Error {
    return { code: JobFrame.Error.Code[this.code], message: this.message.slice(0, 1024) }
  }
}

/** The provider declined the job at start time (a Rejected frame: admission.ts's StartDecline). */
export class JobRejectedError extends Error {
  static readonly code = 'ERR_JOB_REJECTED'
  readonly code = JobRejectedError.code
  /** JobFrame.Rejected.Code name, e.g. NOT_AWARDED */
  readonly reason: string

  constructor (reason: string, message: string) {
    super(message)
    this.name = 'JobRejectedError'
    this.reason = reason
  }
}

/** A runner could not start or run a job (bad command, engine missing, policy). */
export class RunnerError extends Error {
  static readonly code = 'ERR_RUNNER'
  readonly code = RunnerError.code

  constructor (message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'RunnerError'
  }
}

/** A path from the network that is not a safe relative POSIX path. */
export class UnsafePathError extends Error {
  static readonly code = 'ERR_UNSAFE_PATH'
  readonly code = UnsafePathError.code

  constructor (message: string) {
    super(message)
    this.name = 'UnsafePathError'
  }
}

/** A job's outputs exceed the provider's limits (file count or bytes); it gets no outputs back. */
export class OutputLimitError extends Error {
  static readonly code = 'ERR_OUTPUT_LIMIT'
  readonly code = OutputLimitError.code

  constructor (message: string) {
    super(message)
    this.name = 'OutputLimitError'
  }
}
