/** The renter's job path could not run a job as asked (a bad job, no award, a node that is no renter). */
export class SubmitError extends Error {
  static readonly code = 'ERR_SUBMIT'
  readonly code = SubmitError.code
  constructor (message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'SubmitError'
  }
}
