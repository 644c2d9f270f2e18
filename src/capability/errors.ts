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
