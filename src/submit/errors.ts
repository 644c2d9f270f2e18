import { CodedError } from '../common/index.js'
import { missingBootstrap } from '../config/index.js'

/**
 * - `ERR_SUBMIT`: the renter's job path could not run a job as asked (a bad job, no award, a
 *   node that is no renter)
 * - `ERR_NO_PEERS`: the renter node is connected to no peer, so no provider would hear of the job
 *
 * Both travel in control answers; the CLI exits 2 on either.
 */
export type SubmitErrorCode = 'ERR_SUBMIT' | 'ERR_NO_PEERS'

/** The submit room's error. */
export class SubmitError extends CodedError<SubmitErrorCode> {
  constructor (code: SubmitErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options)
    this.name = 'SubmitError'
  }
}

/**
 * ERR_NO_PEERS: refused before any auction, with what to do (the bootstrap rule `idlegrid
 * doctor` applies).
 */
export function noPeers (bootstrap: readonly string[]): SubmitError {
  return new SubmitError('ERR_NO_PEERS', noPeersMessage(bootstrap))
}

function noPeersMessage (bootstrap: readonly string[]): string {
  const missing = missingBootstrap({ role: 'renter', bootstrap: [...bootstrap] })
  if (missing != null) return `this node knows no peers, so no provider would hear of the job: ${missing.problem}; ${missing.fix}`
  return `this node is connected to none of its ${bootstrap.length} bootstrap peer(s), so no provider would hear of the job; idlegrid doctor checks whether they answer`
}
