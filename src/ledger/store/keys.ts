/**
 * The ledger store's LevelDB layout: prefixed binary keys, one definition of each.
 *
 *   0x01 | len | author | seq (8 bytes BE)  → entry envelope
 *   0x02 | len | author                     → head: seq (8 BE) | hash (32) | feed bytes (8 BE) | base seq (8 BE)
 *   0x03 | hash                             → len | author | seq      (hash index)
 *   0x04 | len | accused                    → hash of the entry carrying the first proof (slashed set)
 *   0x05 | proof hash                       → hash of the entry carrying that proof (fraud proofs)
 *   0x06 | len | author                     → standing depth (1 byte) reached from a root (ingest/standing.ts)
 */

import { HASH_BYTES } from '../entries/entry.js'

const PREFIX = { entry: 0x01, head: 0x02, hash: 0x03, slashed: 0x04, proof: 0x05, standing: 0x06 } as const

/** Bounds that iterate every key of one kind. */
export type KeyRange = { gte: Uint8Array, lt: Uint8Array }

export function entryKey (author: Uint8Array, seq: number): Uint8Array {
  const key = authorKey(PREFIX.entry, author, 8)
  writeSeq(key, 2 + author.length, seq)
  return key
}

export const ALL_ENTRIES: KeyRange = range(PREFIX.entry)
export const ALL_HEADS: KeyRange = range(PREFIX.head)
export const ALL_SLASHED: KeyRange = range(PREFIX.slashed)
export const ALL_STANDING: KeyRange = range(PREFIX.standing)

export function headKey (author: Uint8Array): Uint8Array {
  return authorKey(PREFIX.head, author)
}

export function headValue (head: { seq: number, hash: Uint8Array, bytes: number, base: number }): Uint8Array {
  const value = keyBytes(24 + head.hash.length)
  writeSeq(value, 0, head.seq)
  value.set(head.hash, 8)
  writeSeq(value, 8 + head.hash.length, head.bytes)
  writeSeq(value, 16 + head.hash.length, head.base)
  return value
}

/**
 * A head value; `bytes` (the feed's stored envelope bytes) is 0 in heads written before it was
 * kept, `base` (the first seq held: README §7 "Retention") 1 in heads written before it was.
 */
export function readHead (value: Uint8Array): { seq: number, hash: Uint8Array, bytes: number, base: number } {
  const bytes = value.byteLength >= 16 + HASH_BYTES ? readSeq(value, 8 + HASH_BYTES) : 0
  const base = value.byteLength >= 24 + HASH_BYTES ? readSeq(value, 16 + HASH_BYTES) : 1
  return { seq: readSeq(value, 0), hash: value.slice(8, 8 + HASH_BYTES), bytes, base }
}

/** Head keys strictly after `author`'s (in key order: author length, then bytes). */
export function headsAfter (author: Uint8Array | undefined): KeyRange | { gt: Uint8Array, lt: Uint8Array } {
  return author == null || author.length === 0 ? ALL_HEADS : { gt: headKey(author), lt: ALL_HEADS.lt }
}

/** The order of head keys: author length, then author bytes (negative when `a` comes first). */
export function compareAuthorKeys (a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return a.length - b.length
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i]
  return 0
}

export function standingKey (author: Uint8Array): Uint8Array {
  return authorKey(PREFIX.standing, author)
}

export function hashKey (hash: Uint8Array): Uint8Array {
  return prefixed(PREFIX.hash, hash)
}

export function hashValue (author: Uint8Array, seq: number): Uint8Array {
  const value = keyBytes(1 + author.length + 8)
  value[0] = author.length
  value.set(author, 1)
  writeSeq(value, 1 + author.length, seq)
  return value
}

export function readHashValue (value: Uint8Array): { author: Uint8Array, seq: number } {
  return { author: value.subarray(1, 1 + value[0]), seq: readSeq(value, 1 + value[0]) }
}

export function slashedKey (accused: Uint8Array): Uint8Array {
  return authorKey(PREFIX.slashed, accused)
}

export function proofKey (proofHash: Uint8Array): Uint8Array {
  return prefixed(PREFIX.proof, proofHash)
}

/** The author (or accused) bytes of a head or slashed key. */
export function authorOfKey (key: Uint8Array): Uint8Array {
  return key.subarray(2, 2 + key[1])
}

/** prefix | len | author, and `extra` bytes left for the caller (keys are built in place: sync writes thousands) */
function authorKey (prefix: number, author: Uint8Array, extra = 0): Uint8Array {
  const key = keyBytes(2 + author.length + extra)
  key[0] = prefix
  key[1] = author.length
  key.set(author, 2)
  return key
}

function prefixed (prefix: number, bytes: Uint8Array): Uint8Array {
  const key = keyBytes(1 + bytes.length)
  key[0] = prefix
  key.set(bytes, 1)
  return key
}

/**
 * `length` bytes for a key or value, every one of which the caller writes. From Node's buffer
 * pool: a Uint8Array this small lives inside V8's heap, and LevelDB's binding reading it makes
 * V8 move it out into a backing store of its own first (an allocation and a copy per key). In
 * a profile of a 20,000-entry sync the batches' native part went from 276 to 157 ms; the
 * sync's total CPU moved less than its run-to-run spread.
 */
function keyBytes (length: number): Uint8Array {
  return Buffer.allocUnsafe(length)
}

function range (prefix: number): KeyRange {
  return { gte: Uint8Array.of(prefix), lt: Uint8Array.of(prefix + 1) }
}

/** `value` (a seq or a byte count: a safe non-negative integer) as 8 bytes big-endian at `at`. */
function writeSeq (out: Uint8Array, at: number, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${value} is not a seq`)
  const high = Math.floor(value / 2 ** 32)
  const low = value >>> 0
  out[at] = high >>> 24
  out[at + 1] = (high >>> 16) & 0xff
  out[at + 2] = (high >>> 8) & 0xff
  out[at + 3] = high & 0xff
  out[at + 4] = low >>> 24
  out[at + 5] = (low >>> 16) & 0xff
  out[at + 6] = (low >>> 8) & 0xff
  out[at + 7] = low & 0xff
}

function readSeq (bytes: Uint8Array, at: number): number {
  if (at < 0 || at + 8 > bytes.length) throw new RangeError(`no 8-byte seq at ${at} of ${bytes.length} bytes`)
  const high = ((bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]) >>> 0
  const low = ((bytes[at + 4] << 24) | (bytes[at + 5] << 16) | (bytes[at + 6] << 8) | bytes[at + 7]) >>> 0
  return high * 2 ** 32 + low
}
