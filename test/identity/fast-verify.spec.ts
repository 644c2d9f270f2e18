import * as assert from 'node:assert/strict'
import { createHash, createPublicKey, randomBytes, verify as nodeVerify } from 'node:crypto'
import { generateKeyPair } from '@libp2p/crypto/keys'
import * as ed from '@noble/ed25519'
import { sodiumVerify } from '../../src/identity/native-verify.js'
import { canonicalPointEncoding, SMALL_ORDER_ENCODINGS, signBytes, strictPrechecks, verifyNobleSync, verifyInPool, verifyNativeSync, verifyManyInPool } from '../../src/identity/signature.js'

// The fast verifiers (libsodium or OpenSSL, inline or in the pool's workers, + prechecks + noble as
// arbiter) must accept exactly what verifyNobleSync (noble, strict RFC 8032) accepts: the same edge
// vectors as test/identity/envelope.spec.ts, plus a mixed-order key where OpenSSL and noble
// disagree.

const L = 2n ** 252n + 27742317777372353535851937790883648493n
const P = 2n ** 255n - 19n
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex')
const text = (s: string): Uint8Array => new TextEncoder().encode(s)
const rand = (n: number): Uint8Array => new Uint8Array(randomBytes(n))
const sha512 = (...parts: Uint8Array[]): Uint8Array => {
  const h = createHash('sha512')
  for (const p of parts) h.update(p)
  return new Uint8Array(h.digest())
}
function toLE32 (n: bigint): Uint8Array {
  const out = new Uint8Array(32)
  for (let i = 0; i < 32; i++) { out[i] = Number(n & 0xffn); n >>= 8n }
  return out
}
function fromLE (b: Uint8Array): bigint {
  let n = 0n
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i])
  return n
}

function torsionPoints (): ed.Point[] {
  let T: ed.Point | undefined
  for (let i = 0; T == null; i++) {
    const candidate = sha512(Uint8Array.of(i)).slice(0, 32)
    candidate[31] &= 0x7f
    let point: ed.Point
    try { point = ed.Point.fromBytes(candidate) } catch { continue }
    const torsion = point.multiply(L - 1n, false).add(point)
    if (!torsion.multiply(4n, false).is0()) T = torsion
  }
  const points: ed.Point[] = []
  let acc = ed.Point.ZERO
  for (let i = 0; i < 8; i++) { points.push(acc); acc = acc.add(T) }
  return points
}

async function agree (
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
  expected: boolean,
  what: string
): Promise<void> {
  assert.equal(verifyNobleSync(publicKey, message, signature), expected, `verifyNobleSync: ${what}`)
  assert.equal(await verifyInPool(publicKey, message, signature), expected, `verifyInPool: ${what}`)
  assert.equal(verifyNativeSync(publicKey, message, signature), expected, `verifyNativeSync: ${what}`)
  // one at a time is verified inline; a batch this size goes to the pool's workers
  const batch = await verifyManyInPool(Array.from({ length: 20 }, () => ({ publicKey, message, signature })), 20)
  assert.deepEqual(batch, batch.map(() => expected), `verifyManyInPool (worker): ${what}`)
}

describe('identity: the fast verifier accepts exactly what the strict verifier accepts', () => {
  it('the small-order list is exactly the canonical encodings of the 8-torsion', () => {
    const computed = torsionPoints().map(p => hex(p.toBytes())).sort()
    assert.deepEqual([...SMALL_ORDER_ENCODINGS].sort(), computed)
  })

  it('RFC 8032 vector 1, random keys, and tampered messages, R and S', async () => {
    await agree(
      Buffer.from('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a', 'hex'), new Uint8Array(0),
      Buffer.from('e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b', 'hex'), true, 'RFC 8032 vector 1')
    for (let i = 0; i < 20; i++) {
      const key = await generateKeyPair('Ed25519')
      const message = rand(i * 7)
      const sig = signBytes(key.raw, message)
      await agree(key.publicKey.raw, message, sig, true, `random ${i}`)
      const badR = Uint8Array.from(sig); badR[i % 32] ^= 1
      await agree(key.publicKey.raw, message, badR, false, `tampered R ${i}`)
      const badS = Uint8Array.from(sig); badS[32 + (i % 31)] ^= 1
      await agree(key.publicKey.raw, message, badS, false, `tampered S ${i}`)
      await agree(key.publicKey.raw, new Uint8Array([...message, 1]), sig, false, `other message ${i}`)
    }
  })

  it('rejects a non-canonical S (S + L), which a group-equation-only check would accept', async () => {
    const key = await generateKeyPair('Ed25519')
    const message = text('malleable')
    const sig = signBytes(key.raw, message)
    const malleated = new Uint8Array([...sig.subarray(0, 32), ...toLE32(fromLE(sig.subarray(32)) + L)])
    assert.equal(strictPrechecks(key.publicKey.raw, malleated), false)
    await agree(key.publicKey.raw, message, malleated, false, 'S + L')
  })

  it('rejects every small-order public key with the signature the cofactored equation accepts', async () => {
    for (const A of torsionPoints().map(p => p.toBytes())) {
      const sig = new Uint8Array(64)
      sig.set(toLE32(1n), 0)
      const message = rand(16)
      assert.ok(ed.verify(sig, message, A, { zip215: true }), 'a lenient verifier accepts it')
      await agree(A, message, sig, false, `small-order key ${hex(A)}`)
    }
  })

  it('rejects non-canonical public keys (y = p, y = p + 1, sign bit on x = 0) and a non-canonical R', async () => {
    const sig = new Uint8Array(64)
    sig.set(toLE32(1n), 0)
    const negZero = toLE32(1n); negZero[31] |= 0x80
    for (const A of [toLE32(P), toLE32(P + 1n), negZero]) {
      assert.ok(ed.verify(sig, text('m'), A, { zip215: true }), 'a lenient verifier accepts it')
      await agree(A, text('m'), sig, false, `non-canonical key ${hex(A)}`)
    }
    const key = await generateKeyPair('Ed25519')
    const A = key.publicKey.raw
    const { scalar: a } = ed.utils.getExtendedPublicKey(key.raw.subarray(0, 32))
    const message = text('R is the identity')
    const sigWith = (R: Uint8Array): Uint8Array => {
      const k = fromLE(sha512(R, A, message)) % L
      return new Uint8Array([...R, ...toLE32((k * a) % L)])
    }
    await agree(A, message, sigWith(toLE32(1n)), true, 'canonical identity R')
    await agree(A, message, sigWith(toLE32(P + 1n)), false, 'non-canonical identity R')
  })

  it('accepts a mixed-order key\'s signature that only the cofactored equation accepts (OpenSSL and libsodium say no, noble decides)', async () => {
    // A' = aB + T (T of order 8): S = r + k·a satisfies [8]([S]B − R − [k]A') = 0 always, and the
    // cofactorless equation only when 8 divides k. noble strict accepts; OpenSSL refuses.
    const seed = rand(32)
    const { scalar: a } = ed.utils.getExtendedPublicKey(seed)
    const T = torsionPoints()[1]
    const Aprime = ed.Point.BASE.multiply(a).add(T).toBytes()
    let found = false
    for (let i = 0; i < 64 && !found; i++) {
      const message = text(`mixed ${i}`)
      const r = fromLE(sha512(seed, message)) % L
      const R = ed.Point.BASE.multiply(r).toBytes()
      const k = fromLE(sha512(R, Aprime, message)) % L
      if (k % 8n === 0n) continue
      const sig = new Uint8Array([...R, ...toLE32((r + k * a) % L)])
      const opensslKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(Aprime).toString('base64url') }, format: 'jwk' })
      assert.equal(nodeVerify(null, message, opensslKey, sig), false, 'OpenSSL (cofactorless) refuses it')
      assert.equal(sodiumVerify(Aprime, message, sig), false, 'libsodium (cofactorless) refuses it')
      await agree(Aprime, message, sig, true, 'mixed-order key, cofactored only')
      found = true
    }
    assert.ok(found)
  })

  it('the byte-wise prechecks agree with the bigint rules at every bound (y = p ± 1, ±1 with the sign bit, S = L ± 1) and on random bytes', () => {
    const reference = (e: Uint8Array): boolean => {
      const y = fromLE(e) & ((1n << 255n) - 1n)
      return y < P && !((e[31] & 0x80) !== 0 && (y === 1n || y === P - 1n))
    }
    const withSign = (b: Uint8Array): Uint8Array => { const c = Uint8Array.from(b); c[31] |= 0x80; return c }
    const ys = [0n, 1n, 2n, P - 2n, P - 1n, P, P + 1n, 2n ** 255n - 1n].map(toLE32)
    const samples = [...ys, ...ys.map(withSign), ...Array.from({ length: 2000 }, () => rand(32))]
    for (const e of samples) assert.equal(canonicalPointEncoding(e), reference(e), hex(e))
    const key = toLE32(9n)
    const R = toLE32(4n)
    for (const S of [0n, 1n, L - 1n, L, L + 1n, 2n ** 253n, 2n ** 256n - 1n]) {
      assert.equal(strictPrechecks(key, Uint8Array.from([...R, ...toLE32(S)])), S < L, `S = ${S}`)
    }
  })

  it('verifyManyInPool keeps order and agrees item by item', async () => {
    const key = await generateKeyPair('Ed25519')
    const items = Array.from({ length: 100 }, (_, i) => {
      const message = text(`item ${i}`)
      const signature = signBytes(key.raw, message)
      if (i % 7 === 0) signature[40] ^= 2
      return { publicKey: key.publicKey.raw, message, signature }
    })
    const results = await verifyManyInPool(items, 16)
    assert.deepEqual(results, items.map(it => verifyNobleSync(it.publicKey, it.message, it.signature)))
    assert.equal(results.filter(r => !r).length, 15)
  })
})
