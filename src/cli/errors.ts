import { CodedError } from '../common/index.js'

/** A mistake in how the command was called: printed as one line, exit code 2. The cli room's one error. */
export class UsageError extends CodedError<'ERR_USAGE'> {
  constructor (message: string) {
    super('ERR_USAGE', message)
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
