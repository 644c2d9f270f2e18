import * as assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { chmod, lstat, mkdir, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { callControl, startControlServer } from '../../src/control/index.js'
import { otherUser, runAs, tempDir, waitFor, type OtherUser } from '../utils/index.js'

/**
 * Runs in a separate process, spinning (no sleeps, no events) until the stop file appears:
 * lstat of `<dir>/control.sock` and of every entry of the data dir and of its subdirectories,
 * counting each (name, type, mode) it ever sees. A socket visible with the umask's mode for
 * a few microseconds is caught.
 */
const WATCHER = `
const { existsSync, lstatSync, readdirSync } = require('node:fs')
const { join } = require('node:path')
const [dir, stop, limitMs] = process.argv.slice(1)
const seen = {}
const kind = st => st.isSocket() ? 'socket' : st.isDirectory() ? 'dir' : 'file'
const note = (what, st) => { const key = what + ' ' + kind(st) + ' ' + (st.mode & 0o777).toString(8); seen[key] = (seen[key] ?? 0) + 1 }
const list = p => { try { return readdirSync(p) } catch { return [] } }
const deadline = Date.now() + Number(limitMs)
let rounds = 0
process.stdout.write('ready\\n')
while (!existsSync(stop) && Date.now() < deadline) {
  rounds++
  try { note('control.sock', lstatSync(join(dir, 'control.sock'))) } catch {}
  for (const name of list(dir)) {
    if (name === 'control.sock') continue
    try { note('other entry', lstatSync(join(dir, name))) } catch { continue }
    for (const inner of list(join(dir, name))) {
      try { note('inside another entry', lstatSync(join(dir, name, inner))) } catch {}
    }
  }
}
process.stdout.write(JSON.stringify({ rounds, seen }) + '\\n')
`

interface Watch { rounds: number, seen: Record<string, number> }

async function watchWhile (dir: string, work: () => Promise<void>): Promise<Watch> {
  const stop = join(dir, '..', `${dir.split('/').pop() ?? 'x'}.stop`)
  const child = spawn(process.execPath, ['-e', WATCHER, dir, stop, '60000'], { stdio: ['ignore', 'pipe', 'inherit'] })
  let stdout = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  const exited = new Promise<void>(resolve => child.once('close', () => { resolve() }))
  try {
    await waitFor(() => stdout.startsWith('ready\n'), { what: 'the watcher to start' })
    await work()
  } finally {
    await writeFile(stop, '')
    await exited
    await chmod(stop, 0o600).catch(() => {})
  }
  const last = stdout.trim().split('\n').pop() ?? ''
  try {
    return JSON.parse(last)
  } catch {
    assert.fail(`the watcher reported nothing usable: ${stdout}`)
  }
}

/** Connects to `path` as `user`; resolves with 'connected' or the error code. */
async function connectAs (user: OtherUser, path: string): Promise<string> {
  const script = "const s = require('node:net').connect(process.argv[1]); s.on('connect', () => { process.stdout.write('connected'); s.destroy() }); s.on('error', e => process.stdout.write(String(e.code)))"
  const { stdout, stderr } = await runAs(user, script, [path])
  return stdout !== '' ? stdout : `no answer (${stderr.trim()})`
}

describe('control socket permissions', function () {
  this.timeout(60_000)
  let dir: Awaited<ReturnType<typeof tempDir>>

  beforeEach(async () => { dir = await tempDir() })
  afterEach(async () => { await dir.cleanup() })

  it('the socket is 0600 from the first moment it exists, over many start/stop cycles, even with umask 000', async () => {
    const cycles = 60
    // the worst umask a user can have: an unprotected bind would show a 0777 socket
    const umask = process.umask(0o000)
    let watch: Watch
    try {
      watch = await watchWhile(dir.path, async () => {
        for (let i = 0; i < cycles; i++) {
          const server = await startControlServer(dir.path, { ping: async () => 'pong' })
          if (i % 10 === 0) assert.equal(await callControl(dir.path, 'ping'), 'pong')
          await server.close()
        }
      })
    } finally {
      process.umask(umask)
    }
    const kinds = Object.keys(watch.seen)
    console.log(`      watcher: ${watch.rounds} rounds, saw ${kinds.map(k => `${k} ×${watch.seen[k]}`).join(', ')}`)
    assert.ok((watch.seen['control.sock socket 600'] ?? 0) > 0, 'the watcher saw the socket at least once')
    assert.deepEqual(kinds.filter(k => k.startsWith('control.sock')), ['control.sock socket 600'], 'control.sock was never seen with another mode')
    assert.deepEqual(kinds.filter(k => k.startsWith('other entry')).filter(k => k !== 'other entry dir 700'), [], 'the only other entries are private (0700) directories')
    assert.deepEqual(await readdir(dir.path), [], 'nothing is left behind')
  })

  it('replaces the socket a killed node left behind; leaves nothing behind when it cannot bind', async () => {
    const path = join(dir.path, 'control.sock')
    // a node killed with SIGKILL leaves its socket file: make one the same way
    const crashed = spawn(process.execPath, ['-e', "require('node:net').createServer().listen(process.argv[1], () => process.stdout.write('up'))", path], { stdio: ['ignore', 'pipe', 'inherit'] })
    await new Promise(resolve => crashed.stdout.once('data', resolve))
    crashed.kill('SIGKILL')
    await new Promise(resolve => crashed.once('close', resolve))
    assert.ok((await lstat(path)).isSocket(), 'the stale socket is there')
    const server = await startControlServer(dir.path, { ping: async () => 'pong' })
    assert.equal(await callControl(dir.path, 'ping'), 'pong')
    assert.equal((await lstat(path)).mode & 0o777, 0o600)
    await server.close()
    assert.deepEqual(await readdir(dir.path), [])

    // something that is not a socket in its place (a non-empty directory) is an error, and
    // neither a listener nor the private directory stays behind
    await mkdir(join(path, 'inside'), { recursive: true })
    await assert.rejects(startControlServer(dir.path, { ping: async () => 'pong' }))
    assert.deepEqual(await readdir(dir.path), ['control.sock'])
  })

  describe('another user', () => {
    let user: OtherUser

    before(async function () {
      const found = await otherUser()
      if (typeof found === 'string') {
        console.log(`      skipped: ${found}`)
        this.skip()
      }
      user = found as OtherUser
    })

    it('cannot connect, even when the data directory lets it through; can when the mode allows (control)', async () => {
      const server = await startControlServer(dir.path, { ping: async () => 'pong' })
      try {
        assert.equal(await connectAs(user, server.path), 'EACCES', 'data dir 0700')
        await chmod(dir.path, 0o711)
        assert.equal(await connectAs(user, server.path), 'EACCES', 'data dir 0711: only the socket mode (0600) protects it')
        await chmod(server.path, 0o666)
        assert.equal(await connectAs(user, server.path), 'connected', 'control: with the socket opened to all, the same user connects')
      } finally {
        await chmod(dir.path, 0o700)
        await server.close()
      }
    })
  })
})
