import { CodedError, isCoded } from '../common/index.js'

/**
 * - `ERR_KEY_FILE`: the node key file cannot be read, is corrupt or readable by others (`path`)
 * - `ERR_DATA_DIR_PERMISSIONS`: a data directory others could write (`path`); exit code 2
 * - `ERR_ENVELOPE`: a signed envelope that must not be used (`reason` says why)
 */
export type IdentityErrorCode = 'ERR_KEY_FILE' | 'ERR_DATA_DIR_PERMISSIONS' | 'ERR_ENVELOPE'

export type EnvelopeRejection = 'oversized' | 'malformed' | 'wrong-domain' | 'bad-signer' | 'wrong-signer' | 'bad-signature'

export interface IdentityErrorOptions extends ErrorOptions {
  /** the key file or data directory at fault */
  path?: string
  /** why an envelope was refused (ERR_ENVELOPE) */
  reason?: EnvelopeRejection
}

/** The identity room's error: a key file, a data directory or an envelope that cannot be used. */
export class IdentityError extends CodedError<IdentityErrorCode> {
  readonly path?: string
  readonly reason?: EnvelopeRejection

  constructor (code: IdentityErrorCode, message: string, options: IdentityErrorOptions = {}) {
    super(code, message, options)
    this.name = 'IdentityError'
    if (options.path != null) this.path = options.path
    if (options.reason != null) this.reason = options.reason
  }
}

/** An IdentityError coded ERR_ENVELOPE, with its reason. */
export type EnvelopeRefusal = IdentityError & { code: 'ERR_ENVELOPE', reason: EnvelopeRejection }

/** A refused envelope: ERR_ENVELOPE with its reason. */
export function envelopeError (reason: EnvelopeRejection, message: string): EnvelopeRefusal {
  return new IdentityError('ERR_ENVELOPE', message, { reason }) as EnvelopeRefusal
}

export function isEnvelopeError (err: unknown): err is EnvelopeRefusal {
  return isCoded(err, IdentityError, 'ERR_ENVELOPE')
}
