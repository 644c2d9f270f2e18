/**
 * The serve stream's framing on its own (src/serve/wire.ts), over an in-memory stream: frames
 * split anywhere or several to a chunk, and what a hostile peer can send instead: a length past
 * the frame bound (refused on the prefix, before its bytes come), an endless length prefix,
 * bytes that are no ServeFrame, a frame with no member, a stream that ends inside a frame,
 * silence.
 */
import * as assert from 'node:assert/strict'
import { ServeFrame } from '../../protocols/serve.js'
import { isStreamError, type ServeStreamError } from '../../src/serve/errors.js'
import { MAX_SERVE_FRAME_BYTES, ServeChannel } from '../../src/serve/wire.js'
import { recordAttack } from '../utils/index.js'
import type { Stream } from '@libp2p/interface'

function prefixed (bytes: Uint8Array): Uint8Array {
  const prefix: number[] = []
  let n = bytes.byteLength
  while (n >= 0x80) { prefix.push((n & 0x7f) | 0x80); n = Math.floor(n / 0x80) }
  prefix.push(n)
  return Uint8Array.from([...prefix, ...bytes])
}

/** A stream whose source yields `chunks`, then ends (or stays silent with `hang`); what is written is kept. */
function memoryStream (chunks: Uint8Array[], opts: { hang?: boolean } = {}): Stream & { written: Uint8Array[] } {
  const written: Uint8Array[] = []
  return {
    written,
    status: 'open',
    readStatus: 'ready',
    writeStatus: 'ready',
    source: (async function * () {
      for (const c of chunks) yield c
      if (opts.hang === true) await new Promise(() => {})
    })(),
    sink: async (source: AsyncIterable<Uint8Array>) => { for await (const c of source) written.push(c) },
    abort: () => {},
    close: async () => {}
  } as any
}

async function refusal (p: Promise<unknown>): Promise<ServeStreamError> {
  const err = await p.then(() => undefined, (e: unknown) => e)
  assert.ok(isStreamError(err), `a ServeError ERR_SERVE_STREAM, got ${String(err)}`)
  return err
}

describe('serve: stream framing (wire.ts)', () => {
  const head = ServeFrame.encode({ response: { status: 200, headers: [{ name: 'content-type', value: 'text/plain' }], draining: false } })
  const body = ServeFrame.encode({ body: { data: new Uint8Array(300).fill(7) } })
  const end = ServeFrame.encode({ end: {} })

  it('reads frames split at any byte or several to a chunk, then a clean end; sends frames it reads back the same', async () => {
    const all = Uint8Array.from([...prefixed(head), ...prefixed(body), ...prefixed(end)])
    for (const cut of [1, 2, 3, 50, all.byteLength - 1]) {
      const ch = new ServeChannel(memoryStream([all.subarray(0, cut), all.subarray(cut)]), 1_000)
      assert.equal((await ch.next())?.response?.status, 200)
      assert.deepEqual((await ch.next())?.body?.data, new Uint8Array(300).fill(7))
      assert.ok((await ch.next())?.end != null)
      assert.equal(await ch.next(), undefined)
    }
    const byteByByte = new ServeChannel(memoryStream([...all].map(b => Uint8Array.of(b))), 1_000)
    assert.equal((await byteByByte.next())?.response?.status, 200)
    const stream = memoryStream([])
    const out = new ServeChannel(stream, 1_000)
    out.send({ response: { status: 200, headers: [{ name: 'content-type', value: 'text/plain' }], draining: false } })
    out.send({ end: {} })
    await out.end()
    assert.deepEqual(Buffer.concat(stream.written), Buffer.from([...prefixed(head), ...prefixed(end)]), 'head and End in one write, End the same bytes as encoded')
    assert.equal(stream.written.length, 1)
  })

  it('tryNext takes the frames already here whole without a wait (an answer\'s body and End with its head), and nothing of a frame still coming', async () => {
    const all = Uint8Array.from([...prefixed(head), ...prefixed(body), ...prefixed(end)])
    const ch = new ServeChannel(
      memoryStream([all.subarray(0, all.byteLength - 1), all.subarray(all.byteLength - 1)]),
      1_000
    )
    assert.equal(ch.tryNext(), undefined, 'nothing read yet')
    assert.equal((await ch.next())?.response?.status, 200)
    assert.deepEqual(ch.tryNext()?.body?.data, new Uint8Array(300).fill(7), 'the body came in the same read')
    assert.equal(ch.tryNext(), undefined, 'End is one byte short: not taken')
    assert.ok((await ch.next())?.end != null)
    const garbage = new ServeChannel(
      memoryStream([Uint8Array.from([...prefixed(head), ...prefixed(Uint8Array.of(0xff, 0xff))])]),
      1_000
    )
    assert.equal((await garbage.next())?.response?.status, 200)
    assert.throws(() => garbage.tryNext(), (e: unknown) => isStreamError(e) && e.wireCode === 'PROTOCOL', 'a bad frame taken at once is the same typed error')
  })

  it('red team: a length past the frame bound is refused on its prefix, before its bytes come; an endless prefix too', async () => {
    const over = prefixed(new Uint8Array(MAX_SERVE_FRAME_BYTES + 1)).subarray(0, 3)
    const t0 = Date.now()
    // the stream then stays silent: waiting for the bytes would end in TIMEOUT, not TOO_LARGE
    const err = await refusal(new ServeChannel(memoryStream([over], { hang: true }), 2_000).next())
    const ms = Date.now() - t0
    assert.equal(err.wireCode, 'TOO_LARGE', err.message)
    const endless = await refusal(
      new ServeChannel(memoryStream([new Uint8Array(64).fill(0x80)], { hang: true }), 2_000).next()
    )
    assert.equal(endless.wireCode, 'TOO_LARGE', endless.message)
    const atBound = new ServeChannel(
      memoryStream([prefixed(ServeFrame.encode({ body: { data: new Uint8Array(64 * 1024) } }))]),
      1_000
    )
    assert.equal((await atBound.next())?.body?.data.byteLength, 64 * 1024, 'a full body chunk is within the bound')
    recordAttack({ issue: '17.3', attack: 'serve frame length past the bound / endless length prefix', got: `${err.wireCode} after ${ms} ms (no bytes awaited) / ${endless.wireCode}`, limit: `${MAX_SERVE_FRAME_BYTES}-byte frames, refused on the prefix` })
  })

  it('red team: bytes that are no ServeFrame, a frame with no member, a stream ending inside a frame, silence: typed errors', async () => {
    const garbage = await refusal(
      new ServeChannel(memoryStream([prefixed(Uint8Array.of(0xff, 0xff, 0xff))]), 1_000).next()
    )
    assert.equal(garbage.wireCode, 'PROTOCOL', garbage.message)
    const empty = await refusal(new ServeChannel(memoryStream([Uint8Array.of(0)]), 1_000).next())
    assert.equal(empty.wireCode, 'PROTOCOL', empty.message)
    assert.match(empty.message, /no known member/)
    const cut = await refusal(new ServeChannel(memoryStream([prefixed(body).subarray(0, 100)]), 1_000).next())
    assert.equal(cut.wireCode, 'UPSTREAM')
    assert.match(cut.message, /ended inside a frame/)
    const silent = await refusal(new ServeChannel(memoryStream([], { hang: true }), 50).next())
    assert.equal(silent.wireCode, 'TIMEOUT')
    const remote = await refusal(new ServeChannel(memoryStream([prefixed(ServeFrame.encode({ error: { code: ServeFrame.Error.Code.OVERLOADED, message: 'busy' } }))]), 1_000).next())
    assert.deepEqual([remote.wireCode, remote.remote, remote.message], ['OVERLOADED', true, 'busy'])
    recordAttack({ issue: '17.3', attack: 'serve stream: garbage frame / empty frame / cut frame / silence', got: `${garbage.wireCode} / ${empty.wireCode} / ${cut.wireCode} / ${silent.wireCode}`, limit: 'typed ServeError ERR_SERVE_STREAM, never a crash or a hang' })
  })
})
