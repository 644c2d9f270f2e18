/**
 * What a ledger entry's body holds (protocols/README.md §7 "Ledger"): a provider's signed
 * attestation, a renter's signed receipt, a heartbeat summary, a signed fraud proof, or a
 * usage statement co-signed by a lease's provider and renter.
 * Signed bodies open into identity's Signed<T>.
 */

import { equals } from 'uint8arrays/equals'
import { decodeBounded, decodeVerified, envelopeMaxBytes, LIMITS, MAX_BYTES, MAX_CLOCK_SKEW_MS } from '../../../protocols/codec.js'
import { SignedEnvelope } from '../../../protocols/envelope.js'
import { DOMAIN } from '../../../protocols/ids.js'
import { Attestation, Receipt } from '../../../protocols/job.js'
import { FraudProof, HeartbeatSummary, LedgerEntry } from '../../../protocols/ledger.js'
import { badSignature, isEnvelopeError, messageHash, openEnvelopeUnverified, verifyOpenedAsync, type OpenedEnvelope, type Signed } from '../../identity/index.js'
import { HASH_BYTES, parseAuthor, type LedgerRecord } from './entry.js'
import { LedgerError } from '../errors.js'
import { decodeStoredUsage, openCoSignedUsage, type VerifiedUsage } from '../usage/statement.js'
import { isCoded } from '../../common/index.js'
import type { PeerId } from '@libp2p/interface'

export type DecodedBody =
  | { kind: 'attestation', attestation: Signed<Attestation> }
  | { kind: 'receipt', receipt: Signed<Receipt> }
  | { kind: 'heartbeat-summary', summary: HeartbeatSummary }
  | { kind: 'fraud-proof', proof: Signed<FraudProof> }
  | { kind: 'usage', usage: VerifiedUsage }

/**
 * The body of a stored (already verified) entry: decoded, not verified again, and once per
 * record (kept on it): verification, standing, evidence and views read it in turn, and decoding
 * it each time was a large part of sync's work.
 */
export function decodeStoredBody (record: LedgerRecord): DecodedBody {
  return (record.decodedBody ??= decodeBody(record))
}

function decodeBody (record: LedgerRecord): DecodedBody {
  switch (record.kind) {
    case LedgerEntry.BodyKind.ATTESTATION:
      return { kind: 'attestation', attestation: storedSigned(record.body, DOMAIN.attestation, (payload) => decodeVerified(Attestation, payload, 'attestation')) }
    case LedgerEntry.BodyKind.RECEIPT:
      return { kind: 'receipt', receipt: storedSigned(record.body, DOMAIN.receipt, (payload) => decodeVerified(Receipt, payload, 'receipt')) }
    case LedgerEntry.BodyKind.HEARTBEAT_SUMMARY:
      return { kind: 'heartbeat-summary', summary: decodeVerified(HeartbeatSummary, record.body, 'heartbeat summary') }
    case LedgerEntry.BodyKind.FRAUD_PROOF:
      return { kind: 'fraud-proof', proof: storedSigned(record.body, DOMAIN.fraudProof, (payload) => decodeVerified(FraudProof, payload, 'fraud proof', LIMITS.fraudProof)) }
    case LedgerEntry.BodyKind.USAGE:
      return { kind: 'usage', usage: decodeStoredUsage(record.body) }
    default:
      throw new LedgerError('ERR_LEDGER_MALFORMED', `unknown body kind ${String(record.kind)}`)
  }
}

function storedSigned<T> (envelope: Uint8Array, domain: string, decode: (payload: Uint8Array) => T): Signed<T> {
  const env = decodeVerified(SignedEnvelope, envelope, 'stored envelope')
  const signer = parseAuthor(env.signer)
  if (signer == null) throw new LedgerError('ERR_LEDGER_MALFORMED', `stored ${domain} body has no valid signer`)
  return { message: decode(env.payload), signer: signer.peerId, hash: messageHash(domain, env.payload), envelope }
}

const ID_BYTES = 16
/** A receipt's outcome must be one of these (a set: every synced receipt is checked). */
const KNOWN_OUTCOMES: ReadonlySet<Receipt.Outcome> = new Set(
  // the enum's namespace also holds its codec: strings only
  Object.values(Receipt.Outcome).filter((o): o is Receipt.Outcome => typeof o === 'string' && o !== Receipt.Outcome.OUTCOME_UNSPECIFIED)
)

/**
 * Checks an attestation or receipt body: its own envelope verifies, is signed by the entry's
 * author, and names that author in its provider / renter field. Returns the opened message.
 */
export async function verifyJobBody (record: LedgerRecord): Promise<DecodedBody> {
  const isAttestation = record.kind === LedgerEntry.BodyKind.ATTESTATION
  const domain = isAttestation ? DOMAIN.attestation : DOMAIN.receipt
  const bound = envelopeMaxBytes(isAttestation ? MAX_BYTES.attestation : MAX_BYTES.receipt)
  let opened: OpenedEnvelope
  try {
    opened = openEnvelopeUnverified(record.body, { domain, maxBytes: bound })
  } catch (err) {
    if (isEnvelopeError(err)) throw new LedgerError('ERR_LEDGER_BODY', `${domain} body: ${err.message}`)
    throw err
  }
  // the message is checked while the signature is on the verifier's pool (one await an entry,
  // not two); a bad signature is still the error reported first, as when it was checked first
  const signature = verifyOpenedAsync(opened)
  let body: DecodedBody | undefined
  let invalid: unknown
  try {
    body = checkJobBody(record, opened, isAttestation, domain)
  } catch (err) {
    invalid = err
  }
  if (!await signature) throw new LedgerError('ERR_LEDGER_BODY', `${domain} body: ${badSignature(opened).message}`)
  if (body == null) throw invalid
  return remember(record, body)
}

/**
 * A chain-2 entry's attestation or receipt body (README §7 "Signed heads"): every rule of
 * verifyJobBody but its envelope's signature, which is the author's and is covered by the
 * entry's own (or a later entry's) signature over these bytes.
 */
export function checkChainedJobBody (record: LedgerRecord): DecodedBody {
  const isAttestation = record.kind === LedgerEntry.BodyKind.ATTESTATION
  const domain = isAttestation ? DOMAIN.attestation : DOMAIN.receipt
  let opened: OpenedEnvelope
  try {
    opened = openEnvelopeUnverified(record.body, {
      domain,
      maxBytes: envelopeMaxBytes(isAttestation ? MAX_BYTES.attestation : MAX_BYTES.receipt)
    })
  } catch (err) {
    if (isEnvelopeError(err)) throw new LedgerError('ERR_LEDGER_BODY', `${domain} body: ${err.message}`)
    throw err
  }
  return remember(record, checkJobBody(record, opened, isAttestation, domain))
}

/** An attestation's or receipt's message, checked against its entry; its envelope's signature aside. */
function checkJobBody (
  record: LedgerRecord,
  opened: OpenedEnvelope,
  isAttestation: boolean,
  domain: string
): DecodedBody {
  if (!equals(opened.signer.toMultihash().bytes, record.author)) throw new LedgerError('ERR_LEDGER_BODY', `${domain} body signed by ${opened.signer.toString()}, not by the entry's author`)
  const signed = <T>(message: T): Signed<T> => new CheckedSigned(message, opened, domain, record.body)
  try {
    if (isAttestation) {
      const attestation = decodeBounded(Attestation, opened.payload, 'attestation', MAX_BYTES.attestation)
      if (!equals(attestation.provider, record.author)) throw new LedgerError('ERR_LEDGER_BODY', 'attestation names another provider than its author')
      if (attestation.jobId.length !== ID_BYTES) throw new LedgerError('ERR_LEDGER_BODY', 'attestation job id is not 16 bytes')
      if (parseAuthor(attestation.renter) == null) throw new LedgerError('ERR_LEDGER_BODY', 'attestation renter is not a peer id')
      return { kind: 'attestation', attestation: signed(attestation) }
    }
    const receipt = decodeBounded(Receipt, opened.payload, 'receipt', MAX_BYTES.receipt)
    if (!equals(receipt.renter, record.author)) throw new LedgerError('ERR_LEDGER_BODY', 'receipt names another renter than its author')
    if (receipt.jobId.length !== ID_BYTES) throw new LedgerError('ERR_LEDGER_BODY', 'receipt job id is not 16 bytes')
    if (parseAuthor(receipt.provider) == null) throw new LedgerError('ERR_LEDGER_BODY', 'receipt provider is not a peer id')
    if (receipt.attestationHash.length !== HASH_BYTES) throw new LedgerError('ERR_LEDGER_BODY', 'receipt attestation hash is not 32 bytes')
    if (!KNOWN_OUTCOMES.has(receipt.outcome)) throw new LedgerError('ERR_LEDGER_BODY', 'receipt has no known outcome')
    if (receipt.receivedOutputDigest.length !== 0 && receipt.receivedOutputDigest.length !== HASH_BYTES) throw new LedgerError('ERR_LEDGER_BODY', 'receipt received output digest is not 32 bytes')
    // the claim rests on the digest the renter received (reputation compares it with the attested one)
    if (receipt.outcome === Receipt.Outcome.BAD_OUTPUT && receipt.receivedOutputDigest.length === 0) throw new LedgerError('ERR_LEDGER_BODY', 'BAD_OUTPUT receipt without the received output digest')
    return { kind: 'receipt', receipt: signed(receipt) }
  } catch (err) {
    if (isCoded(err, LedgerError, 'ERR_LEDGER_BODY')) throw err
    throw new LedgerError('ERR_LEDGER_BODY', err instanceof Error ? err.message : String(err))
  }
}

/**
 * A checked body's Signed<T>, its hash computed when first read (once): verification alone never
 * needs it. A class, not an object literal with a getter: a getter closure per object gave each
 * one a property store of its own and a context, ~0.5 KB an entry while a sync holds its ranges.
 */
class CheckedSigned<T> implements Signed<T> {
  readonly signer: PeerId
  private computedHash?: Uint8Array

  constructor (
    readonly message: T,
    private readonly opened: OpenedEnvelope,
    private readonly domain: string,
    readonly envelope: Uint8Array
  ) {
    this.signer = opened.signer
  }

  get hash (): Uint8Array {
    return (this.computedHash ??= messageHash(this.domain, this.opened.payload))
  }
}

/** A verified body, kept for the readers that follow (decodeStoredBody). */
function remember (record: LedgerRecord, body: DecodedBody): DecodedBody {
  record.decodedBody = body
  return body
}

/** A heartbeat summary must decode and be internally consistent. */
export function verifySummaryBody (record: LedgerRecord): HeartbeatSummary {
  let summary: HeartbeatSummary
  try {
    summary = decodeBounded(HeartbeatSummary, record.body, 'heartbeat summary', MAX_BYTES.heartbeatSummary)
  } catch (err) {
    throw new LedgerError('ERR_LEDGER_BODY', err instanceof Error ? err.message : String(err))
  }
  if (summary.periodEnd <= summary.periodStart) throw new LedgerError('ERR_LEDGER_BODY', 'heartbeat summary period ends before it starts')
  if (summary.availableMs > summary.periodEnd - summary.periodStart) throw new LedgerError('ERR_LEDGER_BODY', 'heartbeat summary available time exceeds its period')
  if (summary.upMs > summary.availableMs) throw new LedgerError('ERR_LEDGER_BODY', 'heartbeat summary up time exceeds its available time')
  if (summary.busyPpm > 1_000_000) throw new LedgerError('ERR_LEDGER_BODY', 'heartbeat summary busy ppm exceeds 1 000 000')
  if (Number(summary.periodEnd) > record.time + MAX_CLOCK_SKEW_MS) throw new LedgerError('ERR_LEDGER_BODY', 'heartbeat summary covers a period after its entry')
  return summary
}

/**
 * A usage body: a co-signed statement that passes every rule (usage/statement.ts), both signatures
 * verified, authored by its provider or its renter, its interval ended by the entry's time.
 */
export async function verifyUsageBody (record: LedgerRecord, maxSkewMs = MAX_CLOCK_SKEW_MS): Promise<VerifiedUsage> {
  const usage = await openCoSignedUsage(record.body, { author: record.author, entryTime: record.time, maxSkewMs })
  remember(record, { kind: 'usage', usage })
  return usage
}
