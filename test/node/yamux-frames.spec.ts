/**
 * Large yamux data frames in pieces (src/node/streams/yamux-frames.ts) between two real libp2p nodes on
 * 127.0.0.1 (TCP, TLS): bulk data and small messages arrive whole and in order, and the bulk
 * data reaches the encrypter without the copy @libp2p/tls makes of a frame given as one list of
 * header and data (counted where it happens: Uint8ArrayList.subarray() of a list of pieces).
 */
import * as assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { yamux } from '@chainsafe/libp2p-yamux'
import { tcp } from '@libp2p/tcp'
import { tls } from '@libp2p/tls'
import { createLibp2p, type Libp2p } from 'libp2p'
import { Uint8ArrayList } from 'uint8arraylist'
import { LARGE_FRAME_BYTES, largeFramesInPieces } from '../../src/node/streams/yamux-frames.js'

const PROTOCOL = '/idlegrid-test/yamux-frames/1.0.0'
const MiB = 1024 * 1024

async function node (inPieces: boolean): Promise<Libp2p> {
  return await createLibp2p({
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    connectionEncrypters: [tls()],
    streamMuxers: [inPieces ? largeFramesInPieces(yamux({ maxMessageSize: MiB })) : yamux({ maxMessageSize: MiB })]
  })
}

/** Copies of a list of several pieces into one buffer (no arguments: the whole list) of at least LARGE_FRAME_BYTES. */
function countListCopies (): { stop: () => number } {
  const original = Uint8ArrayList.prototype.subarray
  let copies = 0
  Uint8ArrayList.prototype.subarray = function (this: Uint8ArrayList, ...args: [number?, number?]) {
    if (args.length === 0 && this.byteLength >= LARGE_FRAME_BYTES && [...this].length > 1) copies++
    return original.apply(this, args)
  }
  return { stop: () => { Uint8ArrayList.prototype.subarray = original; return copies } }
}

/** Sends 8 MiB in 1 MiB writes and a few small messages between them; the receiver's digest, and the copies made. */
async function exchange (inPieces: boolean): Promise<{ sent: string, received: string, copies: number }> {
  const [a, b] = await Promise.all([node(inPieces), node(inPieces)])
  try {
    const received = new Promise<string>((resolve, reject) => {
      void b.handle(PROTOCOL, ({ stream }) => {
        void (async () => {
          const hash = createHash('sha256')
          for await (const chunk of stream.source) for (const piece of chunk) hash.update(piece)
          resolve(hash.digest('hex'))
          await stream.close()
        })().catch(reject)
      })
    })
    await a.dial(b.getMultiaddrs()[0])
    const stream = await a.dialProtocol(b.peerId, PROTOCOL)
    const writes: Uint8Array[] = []
    for (let i = 0; i < 8; i++) writes.push(randomBytes(MiB), randomBytes(1 + i * 100))
    const sent = createHash('sha256')
    for (const w of writes) sent.update(w)
    const counter = countListCopies()
    try {
      await stream.sink((async function * () { yield * writes })())
      return { sent: sent.digest('hex'), received: await received, copies: counter.stop() }
    } finally {
      counter.stop()
    }
  } finally {
    await Promise.all([a.stop(), b.stop()])
  }
}

describe('node: large yamux frames in pieces', function () {
  this.timeout(60_000)

  it('bulk data and small messages arrive whole, and no large frame is copied into one buffer on its way to TLS', async () => {
    const result = await exchange(true)
    assert.equal(result.received, result.sent)
    assert.equal(result.copies, 0)
  })

  it('(the copy it saves: plain yamux hands TLS each large frame as one list, copied whole)', async () => {
    const result = await exchange(false)
    assert.equal(result.received, result.sent)
    assert.ok(result.copies >= 8, `${result.copies} copies of 8 MiB sent in 1 MiB writes`)
  })
})
