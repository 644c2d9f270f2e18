/**
 * The ledger store's LevelDB layout: prefixed binary keys, one definition of each.
 *
 *   0x01 | len | author | seq (8 bytes BE)  → entry envelope
 *   0x02 | len | author                     → head: seq (8 bytes BE) | hash (32)
 *   0x03 | hash                             → len | author | seq      (hash index)
 *   0x04 | len | accused                    → hash of the entry carrying the first proof (slashed set)
 *   0x05 | proof hash                       → hash of the entry carrying that proof (fraud proofs)
 */

import { HASH_BYTES } from './entry.js'

const PREFIX = { entry: 0x01, head: 0x02, hash: 0x03, slashed: 0x04, proof: 0x05 } as const

/** Bounds that iterate every key of one kind. */
export type KeyRange = { gte: Uint8Array, lt: Uint8Array }

export function entryKey (author: Uint8Array, seq: number): Uint8Array {
  return Uint8Array.from([PREFIX.entry, author.length, ...author, ...seqBytes(seq)])
}

export const ALL_ENTRIES: KeyRange = range(PREFIX.entry)
export const ALL_HEADS: KeyRange = range(PREFIX.head)
export const ALL_SLASHED: KeyRange = range(PREFIX.slashed)

export function headKey (author: Uint8Array): Uint8Array {
  return authorKey(PREFIX.head, author)
}

export function headValue (seq: number, hash: Uint8Array): Uint8Array {
  return Uint8Array.from([...seqBytes(seq), ...hash])
}

export function readHead (value: Uint8Array): { seq: number, hash: Uint8Array } {
  return { seq: readSeq(value, 0), hash: value.slice(8, 8 + HASH_BYTES) }
}

export function hashKey (hash: Uint8Array): Uint8Array {
  return Uint8Array.from([PREFIX.hash, ...hash])
}

export function hashValue (author: Uint8Array, seq: number): Uint8Array {
  return Uint8Array.from([author.length, ...author, ...seqBytes(seq)])
}

export function readHashValue (value: Uint8Array): { author: Uint8Array, seq: number } {
  return { author: value.subarray(1, 1 + value[0]), seq: readSeq(value, 1 + value[0]) }
}

export function slashedKey (accused: Uint8Array): Uint8Array {
  return authorKey(PREFIX.slashed, accused)
}

export function proofKey (proofHash: Uint8Array): Uint8Array {
  return Uint8Array.from([PREFIX.proof, ...proofHash])
}

/** The author (or accused) bytes of a head or slashed key. */
export function authorOfKey (key: Uint8Array): Uint8Array {
  return key.subarray(2, 2 + key[1])
}

function authorKey (prefix: number, author: Uint8Array): Uint8Array {
  return Uint8Array.from([prefix, author.length, ...author])
}

function range (prefix: number): KeyRange {
  return { gte: Uint8Array.of(prefix), lt: Uint8Array.of(prefix + 1) }
}

function seqBytes (seq: number): Uint8Array {
  const out = new Uint8Array(8)
  new DataView(out.buffer).setBigUint64(0, BigInt(seq))
  return out
}

function readSeq (bytes: Uint8Array, at: number): number {
  return Number(new DataView(bytes.buffer, bytes.byteOffset + at, 8).getBigUint64(0))
}
