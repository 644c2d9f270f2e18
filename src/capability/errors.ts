/** The capability room's error: callers branch on `code` and `reason` (isCoded, isRecordRejection, isFetchFailure). */
import { CodedError, isCoded } from '../common/index.js'

export type CapabilityRejection =
  | 'bad-key' | 'oversized' | 'malformed' | 'wrong-domain' | 'bad-signature' | 'wrong-signer'
  | 'peer-mismatch' | 'expired' | 'from-future' | 'lifetime-too-long' | 'bad-field'

/** Why a record asked of its provider directly (`/idlegrid/cap/1.0.0`) was not used. */
export type RecordFetchFailure = CapabilityRejection | 'timeout' | 'no-response' | 'unsupported' | 'failed'

/**
 * - `ERR_CAPABILITY_RECORD`: a capability record (or its DHT key) that must not be used (`reason`)
 * - `ERR_CAPABILITY_FETCH`: a provider's direct answer that must not be used, or none (`reason`)
 * - `ERR_GPU_DETECTION`: nvidia-smi is missing, failed, or printed what cannot be read
 */
export type CapabilityErrorCode = 'ERR_CAPABILITY_RECORD' | 'ERR_CAPABILITY_FETCH' | 'ERR_GPU_DETECTION'

type ReasonOf<C extends CapabilityErrorCode> = C extends 'ERR_CAPABILITY_RECORD' ? CapabilityRejection : C extends 'ERR_CAPABILITY_FETCH' ? RecordFetchFailure : never

export interface CapabilityErrorOptions<C extends CapabilityErrorCode> extends ErrorOptions {
  reason?: ReasonOf<C>
}

export class CapabilityError<C extends CapabilityErrorCode = CapabilityErrorCode> extends CodedError<C> {
  /** why a record or a fetch was refused (ERR_CAPABILITY_RECORD, ERR_CAPABILITY_FETCH) */
  readonly reason?: ReasonOf<C>

  constructor (code: C, message: string, options: CapabilityErrorOptions<C> = {}) {
    super(code, message, options)
    this.name = 'CapabilityError'
    if (options.reason != null) this.reason = options.reason
  }
}

export type CapabilityRecordError = CapabilityError<'ERR_CAPABILITY_RECORD'> & { reason: CapabilityRejection }
export type RecordFetchError = CapabilityError<'ERR_CAPABILITY_FETCH'> & { reason: RecordFetchFailure }

/** A record (or key) that must not be used: ERR_CAPABILITY_RECORD with its reason. */
export function recordRejected (reason: CapabilityRejection, message: string): CapabilityRecordError {
  return new CapabilityError('ERR_CAPABILITY_RECORD', message, { reason }) as CapabilityRecordError
}

/** A direct answer that must not be used: ERR_CAPABILITY_FETCH with its reason. */
export function fetchFailed (reason: RecordFetchFailure, message: string, options?: ErrorOptions): RecordFetchError {
  return new CapabilityError('ERR_CAPABILITY_FETCH', message, { ...options, reason }) as RecordFetchError
}

export function isRecordRejection (err: unknown): err is CapabilityRecordError {
  return isCoded(err, CapabilityError, 'ERR_CAPABILITY_RECORD')
}

export function isFetchFailure (err: unknown): err is RecordFetchError {
  return isCoded(err, CapabilityError, 'ERR_CAPABILITY_FETCH')
}
