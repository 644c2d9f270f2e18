import { createHash, hash } from 'node:crypto'
import { signingPrefix } from './envelope.js'

/**
 * The message hash of a signed message: sha256 of exactly the bytes its signature covers
 * ("idlegrid/v1/" + domain + 0x00 + payload). It is the replay id, and what awards,
 * receipts and ledger entries use to point at another message (protocols/README.md §4).
 */
export function messageHash (domain: string, payload: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(signingPrefix(domain)).update(payload).digest())
}

export function sha256 (bytes: Uint8Array | string): Uint8Array {
  // one call, no Hash object (every synced entry is hashed); the digest is a Buffer of its
  // own 32 bytes, seen as a plain Uint8Array
  const digest = hash('sha256', bytes, 'buffer')
  return new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength)
}
