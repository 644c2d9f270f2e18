/**
 * The native Ed25519 check under the fast verifiers (signature.ts): libsodium when its
 * prebuilt binding loads, OpenSSL (node:crypto) otherwise. Both check the cofactorless
 * equation, which implies the strict rule's cofactored one; neither decides a "no" alone
 * (signature.ts has noble decide those). Measured here: libsodium ≈ 45 µs a verify, OpenSSL
 * ≈ 77 µs.
 */
import { createPublicKey, verify as cryptoVerify, type KeyObject } from 'node:crypto'
import { createRequire } from 'node:module'

interface Sodium {
  crypto_sign_verify_detached: (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array) => boolean
}

export type NativeVerifierName = 'libsodium' | 'openssl'

function loadSodium (): Sodium | undefined {
  try {
    // a native addon, loaded on demand: a platform without its prebuilt binary keeps OpenSSL
    return createRequire(import.meta.url)('sodium-native') as Sodium
  } catch {
    return undefined
  }
}

const sodium = loadSodium()

/** Which library nativeVerify uses in this process. */
export const NATIVE_VERIFIER: NativeVerifierName = sodium != null ? 'libsodium' : 'openssl'

const KEY_CACHE_LIMIT = 4096
const keyCache = new Map<string, KeyObject | null>()

/** A node:crypto key for a raw public key (cached); null when OpenSSL refuses the bytes. */
function opensslKey (publicKey: Uint8Array): KeyObject | null {
  const id = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength).toString('base64url')
  let key = keyCache.get(id)
  if (key === undefined) {
    try {
      key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: id }, format: 'jwk' })
    } catch {
      key = null
    }
    keyCache.set(id, key)
    if (keyCache.size > KEY_CACHE_LIMIT) keyCache.delete(keyCache.keys().next().value as string)
  }
  return key
}

/** OpenSSL's verdict (cofactorless); exported for the specs that compare the two libraries. */
export function opensslVerify (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const key = opensslKey(publicKey)
  try {
    return key != null && cryptoVerify(null, message, key, signature)
  } catch {
    return false
  }
}

/** libsodium's verdict (cofactorless; also refuses small-order R and A); undefined when it did not load. */
export function sodiumVerify (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean | undefined {
  if (sodium == null) return undefined
  try {
    return sodium.crypto_sign_verify_detached(signature, message, publicKey)
  } catch {
    return false
  }
}

/** The native library's verdict: true means the strict rule accepts too (after the prechecks). */
export function nativeVerify (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  return sodiumVerify(publicKey, message, signature) ?? opensslVerify(publicKey, message, signature)
}
