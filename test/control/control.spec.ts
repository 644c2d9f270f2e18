import * as assert from 'node:assert/strict'
import { stat } from 'node:fs/promises'
import { connect } from 'node:net'
import { join } from 'node:path'
import { isCoded } from '../../src/common/index.js'
import { callControl, ControlError, startControlServer, type ControlServer } from '../../src/control/index.js'
import { tempDir } from '../utils/index.js'

/** Sends raw text on the socket and collects reply lines until `count` arrive or the socket closes. */
async function raw (path: string, text: string, count: number): Promise<{ lines: string[], closed: boolean }> {
  return await new Promise(resolve => {
    const socket = connect(path)
    const lines: string[] = []
    let buffer = ''
    const done = (closed: boolean): void => { socket.destroy(); resolve({ lines, closed }) }
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      buffer += chunk
      const parts = buffer.split('\n')
      buffer = parts.pop() ?? ''
      lines.push(...parts)
      if (lines.length >= count) done(false)
    })
    socket.on('close', () => { done(true) })
    socket.on('error', () => {})
    socket.write(text)
  })
}

describe('control endpoint', function () {
  this.timeout(20_000)
  let dir: Awaited<ReturnType<typeof tempDir>>
  let server: ControlServer

  before(async () => {
    dir = await tempDir()
    server = await startControlServer(dir.path, {
      echo: async (params) => params,
      progress: async (_, emit) => { emit({ step: 1 }); emit({ step: 2 }); return 'done' },
      fail: async () => { throw Object.assign(new Error('it broke'), { code: 'ERR_BROKEN' }) }
    })
  })

  after(async () => {
    await server.close()
    await dir.cleanup()
  })

  it('listens on an owner-only Unix socket in the data directory', async () => {
    assert.equal(server.path, join(dir.path, 'control.sock'))
    assert.equal((await stat(server.path)).mode & 0o777, 0o600)
  })

  it('answers calls, passes events before the result, and carries errors with their code', async () => {
    assert.deepEqual(await callControl(dir.path, 'echo', { a: 1 }), { a: 1 })
    const events: unknown[] = []
    assert.equal(await callControl(dir.path, 'progress', {}, { onEvent: e => events.push(e) }), 'done')
    assert.deepEqual(events, [{ step: 1 }, { step: 2 }])
    await assert.rejects(callControl(dir.path, 'fail'), (err: ControlError) => err.code === 'ERR_BROKEN' && err.message === 'it broke')
    await assert.rejects(callControl(dir.path, 'nope'), (err: ControlError) => err.code === 'ERR_UNKNOWN_METHOD')
    await assert.rejects(callControl(dir.path, 'constructor'), (err: ControlError) => err.code === 'ERR_UNKNOWN_METHOD', 'no prototype methods')
  })

  it('answers a malformed line with an error and keeps serving', async () => {
    const { lines } = await raw(server.path, 'this is not json\n{"id":7,"method":"echo","params":{"x":2}}\n', 2)
    assert.equal(JSON.parse(lines[0]).error.code, 'ERR_BAD_REQUEST')
    assert.deepEqual(JSON.parse(lines[1]), { id: 7, result: { x: 2 } })
  })

  it('drops a client that sends an over-long line, and still serves others', async () => {
    const { closed } = await raw(server.path, 'x'.repeat(1024 * 1024 + 10), 1)
    assert.equal(closed, true)
    assert.deepEqual(await callControl(dir.path, 'echo', { ok: true }), { ok: true })
  })

  it('says plainly when no node runs on a data directory', async () => {
    const empty = await tempDir()
    try {
      await assert.rejects(callControl(empty.path, 'status'), (err: unknown) => isCoded(err, ControlError, 'ERR_CONTROL_UNAVAILABLE'))
    } finally {
      await empty.cleanup()
    }
  })
})
