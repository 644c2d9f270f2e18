/** A mistake in how the command was called: printed as one line, exit code 2. */
export class UsageError extends Error {
  static readonly code = 'ERR_USAGE'
  readonly code = UsageError.code
  constructor (message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  /** submit: the job completed, but no peer confirmed holding its receipt (or it was not written) */
  receiptUnconfirmed: 3
} as const
