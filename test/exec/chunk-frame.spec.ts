import { strict as assert } from 'node:assert'
import fc from 'fast-check'
import * as lp from 'it-length-prefixed'
import { Uint8ArrayList } from 'uint8arraylist'
import { decodeBounded } from '../../protocols/codec.js'
import { JobFrame } from '../../protocols/job.js'
import { decodeChunkFrame, encodeChunkFrame, type ChunkKind } from '../../src/exec/shared/chunk-frame.js'
import { isStreamError } from '../../src/exec/errors.js'
import { FrameChannel, MAX_FRAME_BYTES, type ReceivedFrame } from '../../src/exec/shared/job-stream.js'
import { recordAttack } from '../utils/index.js'

const kindArb = fc.constantFrom<ChunkKind>('inputChunk', 'outputChunk')
const pathArb = fc.oneof(fc.constant(''), fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }))
const offsetArb = fc.oneof(
  fc.constant(0n),
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  fc.bigInt({ min: 0n, max: 2n ** 40n })
)
const dataArb = fc.uint8Array({ maxLength: 3000 })

/** `bytes` cut into pieces at the given points, as a stream delivers them. */
function split (bytes: Uint8Array, cuts: number[]): Uint8ArrayList {
  const at = [...new Set(cuts.map(c => c % (bytes.byteLength + 1)))].sort((a, b) => a - b)
  const list = new Uint8ArrayList()
  let from = 0
  for (const to of [...at, bytes.byteLength]) {
    if (to > from) list.append(bytes.subarray(from, to))
    from = Math.max(from, to)
  }
  return list
}

/** The generic decode of a length-stripped frame, as FrameChannel did before chunk-frame.ts. */
function generic (body: Uint8Array): JobFrame {
  return decodeBounded(JobFrame, body, 'job frame', MAX_FRAME_BYTES)
}

/** A FrameChannel reading `bytes` in pieces of `size`. */
function channelOver (bytes: Uint8Array, size: number): FrameChannel {
  return new FrameChannel(
    {
      source: (async function * () {
        for (let at = 0; at < bytes.byteLength; at += size) yield bytes.subarray(at, at + size)
      })(),
      sink: async (source: AsyncIterable<unknown>) => { for await (const _ of source) { /* drained */ } },
      abort () {},
      close: async () => {}
    } as any,
    { idleMs: 5_000 }
  )
}

/** Length of the varint length prefix at the start of `bytes`. */
function varintBytes (bytes: Uint8Array): number {
  let n = 0
  while (((bytes[n] as number) & 0x80) !== 0) n++
  return n + 1
}

function bytesOf (data: Uint8Array | Uint8ArrayList): Uint8Array {
  return data instanceof Uint8Array ? data : data.subarray()
}

describe('exec: chunk frames without copies (chunk-frame.ts)', () => {
  it('encodes what the generated decoder reads back, byte for byte the generated encoding where that one is right, data not copied', () => {
    fc.assert(fc.property(kindArb, pathArb, offsetArb, dataArb, (kind, path, offset, data) => {
      const { framed, bodyBytes } = encodeChunkFrame(kind, path, offset, data)
      const mine = framed.subarray()
      const body = mine.subarray(mine.byteLength - bodyBytes)
      const back = generic(body)[kind] as JobFrame.InputChunk
      assert.deepEqual({ path: back.path, offset: back.offset, data: back.data }, { path, offset, data })
      const theirs = JobFrame.encode({ [kind]: { path, offset, data } })
      assert.deepEqual(mine, lp.encode.single(theirs).subarray())
      if (data.byteLength > 0) assert.equal([...framed].at(-1), data)
    }), { numRuns: 300 })
  })

  it('carries offsets in [2^31, 2^32) (files of 2 to 4 GiB), as the generated encoder does since protocols/uint64.ts', () => {
    for (const offset of [2n ** 31n, 2n ** 31n + 12345n, 2n ** 32n - 1n]) {
      assert.equal(JobFrame.decode(JobFrame.encode({ accepted: { at: offset } })).accepted?.at, offset)
      const { framed, bodyBytes } = encodeChunkFrame('outputChunk', 'big.bin', offset, new Uint8Array([1]))
      const mine = framed.subarray()
      assert.equal(generic(mine.subarray(mine.byteLength - bodyBytes)).outputChunk?.offset, offset)
    }
  })

  it('decodes what the generic decoder decodes, from any split of the frame, with the data in the pieces it came in', () => {
    fc.assert(
      fc.property(
        kindArb,
        pathArb,
        offsetArb,
        dataArb,
        fc.array(fc.nat(), { maxLength: 8 }),
        (kind, path, offset, data, cuts) => {
          const { framed, bodyBytes } = encodeChunkFrame(kind, path, offset, data)
          const body = framed.subarray().subarray(framed.byteLength - bodyBytes)
          const fast = decodeChunkFrame(split(body, cuts), MAX_FRAME_BYTES)
          const slow = generic(body)[kind] as JobFrame.InputChunk
          if (fast == null) {
            // only frames without data (an empty file's one chunk) go the generic way
            assert.equal(data.byteLength, 0)
            return
          }
          assert.equal(fast.kind, kind)
          assert.equal(fast.chunk.path, slow.path)
          assert.equal(fast.chunk.offset, slow.offset)
          assert.deepEqual(bytesOf(fast.chunk.data), slow.data)
        }
      ),
      { numRuns: 300 }
    )
  })

  it('red team: data cut into tiny slices of large buffers is copied once, not kept in pieces that hold the buffers', () => {
    const data = new Uint8Array(512).map((_, i) => i % 251)
    const { framed } = encodeChunkFrame('inputChunk', 'in.bin', 0n, data)
    const head = [...framed][0] as Uint8Array
    // each byte of data a slice of its own 16 KiB buffer (as tiny muxer frames inside TLS records would leave it)
    const sliced = new Uint8ArrayList(
      head.subarray(varintBytes(head)),
      ...Array.from(data, b => {
        const big = new Uint8Array(16 * 1024)
        big[7] = b
        return big.subarray(7, 8)
      })
    )
    const fast = decodeChunkFrame(sliced, MAX_FRAME_BYTES)
    assert.ok(fast != null)
    assert.ok(fast.chunk.data instanceof Uint8Array, 'copied into one buffer')
    assert.deepEqual(fast.chunk.data, data)
    recordAttack({ issue: '15.7', attack: 'chunk data in 1-byte slices of 16 KiB buffers (memory held by queued pieces)', got: `${fast.chunk.data.buffer.byteLength} bytes held for ${data.byteLength} of data`, limit: 'pieces holding > 2x their size are copied once' })
    // more than 1024 pieces, even of buffers their own size, are copied too (one hash and writev step each)
    const many = new Uint8Array(2000).fill(3)
    const manyHead = [...encodeChunkFrame('inputChunk', 'in.bin', 0n, many).framed][0] as Uint8Array
    const tiny = decodeChunkFrame(
      new Uint8ArrayList(manyHead.subarray(varintBytes(manyHead)), ...Array.from(many, b => Uint8Array.of(b))),
      MAX_FRAME_BYTES
    )
    assert.ok(tiny?.chunk.data instanceof Uint8Array)
    assert.deepEqual(tiny.chunk.data, many)
    // whole buffers, as TLS records arrive, stay in pieces
    const records = new Uint8ArrayList(head.subarray(varintBytes(head)), data.slice(0, 4096), data.slice(4096))
    assert.ok(decodeChunkFrame(records, MAX_FRAME_BYTES)?.chunk.data instanceof Uint8ArrayList)
  })

  it('leaves every other layout to the generic decoder: reordered, unknown or repeated fields, two members, trailing bytes', () => {
    const data = new Uint8Array([1, 2, 3, 4])
    const canonical = JobFrame.encode({ inputChunk: { path: 'a', offset: 5n, data } })
    assert.ok(decodeChunkFrame(new Uint8ArrayList(canonical), MAX_FRAME_BYTES) != null)
    const inner = (...fields: number[][]): Uint8Array => Uint8Array.from(fields.flat())
    const wrap = (tag: number, body: Uint8Array): Uint8Array => Uint8Array.from([tag, body.byteLength, ...body])
    const cases: Record<string, Uint8Array> = {
      'data before path': wrap(0x12, inner([0x1a, 4, 1, 2, 3, 4], [0x0a, 1, 0x61])),
      'unknown field': wrap(0x12, inner([0x0a, 1, 0x61], [0x20, 1], [0x1a, 4, 1, 2, 3, 4])),
      'data twice': wrap(0x12, inner([0x0a, 1, 0x61], [0x1a, 1, 9], [0x1a, 4, 1, 2, 3, 4])),
      'a second member': Uint8Array.from([...canonical, 0x1a, 0]),
      'trailing bytes in the chunk': wrap(0x12, inner([0x0a, 1, 0x61], [0x1a, 3, 1, 2, 3], [0x10, 1])),
      'a start frame': JobFrame.encode({ start: { award: data, jobRequest: data, inputs: [] } }),
      'a data length past the end': wrap(0x12, inner([0x0a, 1, 0x61], [0x1a, 9, 1, 2, 3, 4])),
      'an overlong varint': wrap(0x12, inner([0x0a, 1, 0x61], [0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], [0x1a, 4, 1, 2, 3, 4]))
    }
    for (const [name, bytes] of Object.entries(cases)) {
      assert.equal(decodeChunkFrame(new Uint8ArrayList(bytes), MAX_FRAME_BYTES), undefined, name)
    }
    // one over the bound is not read, whatever it holds
    assert.equal(decodeChunkFrame(new Uint8ArrayList(canonical), canonical.byteLength - 1), undefined)
  })

  it('FrameChannel gives the generic decoder\'s answer for those layouts, and a typed error for a broken one', async () => {
    const data = new Uint8Array([1, 2, 3, 4])
    const reordered = Uint8Array.from([0x12, 9, 0x1a, 4, 1, 2, 3, 4, 0x0a, 1, 0x61])
    const canonical = JobFrame.encode({ outputChunk: { path: 'out/x', offset: 7n, data } })
    const broken = Uint8Array.from([0x12, 9, 0x0a, 1, 0x61, 0x1a, 9, 1, 2, 3, 4])
    const stream = new Uint8ArrayList(...[reordered, canonical, broken].map(b => lp.encode.single(b)))
    const ch = channelOver(stream.subarray(), 3)
    const first = await ch.next() as ReceivedFrame
    assert.equal(first.inputChunk?.path, 'a')
    assert.deepEqual(bytesOf(first.inputChunk?.data ?? new Uint8Array()), data)
    const second = await ch.next() as ReceivedFrame
    assert.equal(second.outputChunk?.path, 'out/x')
    assert.equal(second.outputChunk?.offset, 7n)
    assert.deepEqual(bytesOf(second.outputChunk?.data ?? new Uint8Array()), data)
    await assert.rejects(ch.next(), (err: unknown) => isStreamError(err) && err.wireCode === 'PROTOCOL')
  })
})
