/**
 * The hex text every map and log uses (toHex) and the two hashes every synced entry is named by
 * (sha256, messageHash): the same text and digests whatever array they are given (a view at an
 * offset into a larger buffer, a small array still on V8's heap, a Buffer, nothing at all).
 */
import * as assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { toHex } from '../../src/common/index.js'
import { messageHash, sha256 } from '../../src/identity/index.js'
import { signingInput } from '../../src/identity/envelope.js'

/** What toHex must equal: Node's documented hex encoding of the same bytes. */
const documentedHex = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')

describe('common: toHex, and the hashes ids are made of', () => {
  it('toHex writes lower-case hex of exactly the view: at an offset, on the heap, a Buffer, empty', () => {
    const large = new Uint8Array(randomBytes(300))
    const cases = [
      large.subarray(7, 39),
      large.subarray(299),
      Uint8Array.of(0, 1, 0x7f, 0x80, 0xfe, 0xff),
      new Uint8Array(32).fill(0xab),
      randomBytes(48),
      new Uint8Array(0),
      large.subarray(5, 5)
    ]
    for (const bytes of cases) assert.equal(toHex(bytes), documentedHex(bytes))
    assert.equal(toHex(Uint8Array.of(0, 0x0a, 0xff)), '000aff')
  })

  it('sha256 gives the FIPS 180-2 digests, of bytes and of text, as a plain array of 32 bytes of its own', () => {
    const abc = sha256(new TextEncoder().encode('abc'))
    assert.equal(toHex(abc), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    assert.equal(toHex(sha256('abc')), toHex(abc))
    assert.equal(toHex(sha256(new Uint8Array(0))), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
    assert.equal(Object.getPrototypeOf(abc), Uint8Array.prototype)
    assert.equal(abc.byteLength, 32)
    assert.equal(abc.buffer.byteLength, 32)
    // every byte value comes back as itself (digests are read back from one-byte-a-character text)
    for (let i = 0; i < 64; i++) {
      const input = new Uint8Array(randomBytes(1 + i * 17)).subarray(i % 3)
      assert.equal(toHex(sha256(input)), createHash('sha256').update(input).digest('hex'))
    }
  })

  it('messageHash is the sha256 of the bytes a signature covers (prefix, domain, 0x00, payload)', () => {
    for (const payload of [new Uint8Array(0), new Uint8Array(randomBytes(200)).subarray(3, 150), randomBytes(70_000)]) {
      const hash = messageHash('attestation', payload)
      assert.equal(toHex(hash), createHash('sha256').update(signingInput('attestation', payload)).digest('hex'))
      assert.equal(Object.getPrototypeOf(hash), Uint8Array.prototype)
    }
  })
})
