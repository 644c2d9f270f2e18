import { MAX_CLOCK_SKEW_MS } from '../../protocols/codec.js'
import { checkEntryTime, LedgerEntry, openEntry, verifyJobBody, verifySummaryBody, type LedgerRecord } from './entry.js'
import { InvalidBodyError } from './errors.js'
import { verifyFraudProof, type VerifiedFraudProof } from './fraud.js'

export interface VerifyEntryOptions {
  /** the local clock, unix ms (default Date.now()) */
  now?: number
  /** how far ahead of `now` an entry's time may be (default 30 s) */
  maxSkewMs?: number
  /** false when the envelope signature was already verified (by the gossip router) */
  checkSignature?: boolean
}

export interface VerifiedEntry {
  record: LedgerRecord
  /** set when the body is a fraud proof that verified: the author it slashes */
  slashes?: VerifiedFraudProof
}

/**
 * Every check an entry from the network must pass before it may join a feed, except the
 * chain check (which needs the store): envelope, signature, author, time, body size, and the
 * body itself (inner envelopes signed by the author, fraud-proof evidence re-checked).
 * Throws a LedgerEntryError subclass.
 */
export async function verifyEntry (bytes: Uint8Array, opts: VerifyEntryOptions = {}): Promise<VerifiedEntry> {
  const record = await openEntry(bytes, { checkSignature: opts.checkSignature })
  checkEntryTime(record, opts.now ?? Date.now(), opts.maxSkewMs ?? MAX_CLOCK_SKEW_MS)
  return { record, slashes: await verifyBody(record) }
}

async function verifyBody (record: LedgerRecord): Promise<VerifiedFraudProof | undefined> {
  switch (record.kind) {
    case LedgerEntry.BodyKind.ATTESTATION:
    case LedgerEntry.BodyKind.RECEIPT:
      await verifyJobBody(record)
      return undefined
    case LedgerEntry.BodyKind.HEARTBEAT_SUMMARY:
      verifySummaryBody(record)
      return undefined
    case LedgerEntry.BodyKind.FRAUD_PROOF:
      return await verifyFraudProof(record.body, record.authorId)
    default:
      throw new InvalidBodyError(`unknown body kind ${String(record.kind)}`)
  }
}
