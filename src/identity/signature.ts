import { createHash, createPrivateKey, sign as cryptoSign, type KeyObject } from 'node:crypto'
import * as ed from '@noble/ed25519'
import { toHex } from '../common/index.js'
import { nativeVerify } from './native-verify.js'
import { defaultVerifierThreads, VerifyPool } from './verify-pool.js'

// noble's synchronous API needs a sha512; Node's is the fastest available.
ed.hashes.sha512 = (message) => new Uint8Array(createHash('sha512').update(message).digest())

export const SIGNATURE_BYTES = 64
export const PUBLIC_KEY_BYTES = 32
export const SEED_BYTES = 32

/** PKCS#8 DER prefix of an Ed25519 private key; the 32-byte seed follows it. */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')
const SIGNING_KEY_CACHE_LIMIT = 64
const signingKeys = new Map<string, KeyObject>()

function opensslSigningKey (seed: Uint8Array): KeyObject {
  const id = Buffer.from(seed).toString('base64')
  let key = signingKeys.get(id)
  if (key == null) {
    key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' })
    signingKeys.set(id, key)
    if (signingKeys.size > SIGNING_KEY_CACHE_LIMIT) signingKeys.delete(signingKeys.keys().next().value as string)
  }
  return key
}

/**
 * Ed25519 signature over `message` with a 32-byte seed (a libp2p key's `raw` starts with it).
 * Ed25519 is deterministic, so OpenSSL's signature is byte-identical to noble's; OpenSSL is
 * about ten times faster.
 */
export function signBytes (seed: Uint8Array, message: Uint8Array): Uint8Array {
  const secret = seed.subarray(0, SEED_BYTES)
  if (secret.length !== SEED_BYTES) throw new RangeError(`an Ed25519 seed is ${SEED_BYTES} bytes, got ${secret.length}`)
  return new Uint8Array(cryptoSign(null, message, opensslSigningKey(secret)))
}

/**
 * Strict RFC 8032 verification, the one rule every idlegrid node applies: 64-byte signature
 * with S < L, canonical encodings of R and A, and no small-order public key (noble's strict
 * branch, `zip215: false`). ZIP-215's leniency is off so that nodes agree on every signature.
 */
export function verifyNobleSync (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== PUBLIC_KEY_BYTES || signature.length !== SIGNATURE_BYTES) return false
  try {
    return ed.verify(signature, message, publicKey, { zip215: false })
  } catch {
    return false
  }
}

// The verifiers, each named for how it checks (all accept exactly the same set):
//   verifyNobleSync       noble (@noble/ed25519) strict, on the calling thread: the rule itself
//   verifyNativeSync      prechecks, then a native library, noble deciding its "no", on the calling thread
//   verifyInPool          verifyNativeSync's check in the worker pool (verify-pool.ts), async
//   verifyPrefixedInPool  the same over `prefix` ‖ `message`, never joined on this thread
//   verifyManyInPool      verifyInPool over a list, with a bound on how many are in flight
// The native library is libsodium, or OpenSSL (node:crypto) where libsodium's binding does
// not load (native-verify.ts); the strict rule's prechecks are done here, and noble is the
// arbiter whenever the native library says no. Measured here: noble strict ≈ 800/s, OpenSSL
// ≈ 13,000/s, libsodium ≈ 22,000/s on one core.
//
// Why the accepted set is exactly verifyNobleSync's:
// - a precheck refuses only what noble strict refuses too (S ≥ L, A or R with y ≥ p or the
//   sign bit on x = 0, A of small order);
// - the native cofactorless check [S]B = R + [k]A (and R's bytes equal to the canonical
//   encoding it recomputes) implies noble's cofactored one, so a native "yes" is a noble "yes";
// - a native "no" is re-checked by noble, which decides (cofactored and cofactorless checks
//   differ only on crafted signatures with torsion components, and those are rare and slow;
//   libsodium also refuses a small-order R, which noble decides too).

const GROUP_ORDER = 2n ** 252n + 27742317777372353535851937790883648493n
const FIELD_PRIME = 2n ** 255n - 19n

/** Canonical encodings of the eight points of small order (the 8-torsion subgroup). */
export const SMALL_ORDER_ENCODINGS: readonly string[] = [
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa'
]
const SMALL_ORDER = new Set(SMALL_ORDER_ENCODINGS)
/** Their first bytes: most keys are ruled out without hex-encoding them. */
const SMALL_ORDER_FIRST = new Set(SMALL_ORDER_ENCODINGS.map(hex => parseInt(hex.slice(0, 2), 16)))

function littleEndianBytes (n: bigint): Uint8Array {
  const out = new Uint8Array(32)
  for (let i = 0; i < 32; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn)
  return out
}

// The bounds as bytes: the prechecks run for every signature, and byte comparisons cost far
// less than building bigints (they were a tenth of the ledger's main-thread time in sync).
const GROUP_ORDER_LE = littleEndianBytes(GROUP_ORDER)
const FIELD_PRIME_LE = littleEndianBytes(FIELD_PRIME)
const ONE_LE = littleEndianBytes(1n)
const MINUS_ONE_LE = littleEndianBytes(FIELD_PRIME - 1n)

/**
 * Compares two 32-byte little-endian numbers, `a`'s at byte `at` (no view made: every signature
 * is checked), bit 255 of `a` cleared when `clearTop`: <0, 0, >0.
 */
function compareLittleEndian (a: Uint8Array, b: Uint8Array, clearTop: boolean, at = 0): number {
  for (let i = 31; i >= 0; i--) {
    const x = i === 31 && clearTop ? a[at + i] & 0x7f : a[at + i]
    if (x !== b[i]) return x - b[i]
  }
  return 0
}

/**
 * Strict RFC 8032 decoding rules on a point encoding (32 bytes of `bytes` from `at`), without
 * decoding it: y < p, and no sign bit on x = 0.
 */
export function canonicalPointEncoding (bytes: Uint8Array, at = 0): boolean {
  const signBit = (bytes[at + 31] & 0x80) !== 0
  if (compareLittleEndian(bytes, FIELD_PRIME_LE, true, at) >= 0) return false
  // x = 0 exactly when y = ±1
  if (
    signBit &&
    (compareLittleEndian(bytes, ONE_LE, true, at) === 0 || compareLittleEndian(bytes, MINUS_ONE_LE, true, at) === 0)
  ) {
    return false
  }
  return true
}

/** The checks of the strict rule that need no curve arithmetic; false means verifyNobleSync is false too. */
export function strictPrechecks (publicKey: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== PUBLIC_KEY_BYTES || signature.length !== SIGNATURE_BYTES) return false
  if (compareLittleEndian(signature, GROUP_ORDER_LE, false, 32) >= 0) return false
  if (!canonicalPointEncoding(publicKey) || !canonicalPointEncoding(signature, 0)) return false
  return !(SMALL_ORDER_FIRST.has(publicKey[0]) && SMALL_ORDER.has(toHex(publicKey)))
}

/**
 * Accepts exactly what verifyNobleSync accepts (strict RFC 8032), without blocking the main thread
 * when many are asked at once: they are verified in batches by worker threads (verify-pool.ts).
 */
export async function verifyInPool (
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array
): Promise<boolean> {
  if (!strictPrechecks(publicKey, signature)) return false
  return await verifyPool.verify({ publicKey, message, signature })
}

/**
 * verifyInPool of the message `prefix` ‖ `message`, not joined on this thread: a batch packs
 * the two side by side for its worker (an envelope's signed bytes are its domain's prefix and
 * its payload, and joining them was a copy and an allocation per signature). The pool's
 * promise itself, not one wrapped around it.
 */
export function verifyPrefixedInPool (
  publicKey: Uint8Array,
  prefix: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array
): Promise<boolean> {
  if (!strictPrechecks(publicKey, signature)) return Promise.resolve(false)
  return verifyPool.verify({ publicKey, prefix, message, signature })
}

/**
 * The native library's check (libsodium or OpenSSL) after the prechecks, noble deciding its
 * "no", on the calling thread: for synchronous callers (envelopes) and the pool's workers. The
 * same accepted set as verifyNobleSync, thirty times faster on valid signatures.
 */
export function verifyNativeSync (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (!strictPrechecks(publicKey, signature)) return false
  return nativeVerify(publicKey, message, signature) || verifyNobleSync(publicKey, message, signature)
}

const verifyPool = new VerifyPool({
  verifyInline: item => verifyNativeSync(item.publicKey, signedMessage(item), item.signature)
})

/** Worker threads verifyInPool uses at most. */
export function verifierThreads (): number {
  return verifyPool.threads
}

/**
 * Sets the worker threads verifyInPool uses at most, for the whole process (config
 * `ledger.verifierThreads`: a provider may keep cores for its jobs); undefined: the default, a
 * worker per core up to 4. 0 verifies on the calling thread. Throws RangeError outside 0–16.
 */
export function setVerifierThreads (threads?: number): void {
  verifyPool.resize(threads ?? defaultVerifierThreads())
}

export interface SignedBytes {
  publicKey: Uint8Array
  /** when set, the signed message is `prefix` ‖ `message` */
  prefix?: Uint8Array
  message: Uint8Array
  signature: Uint8Array
}

/** The whole message an item's signature covers. */
export function signedMessage (item: SignedBytes): Uint8Array {
  if (item.prefix == null || item.prefix.length === 0) return item.message
  const out = new Uint8Array(item.prefix.length + item.message.length)
  out.set(item.prefix)
  out.set(item.message, item.prefix.length)
  return out
}

/** verifyInPool over many signatures with at most `concurrency` in flight; results in order. */
export async function verifyManyInPool (items: readonly SignedBytes[], concurrency = 64): Promise<boolean[]> {
  const results = new Array<boolean>(items.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++
      results[i] = await verifyInPool(items[i].publicKey, items[i].message, items[i].signature)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker))
  return results
}
