import { CodedError, isCoded } from '../common/index.js'

/** Why a request stream failed (ERR_REQUEST_RESPONSE). */
export type RequestFailure = 'timeout' | 'no-response' | 'failed'

/** Why no direct connection came of it, or that the peer's offer broke the rules (ERR_DIRECT_PATH). */
export type DirectPathFailure = 'no-path' | 'bad-offer' | 'refused' | 'timeout' | 'failed'

/**
 * - `ERR_REQUEST_RESPONSE`: a request stream timed out, closed unanswered, or broke (`reason`)
 * - `ERR_DIRECT_PATH`: no direct connection to a peer reached over a relay (`reason`)
 * - `ERR_RELAY_BUDGET`: this relay's bandwidth budget for the hour is spent
 * - `ERR_DATA_DIR_IN_USE`: another running node holds the data directory's lock
 */
export type NodeErrorCode = 'ERR_REQUEST_RESPONSE' | 'ERR_DIRECT_PATH' | 'ERR_RELAY_BUDGET' | 'ERR_DATA_DIR_IN_USE'

type ReasonOf<C extends NodeErrorCode> = C extends 'ERR_REQUEST_RESPONSE' ? RequestFailure : C extends 'ERR_DIRECT_PATH' ? DirectPathFailure : never

export interface NodeErrorOptions<C extends NodeErrorCode> extends ErrorOptions {
  reason?: ReasonOf<C>
}

/** The node room's error. */
export class NodeError<C extends NodeErrorCode = NodeErrorCode> extends CodedError<C> {
  /** what went wrong, for ERR_REQUEST_RESPONSE and ERR_DIRECT_PATH */
  readonly reason?: ReasonOf<C>

  constructor (code: C, message: string, options: NodeErrorOptions<C> = {}) {
    super(code, message, options)
    this.name = 'NodeError'
    if (options.reason != null) this.reason = options.reason
  }
}

/** A NodeError coded ERR_REQUEST_RESPONSE, with its reason. */
export type RequestFailedError = NodeError<'ERR_REQUEST_RESPONSE'> & { reason: RequestFailure }
/** A NodeError coded ERR_DIRECT_PATH, with its reason. */
export type DirectPathFailedError = NodeError<'ERR_DIRECT_PATH'> & { reason: DirectPathFailure }

export function requestFailed (reason: RequestFailure, message: string, options?: ErrorOptions): RequestFailedError {
  return new NodeError('ERR_REQUEST_RESPONSE', message, { ...options, reason }) as RequestFailedError
}

export function directPathFailed (
  reason: DirectPathFailure,
  message: string,
  options?: ErrorOptions
): DirectPathFailedError {
  return new NodeError('ERR_DIRECT_PATH', message, { ...options, reason }) as DirectPathFailedError
}

export function isRequestFailure (err: unknown): err is RequestFailedError {
  return isCoded(err, NodeError, 'ERR_REQUEST_RESPONSE')
}

export function isDirectPathFailure (err: unknown): err is DirectPathFailedError {
  return isCoded(err, NodeError, 'ERR_DIRECT_PATH')
}
