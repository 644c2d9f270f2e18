/**
 * Ledger entries: sealing our own, opening and verifying others' (protocols/README.md §7
 * "Ledger"). An entry is a SignedEnvelope("ledger-entry", LedgerEntry); its hash is the
 * message hash of that envelope, and the next entry of the same author points at it.
 *
 * Verification is async: signatures go through the identity's fast verifier (OpenSSL on the
 * thread pool, exactly the strict RFC 8032 rule of verifyBytes), so many entries verify at
 * once during sync.
 */

import { peerIdFromMultihash } from '@libp2p/peer-id'
import * as Digest from 'multiformats/hashes/digest'
import { equals } from 'uint8arrays/equals'
import { decodeBounded, envelopeMaxBytes, LIMITS, MAX_BYTES, MAX_CLOCK_SKEW_MS, WireDecodeError } from '../../protocols/codec.js'
import { SignedEnvelope } from '../../protocols/envelope.js'
import { DOMAIN } from '../../protocols/ids.js'
import { Attestation, Receipt } from '../../protocols/job.js'
import { FraudProof, HeartbeatSummary, LedgerEntry } from '../../protocols/ledger.js'
import { messageHash, sealEnvelope, signingInput, verifyBytesFast } from '../identity/index.js'
import { EntrySignatureError, FutureEntryError, InvalidBodyError, MalformedEntryError, OversizedBodyError, BrokenChainError } from './errors.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

export { LedgerEntry, HeartbeatSummary, FraudProof }

/** Bound of one encoded ledger-entry envelope. */
export const MAX_ENTRY_ENVELOPE_BYTES = envelopeMaxBytes(MAX_BYTES.ledgerEntry)
export const HASH_BYTES = 32
const MAX_SIGNER_BYTES = 64

/** A ledger entry whose envelope, signature and body were checked (or that we wrote ourselves). */
export interface LedgerRecord {
  /** the encoded SignedEnvelope, as stored and sent */
  envelope: Uint8Array
  /** the encoded LedgerEntry the signature covers */
  payload: Uint8Array
  /** message hash of the envelope: what the next entry's prev_hash names */
  hash: Uint8Array
  /** the author's peer id bytes */
  author: Uint8Array
  /** the author's peer id, base58 */
  authorId: string
  seq: number
  prevHash: Uint8Array
  /** unix ms, as the author claims */
  time: number
  kind: LedgerEntry.BodyKind
  body: Uint8Array
}

export type BodyKindName = 'attestation' | 'receipt' | 'heartbeat-summary' | 'fraud-proof'

const KIND_NAMES: Partial<Record<LedgerEntry.BodyKind, BodyKindName>> = {
  [LedgerEntry.BodyKind.ATTESTATION]: 'attestation',
  [LedgerEntry.BodyKind.RECEIPT]: 'receipt',
  [LedgerEntry.BodyKind.HEARTBEAT_SUMMARY]: 'heartbeat-summary',
  [LedgerEntry.BodyKind.FRAUD_PROOF]: 'fraud-proof'
}

export function kindName (kind: LedgerEntry.BodyKind): BodyKindName {
  const name = KIND_NAMES[kind]
  if (name == null) throw new MalformedEntryError(`unknown body kind ${String(kind)}`)
  return name
}

/** Bound of a body of `kind`. */
export function maxBodyBytes (kind: LedgerEntry.BodyKind): number {
  return kind === LedgerEntry.BodyKind.FRAUD_PROOF ? MAX_BYTES.ledgerFraudProofBody : MAX_BYTES.ledgerBody
}

// ---------------------------------------------------------------------------------------------
// authors

interface Author { peerId: PeerId, id: string, publicKey: Uint8Array }
const AUTHOR_CACHE_LIMIT = 10_000
const authorCache = new Map<string, Author>()

/** The Ed25519 peer id in `bytes`, or null when they are not one. Cached: authors repeat. */
export function parseAuthor (bytes: Uint8Array): Author | null {
  if (bytes.length === 0 || bytes.length > MAX_SIGNER_BYTES) return null
  const key = Buffer.from(bytes).toString('base64')
  let author = authorCache.get(key)
  if (author == null) {
    try {
      const peerId = peerIdFromMultihash(Digest.decode(bytes))
      if (peerId.type !== 'Ed25519' || peerId.publicKey == null) return null
      author = { peerId, id: peerId.toString(), publicKey: peerId.publicKey.raw }
    } catch {
      return null
    }
    authorCache.set(key, author)
    if (authorCache.size > AUTHOR_CACHE_LIMIT) authorCache.delete(authorCache.keys().next().value as string)
  }
  return author
}

// ---------------------------------------------------------------------------------------------
// envelopes, verified with the fast verifier

export interface FastOpened {
  signer: Author
  payload: Uint8Array
  signature: Uint8Array
}

export type EnvelopeProblem = 'oversized' | 'malformed' | 'wrong-domain' | 'bad-signer' | 'bad-signature'

/**
 * Opens an envelope from untrusted bytes and verifies its signature with the fast verifier.
 * Returns the problem instead of throwing, so each caller raises its own typed error.
 */
export async function openEnvelopeFast (bytes: Uint8Array, domain: string, maxBytes: number, checkSignature = true): Promise<FastOpened | EnvelopeProblem> {
  if (bytes.byteLength > maxBytes) return 'oversized'
  let env: SignedEnvelope
  try {
    env = SignedEnvelope.decode(bytes)
  } catch {
    return 'malformed'
  }
  if (env.domain !== domain) return 'wrong-domain'
  const signer = parseAuthor(env.signer)
  if (signer == null) return 'bad-signer'
  if (checkSignature && !await verifyBytesFast(signer.publicKey, signingInput(domain, env.payload), env.signature)) return 'bad-signature'
  return { signer, payload: env.payload, signature: env.signature }
}

// ---------------------------------------------------------------------------------------------
// entries

export interface OpenEntryOptions {
  /** false when the signature was already verified (the gossip router did) */
  checkSignature?: boolean
}

/**
 * Decodes and signature-checks one entry envelope: structure, domain, signer = author,
 * seq and prev_hash shape, body kind and size. No clock or body checks (see verifyEntry).
 */
export async function openEntry (bytes: Uint8Array, opts: OpenEntryOptions = {}): Promise<LedgerRecord> {
  if (bytes.byteLength > MAX_ENTRY_ENVELOPE_BYTES) throw new MalformedEntryError(`entry envelope of ${bytes.byteLength} bytes exceeds the ${MAX_ENTRY_ENVELOPE_BYTES}-byte bound`)
  const opened = await openEnvelopeFast(bytes, DOMAIN.ledgerEntry, MAX_ENTRY_ENVELOPE_BYTES, false)
  if (opened === 'bad-signer') throw new EntrySignatureError('entry signer is not an Ed25519 peer id')
  if (typeof opened === 'string') throw new MalformedEntryError(`entry envelope: ${opened}`)
  const entry = decodeEntryPayload(opened.payload)
  if (!equals(entry.author, opened.signer.peerId.toMultihash().bytes)) throw new EntrySignatureError(`entry of another author signed by ${opened.signer.id}`)
  const record = recordOf(bytes, opened.payload, entry, opened.signer.id)
  if (opts.checkSignature !== false && !await verifyBytesFast(opened.signer.publicKey, signingInput(DOMAIN.ledgerEntry, opened.payload), opened.signature)) {
    throw new EntrySignatureError(`signature of ${opened.signer.id} entry ${record.seq} does not verify`)
  }
  return record
}

function decodeEntryPayload (payload: Uint8Array): LedgerEntry {
  let entry: LedgerEntry
  try {
    entry = decodeBounded(LedgerEntry, payload, 'ledger entry', MAX_BYTES.ledgerEntry)
  } catch (err) {
    throw new MalformedEntryError(err instanceof WireDecodeError ? err.message : String(err))
  }
  if (entry.seq < 1n || entry.seq > BigInt(Number.MAX_SAFE_INTEGER)) throw new BrokenChainError(`entry seq ${entry.seq} is out of range`)
  if (entry.seq === 1n ? entry.prevHash.length !== 0 : entry.prevHash.length !== HASH_BYTES) {
    throw new BrokenChainError(`entry ${entry.seq} has a prev_hash of ${entry.prevHash.length} bytes`)
  }
  kindName(entry.kind)
  if (entry.body.length > maxBodyBytes(entry.kind)) {
    throw new OversizedBodyError(`${kindName(entry.kind)} body of ${entry.body.length} bytes exceeds the ${maxBodyBytes(entry.kind)}-byte bound`)
  }
  return entry
}

function recordOf (envelope: Uint8Array, payload: Uint8Array, entry: LedgerEntry, authorId: string): LedgerRecord {
  return {
    envelope,
    payload,
    hash: messageHash(DOMAIN.ledgerEntry, payload),
    author: entry.author,
    authorId,
    seq: Number(entry.seq),
    prevHash: entry.prevHash,
    time: Number(entry.time),
    kind: entry.kind,
    body: entry.body
  }
}

/** Decodes an entry this node stored after verifying it: no signature or body checks. */
export function decodeStoredEntry (envelope: Uint8Array): LedgerRecord {
  const env = SignedEnvelope.decode(envelope)
  const entry = LedgerEntry.decode(env.payload)
  const author = parseAuthor(entry.author)
  if (author == null) throw new MalformedEntryError('stored entry has no valid author')
  return recordOf(envelope, env.payload, entry, author.id)
}

export interface EntryFields {
  seq: number
  prevHash: Uint8Array
  time: number
  kind: LedgerEntry.BodyKind
  body: Uint8Array
}

/** Signs an entry of our own feed. */
export function sealEntry (key: Ed25519PrivateKey, peerId: PeerId, fields: EntryFields): LedgerRecord {
  const author = peerId.toMultihash().bytes
  const payload = LedgerEntry.encode({ author, seq: BigInt(fields.seq), prevHash: fields.prevHash, time: BigInt(fields.time), kind: fields.kind, body: fields.body })
  const envelope = sealEnvelope(key, peerId, DOMAIN.ledgerEntry, payload)
  return recordOf(envelope, payload, LedgerEntry.decode(payload), peerId.toString())
}

// ---------------------------------------------------------------------------------------------
// bodies

export type DecodedBody =
  | { kind: 'attestation', attestation: Attestation, hash: Uint8Array }
  | { kind: 'receipt', receipt: Receipt, hash: Uint8Array }
  | { kind: 'heartbeat-summary', summary: HeartbeatSummary }
  | { kind: 'fraud-proof', proof: FraudProof, hash: Uint8Array }

/** The body of a stored (already verified) entry. `hash` is the inner envelope's message hash. */
export function decodeStoredBody (record: LedgerRecord): DecodedBody {
  switch (record.kind) {
    case LedgerEntry.BodyKind.ATTESTATION: {
      const env = SignedEnvelope.decode(record.body)
      return { kind: 'attestation', attestation: Attestation.decode(env.payload), hash: messageHash(DOMAIN.attestation, env.payload) }
    }
    case LedgerEntry.BodyKind.RECEIPT: {
      const env = SignedEnvelope.decode(record.body)
      return { kind: 'receipt', receipt: Receipt.decode(env.payload), hash: messageHash(DOMAIN.receipt, env.payload) }
    }
    case LedgerEntry.BodyKind.HEARTBEAT_SUMMARY:
      return { kind: 'heartbeat-summary', summary: HeartbeatSummary.decode(record.body) }
    case LedgerEntry.BodyKind.FRAUD_PROOF: {
      const env = SignedEnvelope.decode(record.body)
      return { kind: 'fraud-proof', proof: FraudProof.decode(env.payload, { limits: LIMITS.fraudProof }), hash: messageHash(DOMAIN.fraudProof, env.payload) }
    }
    default:
      throw new MalformedEntryError(`unknown body kind ${String(record.kind)}`)
  }
}

const ID_BYTES = 16

/**
 * Checks an attestation or receipt body: its own envelope verifies, is signed by the entry's
 * author, and names that author in its provider / renter field. Returns the decoded message.
 */
export async function verifyJobBody (record: LedgerRecord): Promise<DecodedBody> {
  const isAttestation = record.kind === LedgerEntry.BodyKind.ATTESTATION
  const domain = isAttestation ? DOMAIN.attestation : DOMAIN.receipt
  const bound = envelopeMaxBytes(isAttestation ? MAX_BYTES.attestation : MAX_BYTES.receipt)
  const opened = await openEnvelopeFast(record.body, domain, bound)
  if (typeof opened === 'string') throw new InvalidBodyError(`${domain} body: ${opened}`)
  if (opened.signer.id !== record.authorId) throw new InvalidBodyError(`${domain} body signed by ${opened.signer.id}, not by the entry's author`)
  try {
    if (isAttestation) {
      const attestation = decodeBounded(Attestation, opened.payload, 'attestation', MAX_BYTES.attestation)
      if (!equals(attestation.provider, record.author)) throw new InvalidBodyError('attestation names another provider than its author')
      if (attestation.jobId.length !== ID_BYTES) throw new InvalidBodyError('attestation job id is not 16 bytes')
      if (parseAuthor(attestation.renter) == null) throw new InvalidBodyError('attestation renter is not a peer id')
      return { kind: 'attestation', attestation, hash: messageHash(domain, opened.payload) }
    }
    const receipt = decodeBounded(Receipt, opened.payload, 'receipt', MAX_BYTES.receipt)
    if (!equals(receipt.renter, record.author)) throw new InvalidBodyError('receipt names another renter than its author')
    if (receipt.jobId.length !== ID_BYTES) throw new InvalidBodyError('receipt job id is not 16 bytes')
    if (parseAuthor(receipt.provider) == null) throw new InvalidBodyError('receipt provider is not a peer id')
    if (receipt.attestationHash.length !== HASH_BYTES) throw new InvalidBodyError('receipt attestation hash is not 32 bytes')
    if (!Object.values(Receipt.Outcome).includes(receipt.outcome) || receipt.outcome === Receipt.Outcome.OUTCOME_UNSPECIFIED) throw new InvalidBodyError('receipt has no known outcome')
    return { kind: 'receipt', receipt, hash: messageHash(domain, opened.payload) }
  } catch (err) {
    if (err instanceof InvalidBodyError) throw err
    throw new InvalidBodyError(err instanceof Error ? err.message : String(err))
  }
}

/** A heartbeat summary must decode and be internally consistent. */
export function verifySummaryBody (record: LedgerRecord): HeartbeatSummary {
  let summary: HeartbeatSummary
  try {
    summary = decodeBounded(HeartbeatSummary, record.body, 'heartbeat summary', MAX_BYTES.heartbeatSummary)
  } catch (err) {
    throw new InvalidBodyError(err instanceof Error ? err.message : String(err))
  }
  if (summary.periodEnd <= summary.periodStart) throw new InvalidBodyError('heartbeat summary period ends before it starts')
  if (summary.availableMs > summary.periodEnd - summary.periodStart) throw new InvalidBodyError('heartbeat summary available time exceeds its period')
  if (summary.upMs > summary.availableMs) throw new InvalidBodyError('heartbeat summary up time exceeds its available time')
  if (summary.busyPpm > 1_000_000) throw new InvalidBodyError('heartbeat summary busy ppm exceeds 1 000 000')
  if (Number(summary.periodEnd) > record.time + MAX_CLOCK_SKEW_MS) throw new InvalidBodyError('heartbeat summary covers a period after its entry')
  return summary
}

/** The check an entry's time must pass on arrival. */
export function checkEntryTime (record: LedgerRecord, now: number, maxSkewMs = MAX_CLOCK_SKEW_MS): void {
  if (record.time > now + maxSkewMs) {
    throw new FutureEntryError(`entry ${record.seq} of ${record.authorId} is ${record.time - now} ms ahead of the local clock (bound ${maxSkewMs} ms)`)
  }
}
