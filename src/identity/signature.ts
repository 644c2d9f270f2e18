import { createHash } from 'node:crypto'
import * as ed from '@noble/ed25519'

// noble's synchronous API needs a sha512; Node's is the fastest available.
ed.hashes.sha512 = (message) => new Uint8Array(createHash('sha512').update(message).digest())

export const SIGNATURE_BYTES = 64
export const PUBLIC_KEY_BYTES = 32
export const SEED_BYTES = 32

/** Ed25519 signature over `message` with a 32-byte seed (a libp2p key's `raw` starts with it). */
export function signBytes (seed: Uint8Array, message: Uint8Array): Uint8Array {
  return ed.sign(message, seed.subarray(0, SEED_BYTES))
}

/**
 * Strict RFC 8032 verification, the one rule every idlegrid node applies: 64-byte signature
 * with S < L, canonical encodings of R and A, and no small-order public key (noble's strict
 * branch, `zip215: false`). ZIP-215's leniency is off so that nodes agree on every signature.
 */
export function verifyBytes (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== PUBLIC_KEY_BYTES || signature.length !== SIGNATURE_BYTES) return false
  try {
    return ed.verify(signature, message, publicKey, { zip215: false })
  } catch {
    return false
  }
}
