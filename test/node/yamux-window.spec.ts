/**
 * Yamux window updates with hysteresis (src/node/yamux-window.ts) on real nodes on 127.0.0.1:
 * small request/answer traffic no longer draws one window update frame per data frame, and
 * bulk data written in small pieces still flows (a threshold the sender could be stalled by
 * would hang the 8 MiB copy).
 */
import * as assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { resolveConfig } from '../../src/config/config.js'
import { createNode, type IdlegridNode } from '../../src/node/create-node.js'
import { WINDOW_UPDATE_THRESHOLD } from '../../src/node/yamux-window.js'
import type { Stream } from '@libp2p/interface'
import { tempDir } from '../utils/index.js'

const ECHO = '/idlegrid-test/echo/1.0.0'
const SINK = '/idlegrid-test/sink/1.0.0'
/** yamux frame type of a window update (yamux spec, "Type field") */
const WINDOW_UPDATE = 1

interface FrameSender { sendFrame: (header: { type: number, flag: number }, body?: unknown) => void }

/** counts the window update frames without flags that `stream` sends */
function countWindowUpdates (stream: Stream): { count: number } {
  const counter = { count: 0 }
  const muxed = stream as unknown as FrameSender
  assert.equal(typeof muxed.sendFrame, 'function', 'the stream is a yamux stream')
  const send = muxed.sendFrame
  muxed.sendFrame = (header, body) => {
    if (header.type === WINDOW_UPDATE && header.flag === 0) counter.count++
    send(header, body)
  }
  return counter
}

describe('yamux window updates (src/node/yamux-window.ts)', function () {
  this.timeout(60_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  let a: IdlegridNode
  let b: IdlegridNode

  before(async () => {
    dir = await tempDir('idlegrid-yamux-')
    const start = async (name: string): Promise<IdlegridNode> => await createNode(resolveConfig({
      role: 'renter',
      flags: { dataDir: join(dir.path, name), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [] }
    }))
    a = await start('a')
    b = await start('b')
  })
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()])
    await dir.cleanup()
  })

  it('200 small round trips on one stream draw no window update frame from either side', async () => {
    let answerer: { count: number } | undefined
    await b.libp2p.handle(ECHO, ({ stream }) => {
      answerer = countWindowUpdates(stream)
      void stream.sink(stream.source)
    })
    const stream = await a.libp2p.dialProtocol(b.libp2p.getMultiaddrs(), ECHO)
    const asker = countWindowUpdates(stream)
    const rounds = 200
    const message = randomBytes(100)
    let echoed = 0
    const source = (async function * () {
      for (let i = 0; i < rounds; i++) {
        yield message
        // the next request only once this one's answer is read: request/answer, not a burst
        while (echoed < (i + 1) * message.length) await new Promise(resolve => setImmediate(resolve))
      }
    })()
    await Promise.all([
      stream.sink(source),
      (async () => { for await (const chunk of stream.source) echoed += chunk.byteLength })()
    ])
    assert.equal(echoed, rounds * message.length)
    // the library sent one per data frame read: 200 from each side
    assert.equal(asker.count, 0, 'window updates sent by the asker')
    assert.equal(answerer?.count, 0, 'window updates sent by the answerer')
  })

  it('8 MiB written in 1 KiB pieces arrives whole, with window updates only past the threshold', async () => {
    let received: Promise<{ bytes: number, digest: string, updates: number }> | undefined
    await b.libp2p.handle(SINK, ({ stream }) => {
      const updates = countWindowUpdates(stream)
      received = (async () => {
        const hash = createHash('sha256')
        let bytes = 0
        for await (const chunk of stream.source) {
          bytes += chunk.byteLength
          hash.update(chunk.subarray())
        }
        await stream.close()
        return { bytes, digest: hash.digest('hex'), updates: updates.count }
      })()
    })
    const total = 8 * 1024 * 1024
    const data = randomBytes(total)
    const stream = await a.libp2p.dialProtocol(b.libp2p.getMultiaddrs(), SINK)
    await stream.sink((function * () { for (let at = 0; at < total; at += 1024) yield data.subarray(at, at + 1024) })())
    assert.ok(received != null)
    const got = await received
    assert.equal(got.bytes, total)
    assert.equal(got.digest, createHash('sha256').update(data).digest('hex'))
    // at least one update per threshold's worth read (else the sender would have stalled), far fewer than the 8,192 pieces
    assert.ok(got.updates >= 1 && got.updates <= total / WINDOW_UPDATE_THRESHOLD + 1, `window updates: ${got.updates}`)
  })
})
