import { CodedError, isCoded } from '../common/index.js'
import type { TrustListRejection } from './reputation/anchors/list.js'

/**
 * Why a ledger entry, a fraud proof, a usage statement or a sync exchange was refused: the
 * ledger room's error, one code per condition. Every entry code (LedgerEntryErrorCode) means
 * "the sender misbehaved" (a gossip REJECT, the end of a sync session), except
 * ERR_LEDGER_QUOTA (its author is over quota: gossip ignores it).
 *
 * - `ERR_LEDGER_MALFORMED`: the entry is not a decodable ledger-entry envelope within its bounds
 * - `ERR_LEDGER_SIGNATURE`: the entry's signature does not verify, or its signer is not its author
 * - `ERR_LEDGER_CHAIN`: the entry does not extend its author's chain (bad seq or prev_hash)
 * - `ERR_LEDGER_FUTURE`: the entry's time is further ahead of the local clock than the skew bound
 * - `ERR_LEDGER_TIME_ORDER`: the entry's time is below its predecessor's
 * - `ERR_LEDGER_BODY_SIZE`: the entry's body exceeds the bound of its kind
 * - `ERR_LEDGER_BODY`: the body does not decode, its inner envelope does not verify, or it names someone else
 * - `ERR_LEDGER_FRAUD_PROOF`: a fraud proof whose evidence does not prove what it claims
 * - `ERR_LEDGER_QUOTA`: the entry's author is over its quota for its standing in this node's view
 * - `ERR_LEDGER_USAGE`: a co-signed usage statement that breaks a statement rule (`reason`)
 * - `ERR_LEDGER_USAGE_OVERLAP`: a usage statement held already, or overlapping one of its lease (`reason`)
 * - `ERR_LEDGER_CLOSED`: the store was used after close()
 * - `ERR_LEDGER_SYNC`: a sync peer answered out of protocol (wrong response, non-contiguous range,
 *   oversized), late or not at all
 * - `ERR_TRUST_LIST`: a trust list that must not be used (`reason`)
 */
export type LedgerEntryErrorCode =
  | 'ERR_LEDGER_MALFORMED' | 'ERR_LEDGER_SIGNATURE' | 'ERR_LEDGER_CHAIN' | 'ERR_LEDGER_FUTURE'
  | 'ERR_LEDGER_TIME_ORDER' | 'ERR_LEDGER_BODY_SIZE' | 'ERR_LEDGER_BODY' | 'ERR_LEDGER_FRAUD_PROOF'
  | 'ERR_LEDGER_QUOTA' | 'ERR_LEDGER_USAGE' | 'ERR_LEDGER_USAGE_OVERLAP'

export type LedgerErrorCode = LedgerEntryErrorCode | 'ERR_LEDGER_CLOSED' | 'ERR_LEDGER_SYNC' | 'ERR_TRUST_LIST'

/** Every code of a refused entry. */
export const LEDGER_ENTRY_CODES: readonly LedgerEntryErrorCode[] = [
  'ERR_LEDGER_MALFORMED', 'ERR_LEDGER_SIGNATURE', 'ERR_LEDGER_CHAIN', 'ERR_LEDGER_FUTURE',
  'ERR_LEDGER_TIME_ORDER', 'ERR_LEDGER_BODY_SIZE', 'ERR_LEDGER_BODY', 'ERR_LEDGER_FRAUD_PROOF',
  'ERR_LEDGER_QUOTA', 'ERR_LEDGER_USAGE', 'ERR_LEDGER_USAGE_OVERLAP'
]

/** Why a usage statement is refused (src/ledger/usage/statement.ts): one name per broken rule. */
export type UsageRejection =
  | 'oversized' | 'malformed' | 'bad-lease-id' | 'bad-party' | 'not-a-party' | 'bad-interval'
  | 'over-bounds' | 'amount-mismatch' | 'bad-provider-signature' | 'bad-renter-signature'

type ReasonOf<C extends LedgerErrorCode> =
  C extends 'ERR_LEDGER_USAGE' ? UsageRejection
    : C extends 'ERR_LEDGER_USAGE_OVERLAP' ? 'duplicate' | 'overlap'
      : C extends 'ERR_TRUST_LIST' ? TrustListRejection
        : never

export interface LedgerErrorOptions<C extends LedgerErrorCode> extends ErrorOptions {
  reason?: ReasonOf<C>
}

/** The ledger room's error (the codes above). */
export class LedgerError<C extends LedgerErrorCode = LedgerErrorCode> extends CodedError<C> {
  /** the broken rule, for ERR_LEDGER_USAGE, ERR_LEDGER_USAGE_OVERLAP and ERR_TRUST_LIST */
  readonly reason?: ReasonOf<C>

  constructor (code: C, message: string, options: LedgerErrorOptions<C> = {}) {
    super(code, message, options)
    this.name = 'LedgerError'
    if (options.reason != null) this.reason = options.reason
  }
}

/** A refused entry (or fraud proof, or usage statement): a LedgerError with an entry code. */
export type LedgerEntryError = LedgerError<LedgerEntryErrorCode>
export type InvalidUsageError = LedgerError<'ERR_LEDGER_USAGE'> & { reason: UsageRejection }
export type UsageOverlapError = LedgerError<'ERR_LEDGER_USAGE_OVERLAP'> & { reason: 'duplicate' | 'overlap' }
export type TrustListError = LedgerError<'ERR_TRUST_LIST'> & { reason: TrustListRejection }

/** `err` refuses an entry (any code but ERR_LEDGER_CLOSED, ERR_LEDGER_SYNC and ERR_TRUST_LIST). */
export function isEntryError (err: unknown): err is LedgerEntryError {
  return isCoded(err, LedgerError, ...LEDGER_ENTRY_CODES)
}

/** The store was used after close(). */
export function ledgerClosed (): LedgerError<'ERR_LEDGER_CLOSED'> {
  return new LedgerError('ERR_LEDGER_CLOSED', 'the ledger store is closed')
}

/** A usage statement that breaks the rule `reason`: ERR_LEDGER_USAGE. */
export function invalidUsage (reason: UsageRejection, message: string): InvalidUsageError {
  return new LedgerError('ERR_LEDGER_USAGE', message, { reason }) as InvalidUsageError
}

/** A usage statement held already or overlapping one of its lease: ERR_LEDGER_USAGE_OVERLAP. */
export function usageOverlap (reason: 'duplicate' | 'overlap', message: string): UsageOverlapError {
  return new LedgerError('ERR_LEDGER_USAGE_OVERLAP', message, { reason }) as UsageOverlapError
}

/** A trust list that must not be used: ERR_TRUST_LIST with its reason. */
export function trustListRejected (reason: TrustListRejection, message: string): TrustListError {
  return new LedgerError('ERR_TRUST_LIST', message, { reason }) as TrustListError
}

export function isInvalidUsage (err: unknown): err is InvalidUsageError {
  return isCoded(err, LedgerError, 'ERR_LEDGER_USAGE')
}

export function isUsageOverlap (err: unknown): err is UsageOverlapError {
  return isCoded(err, LedgerError, 'ERR_LEDGER_USAGE_OVERLAP')
}

export function isTrustListError (err: unknown): err is TrustListError {
  return isCoded(err, LedgerError, 'ERR_TRUST_LIST')
}
