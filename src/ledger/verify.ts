import { MAX_CLOCK_SKEW_MS } from '../../protocols/codec.js'
import { verifyJobBody, verifySummaryBody } from './body.js'
import { checkEntryTime, LedgerEntry, openEntry, type LedgerRecord } from './entry.js'
import { InvalidBodyError, LedgerEntryError } from './errors.js'
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
  return { record, slashes: await verifyBody(record, opts.maxSkewMs ?? MAX_CLOCK_SKEW_MS) }
}

async function verifyBody (record: LedgerRecord, maxSkewMs: number): Promise<VerifiedFraudProof | undefined> {
  switch (record.kind) {
    case LedgerEntry.BodyKind.ATTESTATION:
    case LedgerEntry.BodyKind.RECEIPT:
      await verifyJobBody(record)
      return undefined
    case LedgerEntry.BodyKind.HEARTBEAT_SUMMARY:
      verifySummaryBody(record)
      return undefined
    case LedgerEntry.BodyKind.FRAUD_PROOF:
      return await verifyFraudProof(record.body, { builder: record.authorId, entryTime: record.time, maxSkewMs })
    default:
      throw new InvalidBodyError(`unknown body kind ${String(record.kind)}`)
  }
}

/** Entries verified at once: signatures go to the thread pool. */
const VERIFY_CONCURRENCY = 64

/** verifyEntry of each envelope, many at once; an entry's LedgerEntryError is its result, in order. */
export async function verifyEntries (envelopes: readonly Uint8Array[], opts: VerifyEntryOptions): Promise<Array<VerifiedEntry | LedgerEntryError>> {
  const out = new Array<VerifiedEntry | LedgerEntryError>(envelopes.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < envelopes.length) {
      const i = next++
      try {
        out[i] = await verifyEntry(envelopes[i], opts)
      } catch (err) {
        if (!(err instanceof LedgerEntryError)) throw err
        out[i] = err
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(VERIFY_CONCURRENCY, envelopes.length) }, worker))
  return out
}
