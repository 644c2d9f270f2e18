/** Typed errors of the capability room: callers branch on `name` / `code` / `reason`. */

export type CapabilityRejection =
  | 'bad-key' | 'oversized' | 'malformed' | 'wrong-domain' | 'bad-signature' | 'wrong-signer'
  | 'peer-mismatch' | 'expired' | 'from-future' | 'lifetime-too-long' | 'bad-field'

/** A capability record (or its DHT key) that must not be used; `reason` says why. */
export class CapabilityRecordError extends Error {
  static readonly code = 'ERR_CAPABILITY_RECORD'
  readonly code = CapabilityRecordError.code
  readonly reason: CapabilityRejection

  constructor (reason: CapabilityRejection, message: string) {
    super(message)
    this.name = 'CapabilityRecordError'
    this.reason = reason
  }
}

/** Why a record asked of its provider directly (`/idlegrid/cap/1.0.0`) was not used. */
export type RecordFetchFailure = CapabilityRejection | 'timeout' | 'no-response' | 'unsupported' | 'failed'

/** A provider's direct answer that must not be used (or no answer); `reason` says why. */
export class RecordFetchError extends Error {
  static readonly code = 'ERR_CAPABILITY_FETCH'
  readonly code = RecordFetchError.code
  readonly reason: RecordFetchFailure

  constructor (reason: RecordFetchFailure, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'RecordFetchError'
    this.reason = reason
  }
}
