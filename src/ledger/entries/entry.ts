/**
 * Ledger entries: sealing our own, opening and verifying others' (protocols/README.md §7
 * "Ledger"). An entry is a SignedEnvelope("ledger-entry", LedgerEntry), and the next entry of
 * the same author points at its hash: for a chain-2 entry (every entry this node writes) the
 * sha256 of the whole envelope, signature included, so one entry's signature authenticates
 * its whole feed before it ("Signed heads"); for a chain-1 entry (written before ledger sync
 * 4) the message hash of the envelope, its signature left out.
 *
 * Verification is async: identity's fast verifier (verifyOpenedAsync: worker threads, exactly
 * the strict RFC 8032 rule of verifyNobleSync) checks signatures, so many entries verify at once
 * during sync. What an entry's body holds: body.ts.
 */

import { peerIdFromMultihash } from '@libp2p/peer-id'
import * as Digest from 'multiformats/hashes/digest'
import { equals } from 'uint8arrays/equals'
import { decodeBounded, decodeVerified, envelopeMaxBytes, MAX_BYTES, MAX_CLOCK_SKEW_MS, WireDecodeError } from '../../../protocols/codec.js'
import { SignedEnvelope } from '../../../protocols/envelope.js'
import { DOMAIN } from '../../../protocols/ids.js'
import { FraudProof, HeartbeatSummary, LedgerEntry } from '../../../protocols/ledger.js'
import { isEnvelopeError, messageHash, openEnvelopeUnverified, sealEnvelope, sha256, verifyOpenedAsync, type EnvelopeRejection, type OpenedEnvelope } from '../../identity/index.js'
import { BytesKeyedCache } from '../../common/index.js'
import { LedgerError } from '../errors.js'
import type { DecodedBody } from './body.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

export { LedgerEntry, HeartbeatSummary, FraudProof }

/** Bound of one encoded ledger-entry envelope. */
const MAX_ENTRY_ENVELOPE_BYTES = envelopeMaxBytes(MAX_BYTES.ledgerEntry)
export const HASH_BYTES = 32
const MAX_SIGNER_BYTES = 64

/** A ledger entry whose envelope, signature and body were checked (or that we wrote ourselves). */
export interface LedgerRecord {
  /** the encoded SignedEnvelope, as stored and sent */
  envelope: Uint8Array
  /** the encoded LedgerEntry the signature covers */
  payload: Uint8Array
  /** what the next entry's prev_hash names: chain 2, sha256 of the envelope; chain 1, its message hash */
  hash: Uint8Array
  /** 2: hashed whole, signature included; 1: written before ledger sync 4 */
  chain: 1 | 2
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
  /**
   * the body once decoded (entries/body.ts decodeStoredBody): verification, standing, evidence
   * and views read it in turn. A field, not a WeakMap: setting one of those cost ~1.4 µs an
   * entry in a sync, and its ephemeron table more of the collector's work.
   */
  decodedBody?: DecodedBody
}

export type BodyKindName = 'attestation' | 'receipt' | 'heartbeat-summary' | 'fraud-proof' | 'usage'

const KIND_NAMES: Partial<Record<LedgerEntry.BodyKind, BodyKindName>> = {
  [LedgerEntry.BodyKind.ATTESTATION]: 'attestation',
  [LedgerEntry.BodyKind.RECEIPT]: 'receipt',
  [LedgerEntry.BodyKind.HEARTBEAT_SUMMARY]: 'heartbeat-summary',
  [LedgerEntry.BodyKind.FRAUD_PROOF]: 'fraud-proof',
  [LedgerEntry.BodyKind.USAGE]: 'usage'
}

export function kindName (kind: LedgerEntry.BodyKind): BodyKindName {
  const name = KIND_NAMES[kind]
  if (name == null) throw new LedgerError('ERR_LEDGER_MALFORMED', `unknown body kind ${String(kind)}`)
  return name
}

/** Bound of a body of `kind`. */
function maxBodyBytes (kind: LedgerEntry.BodyKind): number {
  return kind === LedgerEntry.BodyKind.FRAUD_PROOF ? MAX_BYTES.ledgerFraudProofBody : MAX_BYTES.ledgerBody
}

interface Author { peerId: PeerId, id: string, publicKey: Uint8Array }
const AUTHOR_CACHE_LIMIT = 10_000
const authorCache = new BytesKeyedCache<Author>(AUTHOR_CACHE_LIMIT)

/** The Ed25519 peer id in `bytes`, or null when they are not one. Cached: authors repeat. */
export function parseAuthor (bytes: Uint8Array): Author | null {
  if (bytes.length === 0 || bytes.length > MAX_SIGNER_BYTES) return null
  let author = authorCache.get(bytes)
  if (author == null) {
    try {
      const peerId = peerIdFromMultihash(Digest.decode(bytes))
      if (peerId.type !== 'Ed25519' || peerId.publicKey == null) return null
      author = { peerId, id: peerId.toString(), publicKey: peerId.publicKey.raw }
    } catch {
      return null
    }
    authorCache.set(bytes, author)
  }
  return author
}

export interface OpenEntryOptions {
  /** false when the signature was already verified (the gossip router did) */
  checkSignature?: boolean
}

/**
 * Decodes and signature-checks one entry envelope: structure, domain, signature, signer =
 * author, seq and prev_hash shape, body kind and size. No clock or body checks (see verifyEntry).
 */
export async function openEntry (bytes: Uint8Array, opts: OpenEntryOptions = {}): Promise<LedgerRecord> {
  const opened = decodeEntryEnvelope(bytes)
  if (opts.checkSignature !== false && !await verifyOpenedAsync(opened)) throw entrySignatureError(opened)
  return entryRecord(bytes, opened)
}

/**
 * The entry's envelope decoded and its shape checked, its signature not (openEntry and
 * verifyEntry check it, the latter beside the body's). Throws LedgerError ERR_LEDGER_SIGNATURE for a bad
 * signer, LedgerError ERR_LEDGER_MALFORMED for the rest.
 */
export function decodeEntryEnvelope (bytes: Uint8Array): OpenedEnvelope {
  try {
    return openEnvelopeUnverified(bytes, { domain: DOMAIN.ledgerEntry, maxBytes: MAX_ENTRY_ENVELOPE_BYTES })
  } catch (err) {
    if (!isEnvelopeError(err)) throw err
    if (SIGNER_PROBLEMS.has(err.reason)) throw new LedgerError('ERR_LEDGER_SIGNATURE', `entry envelope: ${err.message}`)
    throw new LedgerError('ERR_LEDGER_MALFORMED', `entry envelope: ${err.message}`)
  }
}

/** The error of an entry envelope whose signature does not verify (as openEntry words it). */
export function entrySignatureError (opened: OpenedEnvelope): LedgerError<'ERR_LEDGER_SIGNATURE'> {
  return new LedgerError('ERR_LEDGER_SIGNATURE', `entry envelope: signature by ${opened.signer.toString()} does not verify`)
}

/** The record of an opened entry envelope: payload decoded and checked, signer = author. */
export function entryRecord (bytes: Uint8Array, opened: OpenedEnvelope): LedgerRecord {
  const entry = decodeEntryPayload(opened.payload)
  if (!equals(entry.author, opened.signer.toMultihash().bytes)) throw new LedgerError('ERR_LEDGER_SIGNATURE', `entry of another author signed by ${opened.signer.toString()}`)
  return recordOf(bytes, opened.payload, entry, opened.signer.toString())
}

const SIGNER_PROBLEMS: ReadonlySet<EnvelopeRejection> = new Set(['bad-signer', 'wrong-signer', 'bad-signature'])

function decodeEntryPayload (payload: Uint8Array): LedgerEntry {
  let entry: LedgerEntry
  try {
    entry = decodeBounded(LedgerEntry, payload, 'ledger entry', MAX_BYTES.ledgerEntry)
  } catch (err) {
    throw new LedgerError('ERR_LEDGER_MALFORMED', err instanceof WireDecodeError ? err.message : String(err))
  }
  if (entry.seq < 1n || entry.seq > BigInt(Number.MAX_SAFE_INTEGER)) throw new LedgerError('ERR_LEDGER_CHAIN', `entry seq ${entry.seq} is out of range`)
  if (entry.seq === 1n ? entry.prevHash.length !== 0 : entry.prevHash.length !== HASH_BYTES) {
    throw new LedgerError('ERR_LEDGER_CHAIN', `entry ${entry.seq} has a prev_hash of ${entry.prevHash.length} bytes`)
  }
  if (entry.chain !== 0 && entry.chain !== 2) throw new LedgerError('ERR_LEDGER_MALFORMED', `entry ${entry.seq} names chain ${entry.chain} (0 or 2)`)
  kindName(entry.kind)
  if (entry.body.length > maxBodyBytes(entry.kind)) {
    throw new LedgerError('ERR_LEDGER_BODY_SIZE', `${kindName(entry.kind)} body of ${entry.body.length} bytes exceeds the ${maxBodyBytes(entry.kind)}-byte bound`)
  }
  return entry
}

function recordOf (envelope: Uint8Array, payload: Uint8Array, entry: LedgerEntry, authorId: string): LedgerRecord {
  return {
    envelope,
    payload,
    hash: entry.chain === 2 ? sha256(envelope) : messageHash(DOMAIN.ledgerEntry, payload),
    chain: entry.chain === 2 ? 2 : 1,
    author: entry.author,
    authorId,
    seq: Number(entry.seq),
    prevHash: entry.prevHash,
    time: Number(entry.time),
    kind: entry.kind,
    body: entry.body,
    // present from the start: every record has one shape
    decodedBody: undefined
  }
}

/**
 * The hash an entry envelope goes by (its chain's rule), its signature not checked; throws on bytes
 * that do not decode.
 */
export function entryHashOf (envelope: Uint8Array): Uint8Array {
  const { payload, entry } = decodeUnchecked(envelope)
  return entry.chain === 2 ? sha256(envelope) : messageHash(DOMAIN.ledgerEntry, payload)
}

/**
 * An entry envelope and its payload decoded within their bounds, nothing checked; throws on bytes
 * that do not decode.
 */
function decodeUnchecked (envelope: Uint8Array): { payload: Uint8Array, entry: LedgerEntry } {
  const { payload } = decodeBounded(SignedEnvelope, envelope, 'ledger entry envelope', MAX_ENTRY_ENVELOPE_BYTES)
  return { payload, entry: decodeBounded(LedgerEntry, payload, 'ledger entry', MAX_BYTES.ledgerEntry) }
}

/**
 * The seq an entry envelope claims, nothing checked (a sync client reads where a range starts
 * before the ingest step verifies it); undefined for bytes that do not decode.
 */
export function claimedSeqOf (envelope: Uint8Array): number | undefined {
  try {
    const { seq } = decodeUnchecked(envelope).entry
    return seq > BigInt(Number.MAX_SAFE_INTEGER) ? undefined : Number(seq)
  } catch {
    return undefined
  }
}

/** Decodes an entry this node stored after verifying it: no signature or body checks. */
export function decodeStoredEntry (envelope: Uint8Array): LedgerRecord {
  const env = decodeVerified(SignedEnvelope, envelope, 'stored entry envelope')
  const entry = decodeVerified(LedgerEntry, env.payload, 'stored entry')
  const author = parseAuthor(entry.author)
  if (author == null) throw new LedgerError('ERR_LEDGER_MALFORMED', 'stored entry has no valid author')
  return recordOf(envelope, env.payload, entry, author.id)
}

export interface EntryFields {
  seq: number
  prevHash: Uint8Array
  time: number
  kind: LedgerEntry.BodyKind
  body: Uint8Array
  /** 2 (default): hashed whole; 1 only to write what a node before ledger sync 4 wrote (tests, vectors) */
  chain?: 1 | 2
}

/** Signs an entry of our own feed. */
export function sealEntry (key: Ed25519PrivateKey, peerId: PeerId, fields: EntryFields): LedgerRecord {
  const author = peerId.toMultihash().bytes
  const payload = LedgerEntry.encode({
    author,
    seq: BigInt(fields.seq),
    prevHash: fields.prevHash,
    time: BigInt(fields.time),
    kind: fields.kind,
    body: fields.body,
    chain: fields.chain === 1 ? 0 : 2
  })
  const envelope = sealEnvelope(key, peerId, DOMAIN.ledgerEntry, payload)
  return recordOf(envelope, payload, LedgerEntry.decode(payload), peerId.toString())
}

/** The check an entry's time must pass on arrival. */
export function checkEntryTime (record: LedgerRecord, now: number, maxSkewMs = MAX_CLOCK_SKEW_MS): void {
  if (record.time > now + maxSkewMs) {
    throw new LedgerError('ERR_LEDGER_FUTURE', `entry ${record.seq} of ${record.authorId} is ${record.time - now} ms ahead of the local clock (bound ${maxSkewMs} ms)`)
  }
}

/**
 * A chain-1 entry after a chain-2 one: a feed's chain never goes back either (its signatures would
 * fall outside it).
 */
export function chainOrderError (record: LedgerRecord, previous: { chain: 1 | 2 } | undefined): LedgerError<'ERR_LEDGER_CHAIN'> | undefined {
  if (previous?.chain !== 2 || record.chain === 2) return undefined
  return new LedgerError('ERR_LEDGER_CHAIN', `entry ${record.seq} of ${record.authorId} is chain 1 after a chain-2 entry`)
}

/** A feed's times never go back (protocols/README.md §7): the error when `record` is dated before its predecessor. */
export function timeOrderError (record: LedgerRecord, previousTime: number | undefined): LedgerError<'ERR_LEDGER_TIME_ORDER'> | undefined {
  if (previousTime == null || record.time >= previousTime) return undefined
  return new LedgerError('ERR_LEDGER_TIME_ORDER', `entry ${record.seq} of ${record.authorId} is dated ${previousTime - record.time} ms before entry ${record.seq - 1}`)
}
