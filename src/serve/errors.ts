import { CodedError, isCoded } from '../common/index.js'
import type { ServeFrame } from '../../protocols/serve.js'
import type { UsageFrame } from '../../protocols/usage.js'

/** A serve stream's Error frame code (protocols/README.md, /idlegrid/serve/1.1.0). */
export type ServeFrameCode = keyof typeof ServeFrame.Error.Code
/** A usage exchange's Refused frame code (protocols/README.md, /idlegrid/usage/1.0.0). */
export type UsageRefusedCode = keyof typeof UsageFrame.Refused.Code

/**
 * - `ERR_SERVE`: a deploy, scale or stop the renter node cannot do (in control answers)
 * - `ERR_SERVE_STREAM`: a serve stream failed; `wireCode` is its Error frame code, `remote` when
 *   the other side sent it
 * - `ERR_SERVE_FORWARD`: the gateway got no answer from a replica; `status` the HTTP status it
 *   answers with, `passedOn` whether the request may have reached the service, `fromProvider`
 *   whether the replica's provider answered, `wireCode` the provider's Error frame code (or
 *   UNSUPPORTED: it does not speak this serve version)
 * - `ERR_USAGE_EXCHANGE`: a usage exchange failed or was refused; `wireCode` is the Refused
 *   frame code, `remote` when the other side said so itself
 */
export type ServeErrorCode = 'ERR_SERVE' | 'ERR_SERVE_STREAM' | 'ERR_SERVE_FORWARD' | 'ERR_USAGE_EXCHANGE'

type WireCodeOf<C extends ServeErrorCode> =
  C extends 'ERR_SERVE_STREAM' ? ServeFrameCode
    : C extends 'ERR_USAGE_EXCHANGE' ? UsageRefusedCode
      : C extends 'ERR_SERVE_FORWARD' ? ServeFrameCode | 'UNSUPPORTED'
        : never

export type ForwardStatus = 502 | 503 | 504

export interface ServeErrorOptions<C extends ServeErrorCode> extends ErrorOptions {
  wireCode?: WireCodeOf<C>
  remote?: boolean
  status?: ForwardStatus
  passedOn?: boolean
  fromProvider?: boolean
}

/** The serve room's error (the codes above). */
export class ServeError<C extends ServeErrorCode = ServeErrorCode> extends CodedError<C> {
  /** the code a frame on the wire carries (or would carry) for it */
  readonly wireCode?: WireCodeOf<C>
  /** the other side sent it as an Error or Refused frame */
  readonly remote: boolean
  readonly status?: ForwardStatus
  readonly passedOn?: boolean
  readonly fromProvider?: boolean

  constructor (code: C, message: string, options: ServeErrorOptions<C> = {}) {
    super(code, message, { cause: options.cause })
    this.name = 'ServeError'
    this.remote = options.remote ?? false
    if (options.wireCode != null) this.wireCode = options.wireCode
    if (options.status != null) this.status = options.status
    if (options.passedOn != null) this.passedOn = options.passedOn
    if (options.fromProvider != null) this.fromProvider = options.fromProvider
  }
}

export type ServeStreamError = ServeError<'ERR_SERVE_STREAM'> & { wireCode: ServeFrameCode }
export type UsageExchangeError = ServeError<'ERR_USAGE_EXCHANGE'> & { wireCode: UsageRefusedCode }
export type ForwardError = ServeError<'ERR_SERVE_FORWARD'> & { status: ForwardStatus, passedOn: boolean, fromProvider: boolean }

/** A serve stream's failure, with the Error frame code that says it. */
export function streamError (
  wireCode: ServeFrameCode,
  message: string,
  opts: { remote?: boolean, cause?: unknown } = {}
): ServeStreamError {
  return new ServeError('ERR_SERVE_STREAM', message, { ...opts, wireCode }) as ServeStreamError
}

/** A usage exchange's failure, with the Refused frame code that says it. */
export function usageError (wireCode: UsageRefusedCode, message: string, remote = false): UsageExchangeError {
  return new ServeError('ERR_USAGE_EXCHANGE', message, { wireCode, remote }) as UsageExchangeError
}

export interface ForwardFailure {
  /** the request may have reached the service */
  passedOn: boolean
  /** the provider's Error frame code, or UNSUPPORTED */
  wireCode?: ServeFrameCode | 'UNSUPPORTED'
  /** the replica's provider answered (a Response, or an Error frame of its own); false when nothing came back */
  fromProvider?: boolean
}

/** The gateway's failure to get an answer from a replica, with the HTTP status it answers with. */
export function forwardError (status: ForwardStatus, message: string, failure: ForwardFailure): ForwardError {
  return new ServeError('ERR_SERVE_FORWARD', message, { status, passedOn: failure.passedOn, wireCode: failure.wireCode, fromProvider: failure.fromProvider ?? false }) as ForwardError
}

export function isStreamError (err: unknown): err is ServeStreamError {
  return isCoded(err, ServeError, 'ERR_SERVE_STREAM')
}

export function isUsageError (err: unknown): err is UsageExchangeError {
  return isCoded(err, ServeError, 'ERR_USAGE_EXCHANGE')
}

export function isForwardError (err: unknown): err is ForwardError {
  return isCoded(err, ServeError, 'ERR_SERVE_FORWARD')
}
