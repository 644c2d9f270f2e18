/**
 * Why a ledger entry, a fraud proof or a sync exchange was refused. One class per condition,
 * each with `name` and `code`; every one of them means "the sender misbehaved" (a gossip
 * REJECT, the end of a sync session), except LedgerClosedError.
 */

export abstract class LedgerEntryError extends Error {
  abstract readonly code: string
}

/** The entry is not a decodable ledger-entry envelope within its bounds. */
export class MalformedEntryError extends LedgerEntryError {
  static readonly code = 'ERR_LEDGER_MALFORMED'
  readonly code = MalformedEntryError.code
  constructor (message: string) {
    super(message)
    this.name = 'MalformedEntryError'
  }
}

/** The entry's signature does not verify, or its signer is not its author. */
export class EntrySignatureError extends LedgerEntryError {
  static readonly code = 'ERR_LEDGER_SIGNATURE'
  readonly code = EntrySignatureError.code
  constructor (message: string) {
    super(message)
    this.name = 'EntrySignatureError'
  }
}

/** The entry does not extend its author's chain: bad seq or prev_hash. */
export class BrokenChainError extends LedgerEntryError {
  static readonly code = 'ERR_LEDGER_CHAIN'
  readonly code = BrokenChainError.code
  constructor (message: string) {
    super(message)
    this.name = 'BrokenChainError'
  }
}

/** The entry's time is further ahead of the local clock than the skew bound. */
export class FutureEntryError extends LedgerEntryError {
  static readonly code = 'ERR_LEDGER_FUTURE'
  readonly code = FutureEntryError.code
  constructor (message: string) {
    super(message)
    this.name = 'FutureEntryError'
  }
}

/** The entry's time is below its predecessor's: a feed's times never go back. */
export class EntryTimeOrderError extends LedgerEntryError {
  static readonly code = 'ERR_LEDGER_TIME_ORDER'
  readonly code = EntryTimeOrderError.code
  constructor (message: string) {
    super(message)
    this.name = 'EntryTimeOrderError'
  }
}

/** The entry's body exceeds the bound of its kind. */
export class OversizedBodyError extends LedgerEntryError {
  static readonly code = 'ERR_LEDGER_BODY_SIZE'
  readonly code = OversizedBodyError.code
  constructor (message: string) {
    super(message)
    this.name = 'OversizedBodyError'
  }
}

/** The body does not decode, its inner envelope does not verify, or it names someone else. */
export class InvalidBodyError extends LedgerEntryError {
  static readonly code = 'ERR_LEDGER_BODY'
  readonly code = InvalidBodyError.code
  constructor (message: string) {
    super(message)
    this.name = 'InvalidBodyError'
  }
}

/** A fraud proof whose evidence does not prove what it claims. */
export class InvalidFraudProofError extends LedgerEntryError {
  static readonly code = 'ERR_LEDGER_FRAUD_PROOF'
  readonly code = InvalidFraudProofError.code
  constructor (message: string) {
    super(message)
    this.name = 'InvalidFraudProofError'
  }
}

/** The store was used after close(). */
export class LedgerClosedError extends Error {
  static readonly code = 'ERR_LEDGER_CLOSED'
  readonly code = LedgerClosedError.code
  constructor () {
    super('the ledger store is closed')
    this.name = 'LedgerClosedError'
  }
}

/** A sync peer answered out of protocol (wrong response, non-contiguous range, oversized), late or not at all. */
export class SyncProtocolError extends Error {
  static readonly code = 'ERR_LEDGER_SYNC'
  readonly code = SyncProtocolError.code
  constructor (message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'SyncProtocolError'
  }
}

/**
 * The entry's author is over its quota (entries per minute by this node's clock, or stored bytes) for
 * its standing in this node's view. Not the relayer's fault: gossip ignores it, sync stops
 * pulling that feed for the session.
 */
export class QuotaExceededError extends LedgerEntryError {
  static readonly code = 'ERR_LEDGER_QUOTA'
  readonly code = QuotaExceededError.code
  constructor (message: string) {
    super(message)
    this.name = 'QuotaExceededError'
  }
}

/** Why a usage statement is refused (src/ledger/usage/statement.ts): one name per broken rule. */
export type UsageRejection =
  | 'oversized' | 'malformed' | 'bad-lease-id' | 'bad-party' | 'not-a-party' | 'bad-interval'
  | 'over-bounds' | 'amount-mismatch' | 'bad-provider-signature' | 'bad-renter-signature'

/** A co-signed usage statement that breaks a statement rule (protocols/README.md §7 "Usage statements"). */
export class InvalidUsageError extends LedgerEntryError {
  static readonly code = 'ERR_LEDGER_USAGE'
  readonly code = InvalidUsageError.code
  constructor (readonly reason: UsageRejection, message: string) {
    super(message)
    this.name = 'InvalidUsageError'
  }
}

/** A usage statement this feed already holds, or whose interval overlaps one of the same lease. */
export class UsageOverlapError extends LedgerEntryError {
  static readonly code = 'ERR_LEDGER_USAGE_OVERLAP'
  readonly code = UsageOverlapError.code
  constructor (readonly reason: 'duplicate' | 'overlap', message: string) {
    super(message)
    this.name = 'UsageOverlapError'
  }
}
