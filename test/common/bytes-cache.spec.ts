/**
 * The peer-id caches of envelopes and ledger entries (BytesKeyedCache): found by their bytes,
 * bounded in size, and a key made to share its last bytes with others only ever costs a bucket
 * of eight comparisons.
 */
import * as assert from 'node:assert/strict'
import { BytesKeyedCache } from '../../src/common/index.js'

function key (...bytes: number[]): Uint8Array {
  return Uint8Array.from(bytes)
}

describe('common: BytesKeyedCache', () => {
  it('finds a value by equal bytes, in another buffer, and nothing for bytes that differ', () => {
    const cache = new BytesKeyedCache<string>(10)
    cache.set(key(1, 2, 3, 4, 5), 'a')
    assert.equal(cache.get(key(1, 2, 3, 4, 5)), 'a')
    // the same last four bytes, another first one: its own key
    assert.equal(cache.get(key(9, 2, 3, 4, 5)), undefined)
    assert.equal(cache.get(key(2, 3, 4, 5)), undefined)
    assert.equal(cache.get(new Uint8Array(0)), undefined)
  })

  it('keeps a copy of the key: a view into a larger buffer is not held, and changing it changes nothing', () => {
    const cache = new BytesKeyedCache<string>(10)
    const buffer = new Uint8Array(1024).fill(7)
    const view = buffer.subarray(100, 138)
    cache.set(view, 'peer')
    buffer.fill(0)
    assert.equal(cache.get(view), undefined)
    assert.equal(cache.get(new Uint8Array(38).fill(7)), 'peer')
  })

  it('keys shorter than four bytes are kept apart by their length', () => {
    const cache = new BytesKeyedCache<number>(10)
    cache.set(key(), 0)
    cache.set(key(1), 1)
    cache.set(key(1, 1), 2)
    assert.deepEqual(
      [cache.get(key()), cache.get(key(1)), cache.get(key(1, 1)), cache.get(key(1, 1, 1))],
      [0, 1, 2, undefined]
    )
  })

  it('holds at most its limit, dropping the oldest', () => {
    const cache = new BytesKeyedCache<number>(100)
    for (let i = 0; i < 1000; i++) cache.set(key(i >> 8, i & 255, 0, 0, 1), i)
    assert.ok(cache.size <= 100)
    assert.equal(cache.get(key(0, 0, 0, 0, 1)), undefined)
    assert.equal(cache.get(key(999 >> 8, 999 & 255, 0, 0, 1)), 999)
  })

  it('red team: 10,000 keys that share their last four bytes leave a bucket of eight, the newest', () => {
    const cache = new BytesKeyedCache<number>(10_000)
    for (let i = 0; i < 10_000; i++) cache.set(key(i >> 8, i & 255, 9, 9, 9, 9), i)
    assert.equal(cache.size, 8)
    assert.equal(cache.get(key(9_999 >> 8, 9_999 & 255, 9, 9, 9, 9)), 9_999)
    assert.equal(cache.get(key(9_991 >> 8, 9_991 & 255, 9, 9, 9, 9)), undefined)
  })
})
