/**
 * Lazy yamux window updates (src/node/streams/yamux-window.ts) between two real libp2p nodes on
 * 127.0.0.1 (TCP, TLS): small messages back and forth send no window updates until half the
 * initial window is owed, and bulk data both ways at once, read slowly, still arrives whole
 * (the sender's window always refills: no deadlock).
 */
import * as assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { tcp } from '@libp2p/tcp'
import { tls } from '@libp2p/tls'
import { createLibp2p, type Libp2p } from 'libp2p'
import { lazyWindowStats, lazyWindowYamux, WINDOW_UPDATE_THRESHOLD } from '../../src/node/streams/yamux-window.js'
import type { Stream } from '@libp2p/interface'
import type { Uint8ArrayList } from 'uint8arraylist'

const PROTOCOL = '/idlegrid-test/yamux-window/1.0.0'

async function node (init?: Parameters<typeof lazyWindowYamux>[0]): Promise<Libp2p> {
  return await createLibp2p({
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    connectionEncrypters: [tls()],
    streamMuxers: [lazyWindowYamux(init)]
  })
}

function sha256 (chunks: Uint8Array[]): string {
  const h = createHash('sha256')
  for (const c of chunks) h.update(c)
  return h.digest('hex')
}

/** Reads a stream to its end, `pauseMs` after each chunk; the digest of what came. */
async function readAll (stream: Stream, pauseMs: number): Promise<{ bytes: number, digest: string }> {
  const got: Uint8Array[] = []
  let bytes = 0
  for await (const chunk of stream.source as AsyncIterable<Uint8ArrayList>) {
    const data = chunk.subarray()
    got.push(data)
    bytes += data.byteLength
    if (pauseMs > 0) await new Promise(resolve => setTimeout(resolve, pauseMs))
  }
  return { bytes, digest: sha256(got) }
}

describe('node: lazy yamux window updates', function () {
  this.timeout(60_000)
  const nodes: Libp2p[] = []
  after(async () => { await Promise.all(nodes.splice(0).map(async n => { await n.stop() })) })

  async function pair (init?: Parameters<typeof lazyWindowYamux>[0]): Promise<[Libp2p, Libp2p]> {
    const a = await node(init)
    const b = await node(init)
    nodes.push(a, b)
    return [a, b]
  }

  it('small messages back and forth on one stream send no window update until half the initial window is owed', async () => {
    const [a, b] = await pair()
    // b answers each line with the same bytes
    await b.handle(PROTOCOL, ({ stream }) => { void stream.sink(stream.source) })
    const before = lazyWindowStats()
    const stream = await a.dialProtocol(b.getMultiaddrs(), PROTOCOL)
    const rounds = 200
    const message = randomBytes(100)
    const replies = stream.source[Symbol.asyncIterator]()
    const pushed: Uint8Array[] = []
    let wake: (() => void) | undefined
    let ended = false
    void stream.sink((async function * () {
      for (;;) {
        while (pushed.length > 0) yield pushed.shift() as Uint8Array
        if (ended) return
        await new Promise<void>(resolve => { wake = resolve })
      }
    })())
    for (let i = 0; i < rounds; i++) {
      pushed.push(message)
      wake?.()
      let got = 0
      while (got < message.byteLength) {
        const next = await replies.next()
        assert.equal(next.done, false, `the echo ended at round ${i}`)
        got += (next.value as Uint8ArrayList).byteLength
      }
    }
    ended = true
    wake?.()
    const after = lazyWindowStats()
    const bytesEachWay = rounds * message.byteLength
    assert.ok(after.streams - before.streams >= 2, 'both ends of the stream were tuned (yamux internals as expected)')
    assert.ok(after.skipped - before.skipped >= rounds, `reads that owed less than ${WINDOW_UPDATE_THRESHOLD} B sent nothing: ${after.skipped - before.skipped}`)
    // the stream's SYN and ACK carry flags and go out at once; 20 KB each way never reaches the threshold
    assert.ok(bytesEachWay < WINDOW_UPDATE_THRESHOLD)
    assert.ok(after.updates - before.updates <= 4, `window updates sent: ${after.updates - before.updates} (eager yamux: one per read, ${2 * rounds} or more)`)
    await stream.close()
  })

  for (const [name, init] of [['the default 256 KiB window', undefined], ['the nodes\' bulk window (16 MiB, 1 MiB messages)', { maxMessageSize: 1024 * 1024 + 64 * 1024, initialStreamWindowSize: 16 * 1024 * 1024, maxStreamWindowSize: 64 * 1024 * 1024 }]] as const) {
    it(`with ${name}: 8 MiB both ways at once on one stream, read slowly, arrives whole`, async () => {
      const [a, b] = await pair(init)
      const size = 8 * 1024 * 1024
      const chunk = 64 * 1024
      const payload = (): Uint8Array[] => Array.from({ length: size / chunk }, () => randomBytes(chunk))
      const fromA = payload()
      const fromB = payload()
      let heard: (got: Promise<{ bytes: number, digest: string }>) => void = () => {}
      const bGot = new Promise<{ bytes: number, digest: string }>(resolve => { heard = resolve })
      await b.handle(PROTOCOL, ({ stream }) => {
        heard(readAll(stream, 1))
        void stream.sink((async function * () { yield * fromB })())
      })
      const stream = await a.dialProtocol(b.getMultiaddrs(), PROTOCOL)
      const aGot = readAll(stream, 1)
      await stream.sink((async function * () { yield * fromA })())
      const [atA, atB] = await Promise.all([aGot, bGot])
      assert.deepEqual(atA, { bytes: size, digest: sha256(fromB) })
      assert.deepEqual(atB, { bytes: size, digest: sha256(fromA) })
    })
  }
})
