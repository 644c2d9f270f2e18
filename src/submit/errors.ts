import { missingBootstrap } from '../config/index.js'

/** The renter's job path could not run a job as asked (a bad job, no award, a node that is no renter). */
export class SubmitError extends Error {
  static readonly code = 'ERR_SUBMIT'
  readonly code = SubmitError.code
  constructor (message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'SubmitError'
  }
}

/**
 * The renter node is connected to no peer, so no provider would hear of the job: refused before
 * any auction, with what to do (the bootstrap rule `idlegrid doctor` applies).
 */
export class NoPeersError extends Error {
  static readonly code = 'ERR_NO_PEERS'
  readonly code = NoPeersError.code
  constructor (bootstrap: readonly string[]) {
    super(noPeersMessage(bootstrap))
    this.name = 'NoPeersError'
  }
}

function noPeersMessage (bootstrap: readonly string[]): string {
  const missing = missingBootstrap({ role: 'renter', bootstrap: [...bootstrap] })
  if (missing != null) return `this node knows no peers, so no provider would hear of the job: ${missing.problem}; ${missing.fix}`
  return `this node is connected to none of its ${bootstrap.length} bootstrap peer(s), so no provider would hear of the job; idlegrid doctor checks whether they answer`
}
