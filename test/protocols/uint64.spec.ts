import * as assert from 'node:assert/strict'
import { JobFrame } from '../../protocols/job.js'
import { libraryEncodingOf } from '../../protocols/uint64.js'
import { decodeBounded, MAX_BYTES } from '../../protocols/codec.js'

// protons-runtime 5.6.0 garbles a uint64 in [2^31, 2^32) on encode; protocols/uint64.ts
// repairs its writer. A 3 GiB file's size, an offset past 2 GiB: both must go out exact.

/** The varint of `value` written by hand (LEB128). */
function varint (value: bigint): number[] {
  const out: number[] = []
  do {
    const low = Number(value & 0x7fn)
    value >>= 7n
    out.push(value > 0n ? low | 0x80 : low)
  } while (value > 0n)
  return out
}

describe('protocols: uint64 values in [2^31, 2^32) are encoded exactly (protons-runtime repair)', () => {
  const values = [
    2n ** 31n - 1n,
    2n ** 31n,
    2n ** 31n + 12_345n,
    3n * 2n ** 30n,
    2n ** 32n - 1n,
    2n ** 32n,
    2n ** 53n + 1n,
    2n ** 64n - 1n
  ]

  it('every generated encoder writes them as their varint and decodes them back', () => {
    for (const at of values) {
      const bytes = JobFrame.encode({ accepted: { at } })
      const inner = [0x08, ...varint(at)]
      assert.deepEqual([...bytes], [0x22, inner.length, ...inner], `JobFrame.accepted.at = ${at}`)
      assert.equal(decodeBounded(JobFrame, bytes, 'job frame', MAX_BYTES.jobFrame).accepted?.at, at)
    }
  })

  it('the library alone still writes 2^31 wrong (when this fails, protons-runtime is fixed: drop protocols/uint64.ts)', () => {
    assert.notDeepEqual([...libraryEncodingOf(2n ** 31n)], varint(2n ** 31n))
  })
})
