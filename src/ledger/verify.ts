import { MAX_CLOCK_SKEW_MS } from '../../protocols/codec.js'
import { verifyJobBody, verifySummaryBody, verifyUsageBody } from './body.js'
import { checkEntryTime, decodeEntryEnvelope, entryRecord, entrySignatureError, LedgerEntry, type LedgerRecord } from './entry.js'
import { InvalidBodyError, LedgerEntryError } from './errors.js'
import { verifyOpenedAsync, type OpenedEnvelope } from '../identity/index.js'
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
  const opened = decodeEntryEnvelope(bytes)
  // the entry's signature and an attestation's or receipt's own run at once on the thread
  // pool (sync verifies thousands); the errors keep their order: signature, shape, time, body
  const signature = opts.checkSignature === false ? undefined : verifyOpenedAsync(opened)
  signature?.catch(() => {})
  let record: LedgerRecord
  try {
    record = entryRecord(bytes, opened)
  } catch (err) {
    await checkSigned(opened, signature)
    throw err
  }
  const skew = opts.maxSkewMs ?? MAX_CLOCK_SKEW_MS
  // one signature in the body, checked beside the entry's; a fraud proof (several, and
  // costlier) only once the entry is known to be its author's
  const jobBody = isJobBody(record) ? settle(verifyJobBody(record)) : undefined
  await checkSigned(opened, signature)
  checkEntryTime(record, opts.now ?? Date.now(), skew)
  if (jobBody != null) {
    const outcome = await jobBody
    if (outcome.error != null) throw outcome.error
    return { record }
  }
  return { record, slashes: await verifyBody(record, skew) }
}

async function checkSigned (opened: OpenedEnvelope, signature: Promise<boolean> | undefined): Promise<void> {
  if (signature != null && !await signature) throw entrySignatureError(opened)
}

function isJobBody (record: LedgerRecord): boolean {
  return record.kind === LedgerEntry.BodyKind.ATTESTATION || record.kind === LedgerEntry.BodyKind.RECEIPT
}

/** A promise's outcome, never rejecting: read only after the entry's own checks. */
function settle (p: Promise<unknown>): Promise<{ error?: unknown }> {
  return p.then(() => ({}), (error: unknown) => ({ error }))
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
    case LedgerEntry.BodyKind.USAGE:
      await verifyUsageBody(record, maxSkewMs)
      return undefined
    case LedgerEntry.BodyKind.FRAUD_PROOF:
      return await verifyFraudProof(record.body, { builder: record.authorId, entryTime: record.time, maxSkewMs })
    default:
      throw new InvalidBodyError(`unknown body kind ${String(record.kind)}`)
  }
}

/** Entries verified at once: their signatures go to the verifier's workers together (verify-pool.ts), a sync batch at a time. */
const VERIFY_CONCURRENCY = 256

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
