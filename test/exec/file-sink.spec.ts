import { strict as assert } from 'node:assert'
import { open, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Uint8ArrayList } from 'uint8arraylist'
import { FileSink } from '../../src/exec/shared/file-sink.js'
import { tempDir } from '../utils/index.js'

describe('exec: FileSink', () => {
  let tmp: { path: string, cleanup: () => Promise<void> }
  before(async () => { tmp = await tempDir('idlegrid-file-sink-') })
  after(async () => { await tmp.cleanup() })

  it('writes many queued chunks in order', async () => {
    const path = join(tmp.path, 'ordered.bin')
    const sink = new FileSink(await open(path, 'wx'))
    const chunks = Array.from({ length: 50 }, (_, i) => new Uint8Array(1000 + i).fill(i))
    for (const chunk of chunks) await sink.write(chunk)
    await sink.close()
    assert.deepEqual(new Uint8Array(await readFile(path)), Uint8Array.from(Buffer.concat(chunks)))
  })

  it('writes chunks that arrive in pieces (one writev each) in order, empty pieces included', async () => {
    const path = join(tmp.path, 'pieces.bin')
    const sink = new FileSink(await open(path, 'wx'))
    const expected: Uint8Array[] = []
    for (let i = 0; i < 20; i++) {
      const parts = Array.from({ length: 1 + (i % 7) }, (_, j) =>
        new Uint8Array(j === 2 ? 0 : 300 + 17 * j + i).fill(i * 7 + j)
      )
      expected.push(...parts)
      await sink.write(new Uint8ArrayList(...parts))
    }
    await sink.close()
    assert.deepEqual(new Uint8Array(await readFile(path)), Uint8Array.from(Buffer.concat(expected)))
  })

  it('surfaces a failed write at a later write or at close, and writes nothing after it', async () => {
    const path = join(tmp.path, 'read-only.bin')
    await writeFile(path, '')
    // a handle opened for reading: every write fails with EBADF
    const sink = new FileSink(await open(path, 'r'))
    let failed: unknown
    try {
      for (let i = 0; i < 40; i++) await sink.write(new Uint8Array(10))
      await sink.close()
    } catch (err) {
      failed = err
      await sink.close().catch(() => {})
    }
    assert.match(String((failed as NodeJS.ErrnoException)?.code), /EBADF/)
    assert.equal((await readFile(path)).byteLength, 0)
  })
})
