import * as assert from 'node:assert/strict'
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, sign as nodeSign, verify as nodeVerify } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateKeyPair, publicKeyFromRaw } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey, peerIdFromPublicKey } from '@libp2p/peer-id'
import * as ed from '@noble/ed25519'
import { Uint8ArrayList } from 'uint8arraylist'
import { SignedEnvelope } from '../../protocols/envelope.js'
import { MAX_ENVELOPE_BYTES, openEnvelope, openEnvelopeAsync, openEnvelopeUnverified, sealEnvelope, signingInput, verifyOpenedAsync, type OpenOptions } from '../../src/identity/envelope.js'
import { isEnvelopeError, type EnvelopeRefusal, type EnvelopeRejection } from '../../src/identity/errors.js'
import { loadOrCreateKey } from '../../src/identity/keystore.js'
import { signBytes, verifyNobleSync } from '../../src/identity/signature.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

// ---------------------------------------------------------------------------------------------
// helpers

const text = (s: string): Uint8Array => new TextEncoder().encode(s)
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex')
const unhex = (h: string): Uint8Array => {
  assert.match(h, /^([0-9a-f]{2})*$/, `hex literal ${h} is well formed`)
  return new Uint8Array(Buffer.from(h, 'hex'))
}
const rand = (n: number): Uint8Array => new Uint8Array(randomBytes(n))

/** the Ed25519 group order */
const L = 2n ** 252n + 27742317777372353535851937790883648493n
/** the field prime */
const P = 2n ** 255n - 19n

function toLE32 (n: bigint): Uint8Array {
  assert.ok(n >= 0n && n < 2n ** 256n, 'fits in 32 bytes')
  const out = new Uint8Array(32)
  for (let i = 0; i < 32; i++) {
    out[i] = Number(n & 0xffn)
    n >>= 8n
  }
  return out
}

function fromLE (b: Uint8Array): bigint {
  let n = 0n
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i])
  return n
}

const sha512 = (...parts: Uint8Array[]): Uint8Array => {
  const h = createHash('sha512')
  for (const p of parts) h.update(p)
  return new Uint8Array(h.digest())
}

/** OpenSSL's Ed25519 verifier (strict RFC 8032 on S), on a raw 32-byte public key */
function opensslVerify (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' })
  return nodeVerify(null, message, key, signature)
}

/** noble's default (ZIP-215, lenient) verifier: used to show that a vector is not trivially invalid */
function zip215Verify (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  return ed.verify(signature, message, publicKey, { zip215: true })
}

function expectEnvelopeError (fn: () => unknown, reason: EnvelopeRejection): EnvelopeRefusal {
  let caught: unknown
  try {
    fn()
  } catch (err) {
    caught = err
  }
  if (!isEnvelopeError(caught)) assert.fail(`expected an IdentityError ERR_ENVELOPE (${reason}), got ${String(caught)}`)
  assert.equal(caught.name, 'IdentityError')
  assert.equal(caught.code, 'ERR_ENVELOPE')
  assert.equal(caught.reason, reason, `rejection reason (message: ${caught.message})`)
  return caught
}

/** re-encodes an envelope with some fields changed */
function reencode (sealed: Uint8Array, change: Partial<SignedEnvelope>): Uint8Array {
  const env = SignedEnvelope.decode(sealed)
  return SignedEnvelope.encode({ ...env, ...change })
}

interface Signer { key: Ed25519PrivateKey, peerId: PeerId }

async function newSigner (): Promise<Signer> {
  const key = await generateKeyPair('Ed25519')
  return { key, peerId: peerIdFromPrivateKey(key) }
}

const DOMAIN = 'heartbeat'

// ---------------------------------------------------------------------------------------------

describe('identity: signed envelopes', () => {
  let dir: string
  let alice: Signer
  let bob: Signer

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'idlegrid-envelope-'))
    const key = await loadOrCreateKey(dir)
    alice = { key, peerId: peerIdFromPrivateKey(key) }
    bob = await newSigner()
  })

  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  describe('seal and open', () => {
    it('round-trips a payload with a key from the keystore', () => {
      const payload = text('load=0.25 gpus=2')
      const sealed = sealEnvelope(alice.key, alice.peerId, DOMAIN, payload)
      const opened = openEnvelope(sealed, { domain: DOMAIN })
      assert.equal(opened.domain, DOMAIN)
      assert.ok(opened.signer.equals(alice.peerId), 'signer is recovered from the envelope alone')
      assert.equal(opened.signer.toString(), alice.peerId.toString())
      assert.deepEqual(opened.payload, payload)
      assert.equal(opened.signature.length, 64)
      // with the expected signer given, too
      assert.deepEqual(openEnvelope(sealed, { domain: DOMAIN, signer: alice.peerId }).payload, payload)
    })

    it('opens from a Uint8ArrayList split across chunks', () => {
      const payload = rand(300)
      const sealed = sealEnvelope(alice.key, alice.peerId, DOMAIN, payload)
      const list = new Uint8ArrayList(sealed.subarray(0, 7), sealed.subarray(7, 100), sealed.subarray(100))
      assert.deepEqual(openEnvelope(list, { domain: DOMAIN }).payload, payload)
    })

    it('round-trips an empty payload', () => {
      const sealed = sealEnvelope(bob.key, bob.peerId, 'bid', new Uint8Array(0))
      const opened = openEnvelope(sealed, { domain: 'bid', signer: bob.peerId })
      assert.equal(opened.payload.length, 0)
    })

    it('signs "idlegrid/v1/" + domain + 0x00 + payload, and nothing else', async () => {
      const payload = text('xyz')
      const input = signingInput(DOMAIN, payload)
      assert.deepEqual(input, new Uint8Array([...text('idlegrid/v1/heartbeat'), 0, ...payload]))
      const env = SignedEnvelope.decode(sealEnvelope(alice.key, alice.peerId, DOMAIN, payload))
      const publicKey = alice.key.publicKey.raw
      assert.ok(verifyNobleSync(publicKey, input, env.signature), 'signature covers the signing input')
      assert.ok(opensslVerify(publicKey, input, env.signature), 'and OpenSSL agrees')
      assert.equal(verifyNobleSync(publicKey, payload, env.signature), false, 'the bare payload is not what is signed')
      // the libp2p key's own signature over the same input is the very same bytes
      assert.deepEqual(new Uint8Array(await alice.key.sign(input)), env.signature)
    })

    it('refuses to seal under an empty or NUL-containing domain', () => {
      expectEnvelopeError(() => sealEnvelope(alice.key, alice.peerId, '', text('x')), 'wrong-domain')
      expectEnvelopeError(() => sealEnvelope(alice.key, alice.peerId, 'a\0b', text('x')), 'wrong-domain')
      expectEnvelopeError(() => sealEnvelope(alice.key, alice.peerId, 'd'.repeat(65), text('x')), 'wrong-domain')
    })
  })

  describe('rejections', () => {
    let sealed: Uint8Array
    const payload = text('the payload as signed')

    before(() => {
      sealed = sealEnvelope(alice.key, alice.peerId, DOMAIN, payload)
      // sanity: the untouched envelope opens, so each rejection below is caused by its change
      openEnvelope(sealed, { domain: DOMAIN, signer: alice.peerId })
    })

    it('tampered payload → bad-signature', () => {
      const flipped = Uint8Array.from(payload)
      flipped[0] ^= 0x01
      expectEnvelopeError(() => openEnvelope(reencode(sealed, { payload: flipped }), { domain: DOMAIN }), 'bad-signature')
      // one extra byte appended
      expectEnvelopeError(() => openEnvelope(reencode(sealed, { payload: new Uint8Array([...payload, 0]) }), { domain: DOMAIN }), 'bad-signature')
    })

    it('a flipped bit anywhere in the signature → bad-signature', () => {
      const sig = SignedEnvelope.decode(sealed).signature
      for (const i of [0, 31, 32, 63]) {
        const bad = Uint8Array.from(sig)
        bad[i] ^= 0x04
        expectEnvelopeError(() => openEnvelope(reencode(sealed, { signature: bad }), { domain: DOMAIN }), 'bad-signature')
      }
    })

    it('wrong domain → wrong-domain', () => {
      const err = expectEnvelopeError(() => openEnvelope(sealed, { domain: 'bid' }), 'wrong-domain')
      assert.match(err.message, /heartbeat/)
      // relabelling the domain on the wire: the domain check catches it first
      expectEnvelopeError(() => openEnvelope(reencode(sealed, { domain: 'bid' }), { domain: DOMAIN }), 'wrong-domain')
      // relabelled AND expected: the signature (which covers the domain) no longer verifies
      expectEnvelopeError(() => openEnvelope(reencode(sealed, { domain: 'bid' }), { domain: 'bid' }), 'bad-signature')
    })

    it('a signature by another key under this signer → bad-signature', () => {
      // bob signs, but claims to be alice
      const forged = sealEnvelope(bob.key, alice.peerId, DOMAIN, payload)
      expectEnvelopeError(() => openEnvelope(forged, { domain: DOMAIN }), 'bad-signature')
      expectEnvelopeError(() => openEnvelope(forged, { domain: DOMAIN, signer: alice.peerId }), 'bad-signature')
      // alice's signature transplanted under bob's peer id
      const transplanted = reencode(sealed, { signer: bob.peerId.toMultihash().bytes })
      expectEnvelopeError(() => openEnvelope(transplanted, { domain: DOMAIN }), 'bad-signature')
    })

    it('a valid envelope from someone other than the expected signer → wrong-signer', () => {
      const byBob = sealEnvelope(bob.key, bob.peerId, DOMAIN, payload)
      assert.ok(openEnvelope(byBob, { domain: DOMAIN }).signer.equals(bob.peerId))
      const err = expectEnvelopeError(() => openEnvelope(byBob, { domain: DOMAIN, signer: alice.peerId }), 'wrong-signer')
      assert.ok(
        err.message.includes(bob.peerId.toString()) && err.message.includes(alice.peerId.toString()),
        err.message
      )
    })

    it('truncated, extended or missing signature → bad-signature', () => {
      const sig = SignedEnvelope.decode(sealed).signature
      for (const bad of [sig.subarray(0, 63), sig.subarray(0, 32), new Uint8Array(0), new Uint8Array([...sig, 0])]) {
        const err = expectEnvelopeError(() => openEnvelope(reencode(sealed, { signature: bad }), { domain: DOMAIN }), 'bad-signature')
        assert.match(err.message, new RegExp(`${bad.length} bytes`))
      }
    })

    it('oversized input → oversized, checked before decoding', () => {
      // garbage that would be "malformed" if it were decoded: the size check must come first
      const garbage = new Uint8Array(MAX_ENVELOPE_BYTES + 1).fill(0xff)
      expectEnvelopeError(() => openEnvelope(garbage, { domain: DOMAIN }), 'oversized')
      expectEnvelopeError(() => openEnvelope(garbage.subarray(0, 100), { domain: DOMAIN }), 'malformed')
      expectEnvelopeError(() => openEnvelope(new Uint8Array(101).fill(0xff), { domain: DOMAIN, maxBytes: 100 }), 'oversized')

      // a genuine, validly signed envelope over the default bound
      const big = sealEnvelope(alice.key, alice.peerId, DOMAIN, rand(MAX_ENVELOPE_BYTES))
      assert.ok(big.byteLength > MAX_ENVELOPE_BYTES)
      expectEnvelopeError(() => openEnvelope(big, { domain: DOMAIN }), 'oversized')
      expectEnvelopeError(() => openEnvelope(new Uint8ArrayList(big), { domain: DOMAIN }), 'oversized')
      assert.equal(openEnvelope(big, { domain: DOMAIN, maxBytes: big.byteLength }).payload.length, MAX_ENVELOPE_BYTES)
      // a tighter per-protocol bound
      expectEnvelopeError(() => openEnvelope(sealed, { domain: DOMAIN, maxBytes: sealed.byteLength - 1 }), 'oversized')
      assert.ok(openEnvelope(sealed, { domain: DOMAIN, maxBytes: sealed.byteLength }).signer.equals(alice.peerId))
    })

    it('garbage bytes → malformed', () => {
      const cases: Array<[string, Uint8Array]> = [
        ['an unterminated varint tag', new Uint8Array(16).fill(0xff)],
        ['a length-delimited field running past the end', Uint8Array.of(0x0a, 0x40, 0x61, 0x62)],
        ['an unknown field with wire type 7', Uint8Array.of(0x2f, 0x00)],
        ['the envelope cut short', sealed.subarray(0, sealed.length - 10)]
      ]
      for (const [what, bytes] of cases) {
        let caught: unknown
        try { openEnvelope(bytes, { domain: DOMAIN }) } catch (err) { caught = err }
        assert.ok(isEnvelopeError(caught), `${what}: ERR_ENVELOPE`)
        assert.equal(caught.reason, 'malformed', `${what}: ${caught.message}`)
      }
    })

    it('a non-Ed25519 or garbage signer field → bad-signer', async () => {
      const secp = peerIdFromPrivateKey(await generateKeyPair('secp256k1'))
      const err = expectEnvelopeError(() => openEnvelope(reencode(sealed, { signer: secp.toMultihash().bytes }), { domain: DOMAIN }), 'bad-signer')
      assert.match(err.message, /secp256k1/)
      // an RSA-style peer id: a sha2-256 multihash (0x12 0x20 + 32 bytes), which carries no public key
      const rsaLike = new Uint8Array([0x12, 0x20, ...createHash('sha256').update('rsa').digest()])
      expectEnvelopeError(() => openEnvelope(reencode(sealed, { signer: rsaLike }), { domain: DOMAIN }), 'bad-signer')
      // empty, random, and over-long signer fields
      expectEnvelopeError(() => openEnvelope(reencode(sealed, { signer: new Uint8Array(0) }), { domain: DOMAIN }), 'bad-signer')
      expectEnvelopeError(() => openEnvelope(reencode(sealed, { signer: Uint8Array.of(0xde, 0xad, 0xbe, 0xef, 0x01) }), { domain: DOMAIN }), 'bad-signer')
      expectEnvelopeError(() => openEnvelope(reencode(sealed, { signer: new Uint8Array([...alice.peerId.toMultihash().bytes, ...new Uint8Array(40)]) }), { domain: DOMAIN }), 'bad-signer')
      // an identity multihash one byte short of an Ed25519 peer id
      expectEnvelopeError(() => openEnvelope(reencode(sealed, { signer: alice.peerId.toMultihash().bytes.subarray(0, 37) }), { domain: DOMAIN }), 'bad-signer')
    })

    it('a forged envelope under a small-order (identity-point) signer is rejected, though a lenient (ZIP-215) verifier accepts it', () => {
      // A peer id can be built around the identity point: with R = identity and S = 0 the
      // cofactorless equation [S]B = R + [k]A holds for every message.
      const identity = toLE32(1n)
      const weakPeer = peerIdFromPublicKey(publicKeyFromRaw(identity))
      assert.equal(weakPeer.type, 'Ed25519')
      const forgedSig = new Uint8Array(64)
      forgedSig.set(identity, 0)
      const forgedPayload = text('I owe you nothing')
      assert.ok(zip215Verify(identity, signingInput(DOMAIN, forgedPayload), forgedSig), 'a lenient verifier accepts this forgery')
      const forged = SignedEnvelope.encode({
        domain: DOMAIN,
        signer: weakPeer.toMultihash().bytes,
        payload: forgedPayload,
        signature: forgedSig
      })
      expectEnvelopeError(() => openEnvelope(forged, { domain: DOMAIN }), 'bad-signature')
    })
  })
})

describe('identity: openEnvelopeAsync (the fast verifier) opens exactly what openEnvelope opens', () => {
  let alice: Signer
  let bob: Signer

  before(async () => {
    alice = await newSigner()
    bob = await newSigner()
  })

  /** What each opener says about `bytes`: its rejection reason, or 'opens'. */
  async function outcomes (bytes: Uint8Array, opts: OpenOptions): Promise<{ sync: string, async: string }> {
    const reasonOf = (err: unknown): string => {
      assert.ok(isEnvelopeError(err), `an ERR_ENVELOPE, not ${String(err)}`)
      return err.reason
    }
    let sync = 'opens'
    try { openEnvelope(bytes, opts) } catch (err) { sync = reasonOf(err) }
    let later = 'opens'
    try {
      const opened = await openEnvelopeAsync(bytes, opts)
      assert.deepEqual(opened.payload, SignedEnvelope.decode(bytes).payload)
    } catch (err) { later = reasonOf(err) }
    return { sync, async: later }
  }

  it('the same verdict and reason on valid, tampered, forged, misaddressed, oversized and garbage envelopes', async () => {
    const payload = text('the payload as signed')
    const sealed = sealEnvelope(alice.key, alice.peerId, DOMAIN, payload)
    const sig = SignedEnvelope.decode(sealed).signature
    const flipped = Uint8Array.from(sig)
    flipped[40] ^= 0x04
    const secp = peerIdFromPrivateKey(await generateKeyPair('secp256k1'))
    const cases: Array<[string, Uint8Array, OpenOptions, string]> = [
      ['valid', sealed, { domain: DOMAIN }, 'opens'],
      ['valid, expected signer', sealed, { domain: DOMAIN, signer: alice.peerId }, 'opens'],
      ['tampered payload', reencode(sealed, { payload: text('another payload') }), { domain: DOMAIN }, 'bad-signature'],
      ['flipped signature bit', reencode(sealed, { signature: flipped }), { domain: DOMAIN }, 'bad-signature'],
      ['short signature', reencode(sealed, { signature: sig.subarray(0, 63) }), { domain: DOMAIN }, 'bad-signature'],
      ['signed by bob as alice', sealEnvelope(bob.key, alice.peerId, DOMAIN, payload), { domain: DOMAIN }, 'bad-signature'],
      ['another expected signer', sealed, { domain: DOMAIN, signer: bob.peerId }, 'wrong-signer'],
      ['wrong domain', sealed, { domain: 'bid' }, 'wrong-domain'],
      ['secp256k1 signer', reencode(sealed, { signer: secp.toMultihash().bytes }), { domain: DOMAIN }, 'bad-signer'],
      ['over the bound', sealed, { domain: DOMAIN, maxBytes: sealed.byteLength - 1 }, 'oversized'],
      ['garbage', new Uint8Array(16).fill(0xff), { domain: DOMAIN }, 'malformed']
    ]
    for (const [what, bytes, opts, expected] of cases) {
      assert.deepEqual(await outcomes(bytes, opts), { sync: expected, async: expected }, what)
    }
  })

  it('openEnvelopeUnverified skips only the signature check (for callers that verify it themselves, with verifyOpenedAsync)', async () => {
    const sealed = sealEnvelope(alice.key, alice.peerId, DOMAIN, text('x'))
    const bad = Uint8Array.from(SignedEnvelope.decode(sealed).signature)
    bad[0] ^= 0x01
    const tampered = reencode(sealed, { signature: bad })
    await assert.rejects(openEnvelopeAsync(tampered, { domain: DOMAIN }), (err: EnvelopeRefusal) => err.reason === 'bad-signature')
    const opened = openEnvelopeUnverified(tampered, { domain: DOMAIN })
    assert.ok(opened.signer.equals(alice.peerId))
    assert.equal(await verifyOpenedAsync(opened), false, 'the skipped check is still the caller\'s to make')
    assert.equal(await verifyOpenedAsync(openEnvelopeUnverified(sealed, { domain: DOMAIN })), true)
    assert.throws(() => openEnvelopeUnverified(tampered, { domain: 'bid' }), (err: EnvelopeRefusal) => err.reason === 'wrong-domain')
    assert.throws(() => openEnvelopeUnverified(reencode(sealed, { signature: bad.subarray(0, 10) }), { domain: DOMAIN }), (err: EnvelopeRefusal) => err.reason === 'bad-signature')
  })
})

describe('identity: signBytes / verifyNobleSync (strict RFC 8032)', () => {
  it('signBytes gives byte-identical signatures to the libp2p key\'s sign()', async () => {
    for (let i = 0; i < 5; i++) {
      const key = await generateKeyPair('Ed25519')
      const message = rand(i * 37)
      const ours = signBytes(key.raw, message)
      assert.deepEqual(ours, new Uint8Array(await key.sign(message)))
      // the seed alone (the first 32 bytes of raw) gives the same signature
      assert.deepEqual(signBytes(key.raw.subarray(0, 32), message), ours)
      assert.ok(verifyNobleSync(key.publicKey.raw, message, ours))
      assert.ok(await key.publicKey.verify(message, ours), 'libp2p verifies our signature')
    }
  })

  it('rejects wrong-length keys and signatures without throwing', async () => {
    const key = await generateKeyPair('Ed25519')
    const message = text('m')
    const sig = signBytes(key.raw, message)
    assert.ok(verifyNobleSync(key.publicKey.raw, message, sig))
    assert.equal(verifyNobleSync(key.publicKey.raw.subarray(0, 31), message, sig), false)
    assert.equal(verifyNobleSync(new Uint8Array([...key.publicKey.raw, 0]), message, sig), false)
    assert.equal(verifyNobleSync(key.publicKey.raw, message, sig.subarray(0, 63)), false)
    assert.equal(verifyNobleSync(key.publicKey.raw, message, new Uint8Array([...sig, 0])), false)
    assert.equal(verifyNobleSync(key.publicKey.raw, message, new Uint8Array(0)), false)
    // a 32-byte string that is not a curve point
    let notAPoint: Uint8Array | undefined
    for (let y = 2n; notAPoint == null; y++) {
      const candidate = toLE32(y)
      try { ed.Point.fromBytes(candidate) } catch { notAPoint = candidate }
    }
    assert.equal(verifyNobleSync(notAPoint, message, sig), false)
  })

  it('(a) RFC 8032 test vector 1 verifies', () => {
    const secret = unhex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60')
    const publicKey = unhex('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a')
    const signature = unhex('e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b')
    const message = new Uint8Array(0)
    // the typed hex is checked by computation: the secret derives the public key and signs to the signature
    assert.equal(hex(ed.getPublicKey(secret)), hex(publicKey))
    assert.equal(hex(signBytes(secret, message)), hex(signature))
    assert.equal(verifyNobleSync(publicKey, message, signature), true)
    assert.equal(opensslVerify(publicKey, message, signature), true)
    assert.equal(verifyNobleSync(publicKey, Uint8Array.of(0), signature), false, 'a non-empty message does not verify')
  })

  it('(b) rejects a non-canonical S (S + L), as OpenSSL does', async () => {
    for (let i = 0; i < 8; i++) {
      const key = await generateKeyPair('Ed25519')
      const message = rand(20)
      const sig = signBytes(key.raw, message)
      const S = fromLE(sig.subarray(32))
      assert.ok(S < L, 'a fresh signature has a canonical S')
      const malleated = new Uint8Array(64)
      malleated.set(sig.subarray(0, 32), 0)
      malleated.set(toLE32(S + L), 32)
      assert.notDeepEqual(malleated, sig)
      // [S + L]B = [S]B, so the group equation still holds: only the S < L range check rejects it
      assert.equal(verifyNobleSync(key.publicKey.raw, message, sig), true)
      assert.equal(verifyNobleSync(key.publicKey.raw, message, malleated), false)
      assert.equal(opensslVerify(key.publicKey.raw, message, malleated), false)
      assert.equal(opensslVerify(key.publicKey.raw, message, sig), true)
    }
  })

  describe('(c) small-order public keys', () => {
    /** the 8 points of the torsion subgroup, computed: T of order 8, then 0..7 T */
    function torsionPoints (): Uint8Array[] {
      let T: ed.Point | undefined
      for (let i = 0; T == null; i++) {
        const candidate = sha512(Uint8Array.of(i)).slice(0, 32)
        candidate[31] &= 0x7f
        let point: ed.Point
        try { point = ed.Point.fromBytes(candidate) } catch { continue }
        const torsion = point.multiply(L - 1n, false).add(point) // [L]P: the torsion component of P
        if (!torsion.multiply(4n, false).is0()) T = torsion
      }
      assert.ok(T.multiply(8n, false).is0(), 'T has order 8')
      const points: Uint8Array[] = []
      let acc = ed.Point.ZERO
      for (let i = 0; i < 8; i++) {
        points.push(acc.toBytes())
        acc = acc.add(T)
      }
      assert.equal(new Set(points.map(hex)).size, 8)
      return points
    }

    it('the identity point with R = identity, S = 0 (valid for any message, cofactorless) is rejected', () => {
      const A = toLE32(1n)
      assert.equal(hex(A), '01' + '00'.repeat(31))
      const sig = new Uint8Array(64)
      sig.set(A, 0) // R = identity, S = 0
      for (const message of [new Uint8Array(0), text('pay me'), rand(100)]) {
        // the cofactorless equation [S]B = R + [k]A holds
        const k = fromLE(sha512(sig.subarray(0, 32), A, message)) % L
        const R = ed.Point.fromBytes(sig.subarray(0, 32))
        const lhs = ed.Point.BASE.multiply(0n, false)
        assert.ok(lhs.equals(R.add(ed.Point.fromBytes(A).multiply(k, false))), 'equation holds')
        assert.ok(zip215Verify(A, message, sig), 'a lenient verifier accepts it')
        assert.equal(verifyNobleSync(A, message, sig), false)
      }
    })

    it('every small-order key (the 8-torsion) is rejected for a signature the cofactored equation accepts', () => {
      const points = torsionPoints()
      // libsodium's well-known order-8 point is among them (checks the computation above)
      assert.ok(points.map(hex).includes('26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05'))
      for (const A of points) {
        assert.ok(ed.Point.fromBytes(A).isSmallOrder())
        const sig = new Uint8Array(64)
        sig.set(toLE32(1n), 0) // R = identity, S = 0: [8][S]B = [8]R + [8][k]A holds for every k
        const message = rand(16)
        assert.ok(zip215Verify(A, message, sig), `lenient verifier accepts ${hex(A)}`)
        assert.equal(verifyNobleSync(A, message, sig), false, `small-order key ${hex(A)}`)
      }
    })
  })

  describe('(d) non-canonical encodings', () => {
    it('rejects public keys encoded with y >= p', () => {
      // y = p (0xedff…ff7f) decodes leniently as y = 0; y = p + 1 (0xeeff…ff7f) as y = 1 (the identity)
      const yP = toLE32(P)
      assert.equal(hex(yP), 'ed' + 'ff'.repeat(30) + '7f')
      const yP1 = toLE32(P + 1n)
      assert.equal(hex(yP1), 'ee' + 'ff'.repeat(30) + '7f')
      const sig = new Uint8Array(64)
      sig.set(toLE32(1n), 0)
      for (const A of [yP, yP1]) {
        assert.throws(() => ed.Point.fromBytes(A, false), 'not a canonical encoding')
        const message = text('non-canonical key')
        assert.ok(zip215Verify(A, message, sig), `a lenient verifier accepts key ${hex(A)}`)
        assert.equal(verifyNobleSync(A, message, sig), false, `non-canonical key ${hex(A)}`)
      }
      // the sign bit set on x = 0 (0x0100…0080): another non-canonical identity
      const negZero = toLE32(1n)
      negZero[31] |= 0x80
      assert.ok(zip215Verify(negZero, text('m'), sig))
      assert.equal(verifyNobleSync(negZero, text('m'), sig), false)
    })

    it('rejects a non-canonical R with a real key, while the canonical R of the same signature verifies', async () => {
      // With a real (large-order) key, R = identity and S = k·a is a valid strict signature
      // (the cofactorless equation holds exactly); encoding the same R non-canonically
      // (y = p + 1) must make it fail, which isolates the canonical-encoding check.
      const key = await generateKeyPair('Ed25519')
      const seed = key.raw.subarray(0, 32)
      const A = key.publicKey.raw
      const { scalar: a } = ed.utils.getExtendedPublicKey(seed)
      assert.equal(ed.Point.fromBytes(A).isSmallOrder(), false)
      const message = text('R is the identity')
      const sigWith = (R: Uint8Array): Uint8Array => {
        const k = fromLE(sha512(R, A, message)) % L
        return new Uint8Array([...R, ...toLE32((k * a) % L)])
      }
      const canonical = sigWith(toLE32(1n))
      assert.equal(verifyNobleSync(A, message, canonical), true, 'canonical identity R verifies')
      assert.equal(opensslVerify(A, message, canonical), true, 'and OpenSSL agrees')

      const nonCanonical = sigWith(toLE32(P + 1n))
      assert.ok(zip215Verify(A, message, nonCanonical), 'a lenient verifier accepts the non-canonical R')
      assert.equal(verifyNobleSync(A, message, nonCanonical), false)
      assert.equal(opensslVerify(A, message, nonCanonical), false, 'OpenSSL rejects it too')
    })
  })

  it('(e) agrees with Node\'s crypto.verify (OpenSSL) on 50 random keys and messages, and on tampered ones', () => {
    for (let i = 0; i < 50; i++) {
      const { publicKey, privateKey } = generateKeyPairSync('ed25519')
      const jwk = privateKey.export({ format: 'jwk' })
      assert.ok(jwk.d != null && jwk.x != null)
      const seed = new Uint8Array(Buffer.from(jwk.d, 'base64url'))
      const pub = new Uint8Array(Buffer.from(jwk.x, 'base64url'))
      const message = rand(i * 13)
      const sig = signBytes(seed, message)
      assert.deepEqual(sig, new Uint8Array(nodeSign(null, message, privateKey)), 'deterministic signatures match OpenSSL')
      assert.equal(verifyNobleSync(pub, message, sig), true)
      assert.equal(nodeVerify(null, message, publicKey, sig), true)
      assert.equal(opensslVerify(pub, message, sig), true)

      const tampered: Array<[string, Uint8Array, Uint8Array, Uint8Array]> = []
      const badMsg = new Uint8Array([...message, i & 0xff])
      tampered.push(['message', pub, badMsg, sig])
      const badR = Uint8Array.from(sig); badR[i % 32] ^= 1 << (i % 8)
      tampered.push(['R', pub, message, badR])
      const badS = Uint8Array.from(sig); badS[32 + (i % 31)] ^= 1 << (i % 8)
      tampered.push(['S', pub, message, badS])
      const badPub = Uint8Array.from(pub); badPub[i % 31] ^= 1 << (i % 8)
      tampered.push(['public key', badPub, message, sig])
      for (const [what, k, m, s] of tampered) {
        const ours = verifyNobleSync(k, m, s)
        let theirs: boolean
        try { theirs = opensslVerify(k, m, s) } catch { theirs = false } // OpenSSL may refuse a non-point key
        assert.equal(ours, false, `tampered ${what} (#${i}) rejected by verifyNobleSync`)
        assert.equal(theirs, ours, `tampered ${what} (#${i}): verifiers agree`)
      }
    }
  })
})
