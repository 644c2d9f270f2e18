import { MAX_CLOCK_SKEW_MS } from '../../../protocols/codec.js'
import { checkChainedJobBody, verifyJobBody, verifySummaryBody, verifyUsageBody } from '../entries/body.js'
import { equals } from 'uint8arrays/equals'
import { chainOrderError, checkEntryTime, decodeEntryEnvelope, entryRecord, entrySignatureError, LedgerEntry, timeOrderError, type LedgerRecord } from '../entries/entry.js'
import { isEntryError, type LedgerEntryError, LedgerError } from '../errors.js'
import { verifyOpenedAsync, type OpenedEnvelope } from '../../identity/index.js'
import { verifyFraudProof, type VerifiedFraudProof } from '../entries/fraud.js'
import { mayBeBase, RETENTION_MS } from '../entries/retention.js'

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
  /**
   * false when the entry's own signature was not checked: a chain-2 entry of a range that a
   * later entry's signature covers (verifyRange). A fraud proof needs it checked.
   */
  signed?: boolean
  /**
   * set on the first entry of a range that started later than asked, at an entry older than
   * the retention horizon (entries/retention.ts): the feed may start anew there
   */
  base?: boolean
}

/**
 * Every check an entry from the network must pass before it may join a feed, except the
 * chain check (which needs the held feed: ingest.ts): envelope, signature, author, time, body
 * size, and the body itself (inner envelopes signed by the author, fraud-proof evidence re-checked).
 * Throws a LedgerError with an entry code.
 */
export async function verifyEntry (bytes: Uint8Array, opts: VerifyEntryOptions = {}): Promise<VerifiedEntry> {
  const started = startEntry(bytes, opts)
  if (started.chained) return settleChained(started, started.signature == null || await started.signature, opts)
  return await finishEntry(started, opts)
}

/**
 * An entry whose synchronous checks ran: its envelope decoded, its signature's check started.
 * `chained`: a chain-2 attestation or receipt (nearly every entry), whose outcome needs nothing
 * but the signature's verdict (settleChained).
 */
type StartedEntry =
  | { chained: true, opened: OpenedEnvelope, signature?: Promise<boolean>, record: LedgerRecord, bodyError: unknown }
  | {
    chained: false
    opened: OpenedEnvelope
    signature?: Promise<boolean>
    record?: LedgerRecord
    shapeError?: unknown
  }

/**
 * Decodes the envelope (its errors thrown now, before any signature), starts the signature's
 * check on the verifier's workers, decodes the record and, for a chain-2 job body, checks the
 * body's rules (no signature of its own: the entry's covers it). Errors after the envelope's
 * are kept, to be reported after the signature's (settleChained, finishEntry).
 */
function startEntry (bytes: Uint8Array, opts: VerifyEntryOptions): StartedEntry {
  const opened = decodeEntryEnvelope(bytes)
  const signature = opts.checkSignature === false ? undefined : verifyOpenedAsync(opened)
  signature?.catch(() => {})
  let record: LedgerRecord
  try {
    record = entryRecord(bytes, opened)
  } catch (err) {
    return { chained: false, opened, signature, shapeError: err }
  }
  if (record.chain === 2 && isJobBody(record)) {
    return { chained: true, opened, signature, record, bodyError: chainedJobBodyError(record) }
  }
  return { chained: false, opened, signature, record }
}

/** A chain-2 job entry's outcome once its signature's verdict is in: signature, then time, then body. */
function settleChained (
  started: Extract<StartedEntry, { chained: true }>,
  signed: boolean,
  opts: VerifyEntryOptions
): VerifiedEntry {
  if (!signed) throw entrySignatureError(started.opened)
  checkEntryTime(started.record, opts.now ?? Date.now(), opts.maxSkewMs ?? MAX_CLOCK_SKEW_MS)
  if (started.bodyError != null) throw started.bodyError
  return { record: started.record }
}

/** The rest of an entry that is not a chain-2 job body: its shape error, or its body checked beside its signature. */
async function finishEntry (
  started: Extract<StartedEntry, { chained: false }>,
  opts: VerifyEntryOptions
): Promise<VerifiedEntry> {
  const { opened, signature, record } = started
  if (record == null) {
    await checkSigned(opened, signature)
    throw started.shapeError
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

/** checkChainedJobBody's error, returned instead of thrown. */
function chainedJobBodyError (record: LedgerRecord): unknown {
  try {
    checkChainedJobBody(record)
    return undefined
  } catch (err) {
    return err
  }
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
      if (record.chain === 2) checkChainedJobBody(record)
      else await verifyJobBody(record)
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
      throw new LedgerError('ERR_LEDGER_BODY', `unknown body kind ${String(record.kind)}`)
  }
}

/**
 * Entries whose signatures are in flight at once at most: they go to the verifier's workers
 * together (verify-pool.ts), a sync batch at a time.
 */
const VERIFY_CONCURRENCY = 256

/** The verdict of a signature not checked here (the gossip router did), or of no entry started. */
const NOT_CHECKED = Promise.resolve(true)

/**
 * verifyEntry of each envelope, many at once; an entry's LedgerError is its result, in order
 * (any other error is thrown). A chain-2 job entry, nearly every one, is settled without an
 * async call of its own: its checks run as it is started and its outcome needs only its
 * signature's verdict (at 20,000 entries an async call each was a tenth of ingest's garbage).
 */
export async function verifyEntries (
  envelopes: readonly Uint8Array[],
  opts: VerifyEntryOptions
): Promise<Array<VerifiedEntry | LedgerEntryError>> {
  const out = new Array<VerifiedEntry | LedgerEntryError>(envelopes.length)
  for (let from = 0; from < envelopes.length; from += VERIFY_CONCURRENCY) {
    const to = Math.min(envelopes.length, from + VERIFY_CONCURRENCY)
    const started = new Array<StartedEntry | undefined>(to - from)
    const others: Array<Promise<void>> = []
    for (let i = from; i < to; i++) {
      try {
        const entry = startEntry(envelopes[i], opts)
        if (entry.chained) started[i - from] = entry
        else others.push(finishEntry(entry, opts).then(v => { out[i] = v }, err => { out[i] = entryErrorOrThrow(err) }))
      } catch (err) {
        out[i] = entryErrorOrThrow(err)
      }
    }
    // settled before any throw below: none of them is left to reject unhandled
    const othersDone = Promise.all(others)
    othersDone.catch(() => {})
    const verdicts = await Promise.all(started.map(e => e?.signature ?? NOT_CHECKED))
    for (let i = from; i < to; i++) {
      const entry = started[i - from]
      if (entry == null || !entry.chained) continue
      try {
        out[i] = settleChained(entry, verdicts[i - from], opts)
      } catch (err) {
        out[i] = entryErrorOrThrow(err)
      }
    }
    await othersDone
  }
  return out
}

/** `err` when it is an entry's LedgerError; anything else is thrown on. */
function entryErrorOrThrow (err: unknown): LedgerEntryError {
  if (!isEntryError(err)) throw err
  return err
}

/**
 * What a range of one author's feed must be: the author asked for and the first seq (sync asks
 * for both). It may start later only at a retention base (entries/retention.ts).
 */
export interface RangeExpectation {
  author: Uint8Array
  fromSeq: number
}

/**
 * A range of one author's feed, verified as a whole (README §7 "Signed heads"): every entry's
 * shape, author, seq (contiguous from `fromSeq`), links (each entry's prev_hash names the one
 * before it), chain order, time and body; then signatures: a chain-1 entry's own (and its
 * body's), and of the chain-2 entries only the last one's, which covers every byte of those
 * before it through the links. Anything wrong refuses the whole range: every item is that
 * error. The first entry's link to the feed we hold is the ingest step's to check (ingest.ts).
 * A range may start after `fromSeq` only at an entry older than the retention horizon (the
 * holder dropped what came before: README §7 "Retention"); that entry is marked `base`.
 */
export async function verifyRange (
  envelopes: readonly Uint8Array[],
  expect: RangeExpectation,
  opts: VerifyEntryOptions = {}
): Promise<Array<VerifiedEntry | LedgerEntryError>> {
  try {
    const verified = await verifyRangeWhole(envelopes, expect, opts)
    // two entries for one seq are no chain, but may prove an equivocation: each is checked on its own
    return verified ?? await verifyEntries(envelopes, opts)
  } catch (err) {
    if (!isEntryError(err)) throw err
    return envelopes.map(() => err)
  }
}

/**
 * The range's entries verified as a whole; undefined when two of them name one seq (verifyRange
 * checks those one by one).
 */
async function verifyRangeWhole (
  envelopes: readonly Uint8Array[],
  expect: RangeExpectation,
  opts: VerifyEntryOptions
): Promise<VerifiedEntry[] | undefined> {
  const now = opts.now ?? Date.now()
  const skew = opts.maxSkewMs ?? MAX_CLOCK_SKEW_MS
  // index loops and no per-entry closures: a sync verifies every entry it pulls here
  const count = envelopes.length
  const opened = new Array<OpenedEnvelope>(count)
  const records = new Array<LedgerRecord>(count)
  for (let i = 0; i < count; i++) {
    opened[i] = decodeEntryEnvelope(envelopes[i])
    records[i] = entryRecord(envelopes[i], opened[i])
  }
  if (!contiguous(records) && hasRepeatedSeq(records) && records.every(r => equals(r.author, expect.author))) {
    return undefined
  }
  const first = records[0]?.seq ?? expect.fromSeq
  if (first > expect.fromSeq && !mayBeBase(records[0].time, now)) throw new LedgerError('ERR_LEDGER_CHAIN', `the range starts at seq ${first}, after seq ${expect.fromSeq} asked for, at an entry younger than the retention horizon: a holder may leave out only entries older than ${RETENTION_MS / 86_400_000} days`)
  const from = Math.max(first, expect.fromSeq)
  let last = -1
  for (let i = 0; i < count; i++) {
    const record = records[i]
    if (!equals(record.author, expect.author)) throw new LedgerError('ERR_LEDGER_CHAIN', `${rangeEntry(i, record)} is of another author than the range asked for`)
    if (record.seq !== from + i) throw new LedgerError('ERR_LEDGER_CHAIN', `${rangeEntry(i, record)}: the range is not contiguous from seq ${expect.fromSeq}`)
    if (i > 0) {
      const before = records[i - 1]
      if (!equals(record.prevHash, before.hash)) throw new LedgerError('ERR_LEDGER_CHAIN', `${rangeEntry(i, record)} does not follow the entry before it: the range does not hash to its signed head`)
      const back = chainOrderError(record, before) ?? timeOrderError(record, before.time)
      if (back != null) throw back
    }
    checkEntryTime(record, now, skew)
    if (record.chain === 2) last = i
  }
  // signatures: each chain-1 entry's own, and the last chain-2 entry's for every chain-2 one
  const checks = new Array<Promise<boolean> | undefined>(count)
  for (let i = 0; i < count; i++) {
    if (records[i].chain === 1 || i === last) {
      const check = verifyOpenedAsync(opened[i])
      check.catch(() => {})
      checks[i] = check
    }
  }
  for (let i = 0; i < count; i++) {
    const check = checks[i]
    if (check != null && !await check) {
      const err = entrySignatureError(opened[i])
      throw i === last ? new LedgerError('ERR_LEDGER_SIGNATURE', `${err.message}: the range's signed head does not verify, so nothing in it is taken`) : err
    }
  }
  const out = new Array<VerifiedEntry>(count)
  for (let i = 0; i < count; i++) {
    const record = records[i]
    // a chain-2 job body is checked synchronously: no promise and tick for each of a sync's entries
    let slashes: VerifiedFraudProof | undefined
    if (record.chain === 2 && isJobBody(record)) checkChainedJobBody(record)
    else slashes = await verifyBody(record, skew)
    out[i] = { record, slashes, signed: checks[i] != null }
  }
  if (first > expect.fromSeq && count > 0) out[0].base = true
  return out
}

/** Whether the records' seqs run on by one from the first. */
function contiguous (records: readonly LedgerRecord[]): boolean {
  for (let i = 1; i < records.length; i++) if (records[i].seq !== records[0].seq + i) return false
  return true
}

function hasRepeatedSeq (records: readonly LedgerRecord[]): boolean {
  return new Set(records.map(r => r.seq)).size < records.length
}

/** Where a range's entry is, for an error (built only then: a sync checks thousands). */
function rangeEntry (i: number, record: LedgerRecord): string {
  return `range entry ${i} (seq ${record.seq})`
}
