/**
 * The ledger store's key layout (src/ledger/store/keys.ts), built in place: the same bytes the
 * layout documents, seqs written big-endian (so keys sort by seq) and read back exactly, and a
 * value that is not a seq refused rather than wrapped.
 */
import * as assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { entryKey, hashKey, hashValue, headKey, headValue, proofKey, readHashValue, readHead, slashedKey, standingKey, authorOfKey } from '../../src/ledger/store/keys.js'

const author = new Uint8Array(randomBytes(38))
const hash = new Uint8Array(randomBytes(32))
/** seq as 8 bytes big-endian, the slow way the layout states it */
const be = (seq: number): number[] => {
  const out = new Uint8Array(8)
  new DataView(out.buffer).setBigUint64(0, BigInt(seq))
  return [...out]
}
const SEQS = [0, 1, 255, 256, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER]

describe('ledger: the store\'s keys', () => {
  it('every key and value has the documented bytes', () => {
    for (const seq of SEQS) {
      assert.deepEqual([...entryKey(author, seq)], [0x01, author.length, ...author, ...be(seq)])
      assert.deepEqual([...hashValue(author, seq)], [author.length, ...author, ...be(seq)])
      assert.deepEqual(
        [...headValue({ seq, hash, bytes: seq, base: seq })],
        [...be(seq), ...hash, ...be(seq), ...be(seq)]
      )
    }
    assert.deepEqual([...headKey(author)], [0x02, author.length, ...author])
    assert.deepEqual([...hashKey(hash)], [0x03, ...hash])
    assert.deepEqual([...slashedKey(author)], [0x04, author.length, ...author])
    assert.deepEqual([...proofKey(hash)], [0x05, ...hash])
    assert.deepEqual([...standingKey(author)], [0x06, author.length, ...author])
    assert.deepEqual([...authorOfKey(headKey(author))], [...author])
  })

  it('seqs read back exactly, and entry keys sort by seq', () => {
    for (const seq of SEQS) {
      const bytes = Math.max(0, seq - 1)
      const base = Math.max(1, seq)
      const head = readHead(headValue({ seq, hash, bytes, base }))
      assert.deepEqual({ ...head, hash: [...head.hash] }, { seq, hash: [...hash], bytes, base })
      const indexed = readHashValue(hashValue(author, seq))
      assert.deepEqual({ ...indexed, author: [...indexed.author] }, { author: [...author], seq })
    }
    const keys = SEQS.map(seq => Buffer.from(entryKey(author, seq)))
    assert.deepEqual([...keys].sort(Buffer.compare), keys)
  })

  it('a seq that is negative, fractional or past 2^53 is refused, not wrapped; a short value is refused', () => {
    for (const bad of [-1, 1.5, 2 ** 53, Number.NaN, Infinity]) {
      assert.throws(() => entryKey(author, bad), RangeError)
      assert.throws(() => headValue({ seq: 1, hash, bytes: bad, base: 1 }), RangeError)
      assert.throws(() => headValue({ seq: 1, hash, bytes: 0, base: bad }), RangeError)
    }
    assert.throws(() => readHashValue(hashValue(author, 1).subarray(0, 40)), RangeError)
  })

  it('a head written before feeds kept their base (or their bytes) reads as based at seq 1', () => {
    const full = headValue({ seq: 9, hash, bytes: 700, base: 5 })
    assert.deepEqual(
      { ...readHead(full.subarray(0, 48)), hash: undefined },
      { seq: 9, hash: undefined, bytes: 700, base: 1 }
    )
    assert.deepEqual(
      { ...readHead(full.subarray(0, 40)), hash: undefined },
      { seq: 9, hash: undefined, bytes: 0, base: 1 }
    )
  })
})
