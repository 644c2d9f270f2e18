/**
 * The transport's socket duplex (socket-connection.ts) on a real TCP socket pair: what a turn
 * of the event loop writes goes out in one write (the socket is corked for the turn), nothing
 * stays corked after it, and bulk writes still wait for the socket to drain.
 */
import * as assert from 'node:assert/strict'
import { createServer, connect, type Server, type Socket } from 'node:net'
import { Uint8ArrayList } from 'uint8arraylist'
import { socketDuplex } from '../../src/transport/socket-connection.js'

async function socketPair (): Promise<{ client: Socket, server: Socket, listener: Server }> {
  const listener = createServer()
  await new Promise<void>(resolve => listener.listen(0, '127.0.0.1', resolve))
  const accepted = new Promise<Socket>(resolve => listener.once('connection', resolve))
  const client = connect((listener.address() as { port: number }).port, '127.0.0.1')
  await new Promise<void>(resolve => client.once('connect', resolve))
  return { client, server: await accepted, listener }
}

async function received (socket: Socket, bytes: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let got = 0
  return await new Promise(resolve => {
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk)
      got += chunk.byteLength
      if (got >= bytes) resolve(Buffer.concat(chunks))
    })
  })
}

describe('transport: a socket as a libp2p duplex', () => {
  let pair: Awaited<ReturnType<typeof socketPair>>
  beforeEach(async () => { pair = await socketPair() })
  afterEach(async () => {
    pair.client.destroy()
    pair.server.destroy()
    await new Promise(resolve => pair.listener.close(resolve))
  })

  it('frames written in one turn go out in one write, and nothing stays corked after the turn', async () => {
    const { client, server } = pair
    const writes: number[] = []
    // the socket's own batched write: one call for what the cork held
    const writev = (client as any)._writev.bind(client)
    ;(client as any)._writev = (chunks: Array<{ chunk: Buffer }>, cb: (err?: Error | null) => void) => {
      writes.push(chunks.length)
      writev(chunks, cb)
    }
    const write = (client as any)._write.bind(client)
    ;(client as any)._write = (chunk: Buffer, encoding: string, cb: (err?: Error | null) => void) => {
      writes.push(1)
      write(chunk, encoding, cb)
    }
    const duplex = socketDuplex(client, err => { throw err })
    const header = Uint8Array.of(0, 1, 0, 0, 0, 0, 0, 3, 0, 0, 0, 4)
    const body = Uint8Array.of(9, 9, 9, 9)
    const close = Uint8Array.of(0, 1, 0, 4, 0, 0, 0, 3, 0, 0, 0, 0)
    let corkedInTurn = -1
    const arrived = received(server, 28)
    const sunk = duplex.sink((async function * () {
      // a muxer frame as a list (header, body), then a close frame, in one turn
      yield new Uint8ArrayList(header, body)
      yield close
      corkedInTurn = client.writableCorked
      // the next frame comes a turn later
      await new Promise(resolve => setImmediate(resolve))
      yield Uint8Array.of(7)
    })())
    const bytes = await arrived
    assert.deepEqual([...bytes.subarray(0, 28)], [...header, ...body, ...close])
    assert.equal(corkedInTurn, 1, 'corked while the turn writes')
    assert.equal(writes[0], 3, 'the turn\'s three pieces went to the socket in one write')
    await new Promise(resolve => setImmediate(resolve))
    assert.equal(client.writableCorked, 0, 'uncorked once the turn is over')
    server.end()
    await sunk
    assert.equal(client.writableCorked, 0)
  })

  it('a bulk writer still waits for the socket to drain, and every byte arrives in order', async () => {
    const { client, server } = pair
    const duplex = socketDuplex(client, err => { throw err })
    const chunk = new Uint8Array(64 * 1024)
    const n = 256
    const arrived = received(server, n * chunk.byteLength + 1)
    let maxQueued = 0
    const sunk = duplex.sink((async function * () {
      for (let i = 0; i < n; i++) {
        chunk[0] = i & 0xff
        yield Uint8Array.from(chunk)
        maxQueued = Math.max(maxQueued, client.writableLength)
      }
      yield Uint8Array.of(255)
    })())
    const bytes = await arrived
    assert.equal(bytes.byteLength, n * chunk.byteLength + 1)
    for (let i = 0; i < n; i++) assert.equal(bytes[i * chunk.byteLength], i & 0xff)
    // the sink waits at the socket's high-water mark: the queue never holds the whole transfer
    assert.ok(maxQueued < 4 * 1024 * 1024, `queued at most ${maxQueued} bytes`)
    server.end()
    await sunk
  })
})
