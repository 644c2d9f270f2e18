import * as assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { chmod, writeFile, stat, readFile, readdir } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { BIN_PATH, spawnNode, tempDir } from '../utils/index.js'
import { JOB_SHARD_TOPICS } from '../../protocols/ids.js'
import { missingBootstrap } from '../../src/config/index.js'

interface CliResult { code: number | null, stdout: string, stderr: string }

/** Runs the real `idlegrid` command with this Node (22), bounded in time. */
async function idlegrid (
  args: string[],
  opts: { env?: NodeJS.ProcessEnv, timeoutMs?: number } = {}
): Promise<CliResult> {
  return await new Promise(resolve => {
    execFile(process.execPath, [BIN_PATH, ...args], {
      env: { ...process.env, IDLEGRID_BOOTSTRAP: '', IDLEGRID_DATA_DIR: '', ...opts.env },
      timeout: opts.timeoutMs ?? 30_000
    }, (err, stdout, stderr) => {
      resolve({ code: err == null ? 0 : (typeof err.code === 'number' ? err.code : null), stdout, stderr })
    })
  })
}

function assertOneLineError (result: CliResult, code: number, pattern: RegExp): void {
  assert.equal(result.code, code, `exit code (stderr: ${result.stderr})`)
  const lines = result.stderr.trim().split('\n')
  assert.equal(lines.length, 1, `one line on stderr, got:\n${result.stderr}`)
  assert.match(lines[0], pattern)
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace without --verbose')
}

describe('idlegrid CLI', function () {
  this.timeout(90_000)
  let dir: Awaited<ReturnType<typeof tempDir>>

  beforeEach(async () => { dir = await tempDir() })
  afterEach(async () => { await dir.cleanup() })

  it('prints help for the program and for each command', async () => {
    const top = await idlegrid(['--help'])
    assert.equal(top.code, 0)
    for (const command of ['demo', 'bootstrap', 'provider', 'renter', 'id', 'status']) {
      assert.match(top.stdout, new RegExp(`^  ${command} `, 'm'))
      const help = await idlegrid([command, '--help'])
      assert.equal(help.code, 0, `${command} --help`)
      assert.match(help.stdout, new RegExp(`Usage: idlegrid ${command}`))
    }
    const roleHelp = await idlegrid(['provider', '--help'])
    for (const option of ['--listen', '--data-dir', '--bootstrap', '--config', '--json']) assert.match(roleHelp.stdout, new RegExp(option))
  })

  it('rejects an unknown command and an unknown option with exit 2 and one line', async () => {
    assertOneLineError(await idlegrid(['fly']), 2, /unknown command 'fly'/)
    assertOneLineError(await idlegrid(['provider', '--colour', 'red', '--data-dir', dir.path]), 2, /unknown option '--colour'/)
  })

  it('rejects a config file that does not exist', async () => {
    assertOneLineError(await idlegrid(['provider', '--config', join(dir.path, 'nope.yaml'), '--data-dir', dir.path]), 2, /config file .*nope\.yaml does not exist/)
  })

  it('rejects invalid YAML, naming the line', async () => {
    const file = join(dir.path, 'bad.yaml')
    await writeFile(file, 'listen:\n  - /ip4/127.0.0.1/tcp/0\n bootstrap: [oops\n')
    assertOneLineError(await idlegrid(['renter', '--config', file, '--data-dir', dir.path]), 2, /not valid YAML \(line \d+\)/)
  })

  it('rejects a bad config field with exit 2, naming the field and what was expected', async () => {
    const file = join(dir.path, 'cfg.yaml')
    await writeFile(file, 'maxConnections: lots\n')
    assertOneLineError(await idlegrid(['renter', '--config', file, '--data-dir', dir.path]), 2, /config field "maxConnections": expected a number, got "lots"/)
    await writeFile(file, 'listn: [/ip4/127.0.0.1/tcp/0]\n')
    assertOneLineError(await idlegrid(['renter', '--config', file, '--data-dir', dir.path]), 2, /config field "listn": expected one of the known fields/)
  })

  it('submit: a bad --max-attempts is exit 2, before any node starts', async () => {
    const job = join(dir.path, 'job.yaml')
    await writeFile(job, 'name: t\ntier: silver\nworkload: evaluation\nruntime: { command: [echo, hi] }\nestimatedMinutes: 1\n')
    assertOneLineError(await idlegrid(['submit', job, '--max-attempts', '11', '--data-dir', join(dir.path, 'submit-renter')]), 2, /--max-attempts must be a whole number from 1 to 10, got 11/)
    assertOneLineError(await idlegrid(['submit', job, '--max-attempts', 'x', '--data-dir', join(dir.path, 'submit-renter')]), 2, /--max-attempts must be a whole number/)
  })

  it('provider: a bad --usage-interval-seconds is exit 2, before any node starts', async () => {
    assertOneLineError(await idlegrid(['provider', '--usage-interval-seconds', '0', '--region', 'eu-west', '--price-floor', '1', '--simulate-gpu', 'H100:80', '--runner', 'process', '--data-dir', join(dir.path, 'usage-provider')]), 2, /--usage-interval-seconds: 0 is not a number of seconds from 1 to 3600/)
  })

  it('rejects an unparsable multiaddr', async () => {
    assertOneLineError(await idlegrid(['renter', '--listen', 'localhost:4001', '--data-dir', dir.path]), 2, /config field "listen(\[0\])?": expected a multiaddr/)
    assertOneLineError(await idlegrid(['renter', '--bootstrap', '/ip4/127.0.0.1/tcp/4001', '--data-dir', dir.path]), 2, /"bootstrap\[0\]": expected a multiaddr ending in \/p2p\//)
  })

  it('reports a port in use as one clear line, exit 1', async () => {
    const server: Server = createServer()
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as { port: number }).port
    try {
      assertOneLineError(await idlegrid(['renter', '--listen', `/ip4/127.0.0.1/tcp/${port}`, '--data-dir', dir.path]), 1, new RegExp(`cannot listen on /ip4/127.0.0.1/tcp/${port}: address already in use`))
    } finally {
      server.close()
    }
    // the failed start left no lock behind: the same data dir starts now
    const id = await idlegrid(['id', '--json', '--data-dir', dir.path])
    assert.equal(id.code, 0, id.stderr)
  })

  it('--verbose shows the stack trace', async () => {
    const result = await idlegrid(['renter', '--config', join(dir.path, 'nope.yaml'), '--data-dir', dir.path, '--verbose'])
    assert.equal(result.code, 2)
    assert.match(result.stderr, /\n\s+at /)
  })

  it('creates the key once (mode 0600) and keeps the peer id across runs', async () => {
    const first = await idlegrid(['id', '--json', '--data-dir', dir.path])
    assert.equal(first.code, 0, first.stderr)
    const second = await idlegrid(['id', '--json', '--data-dir', dir.path])
    const a = JSON.parse(first.stdout.trim())
    const b = JSON.parse(second.stdout.trim())
    assert.match(a.peerId, /^12D3KooW/)
    assert.equal(b.peerId, a.peerId)
    assert.ok(a.addrs.length > 0 && a.addrs.every((addr: string) => addr.startsWith('/ip4/127.0.0.1/tcp/')))
    assert.equal((await stat(join(dir.path, 'node.key'))).mode & 0o777, 0o600)
  })

  it('refuses a corrupt key file instead of replacing it', async () => {
    await writeFile(join(dir.path, 'node.key'), 'not a key', { mode: 0o600 })
    assertOneLineError(await idlegrid(['id', '--data-dir', dir.path]), 1, /node key .*is corrupt/)
    assert.equal(await readFile(join(dir.path, 'node.key'), 'utf8'), 'not a key')
  })

  it('refuses a data dir others can write with exit 2 and the fix, before any key is created', async () => {
    await chmod(dir.path, 0o770)
    assertOneLineError(await idlegrid(['id', '--data-dir', dir.path]), 2, new RegExp(`^error: data directory ${dir.path} is group-writable \\(mode 770\\).*; run chmod 700 ${dir.path}$`))
    await chmod(dir.path, 0o777)
    assertOneLineError(await idlegrid(['renter', '--data-dir', dir.path]), 2, /group- and world-writable \(mode 777\).*chmod 700/)
    assert.deepEqual(await readdir(dir.path), [], 'no key, lock or socket was created')
    await chmod(dir.path, 0o700)
    assert.equal((await idlegrid(['id', '--data-dir', dir.path])).code, 0, 'after the fix the node starts')
  })

  it('one-shot commands talk to the running node; a second node on the same data dir is refused', async () => {
    const node = await spawnNode('renter', { dataDir: dir.path, args: ['--listen', '/ip4/127.0.0.1/tcp/0'] })
    try {
      const id = await idlegrid(['id', '--json', '--data-dir', dir.path])
      assert.equal(id.code, 0, id.stderr)
      const parsed = JSON.parse(id.stdout.trim())
      assert.equal(parsed.peerId, node.peerId)
      assert.deepEqual(parsed.addrs, node.addrs, 'the running node\'s addresses, not a new peer\'s')

      const status = await idlegrid(['status', '--json', '--data-dir', dir.path])
      assert.equal(status.code, 0, status.stderr)
      const s = JSON.parse(status.stdout.trim())
      assert.equal(s.via, 'running')
      assert.equal(s.role, 'renter')
      assert.equal(s.dhtMode, 'client')
      assert.ok(s.uptimeMs >= 0)
      // market version 2: the global topics and every job shard (no bids or awards topic)
      assert.deepEqual(Object.keys(s.topics).sort(), ['/idlegrid/2/heartbeats', '/idlegrid/5/ledger', ...JOB_SHARD_TOPICS].sort())
      assert.equal((await stat(join(dir.path, 'control.sock'))).mode & 0o777, 0o600)

      assertOneLineError(await idlegrid(['provider', '--data-dir', dir.path, '--listen', '/ip4/127.0.0.1/tcp/0']), 1, /data directory .* is in use by a running idlegrid renter node \(pid \d+\)/)
    } finally {
      assert.equal(await node.stop('SIGINT'), 0, 'SIGINT stops the node with exit 0')
    }
  })

  it('prints one JSON ready line with --json', async () => {
    const child = spawn(process.execPath, [BIN_PATH, 'bootstrap', '--json', '--data-dir', dir.path, '--listen', '/ip4/127.0.0.1/tcp/0', '--listen', '/ip4/127.0.0.1/tcp/0/ws'], { stdio: ['ignore', 'pipe', 'pipe'] })
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let buffer = ''
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          buffer += chunk
          if (buffer.includes('\n')) resolve(buffer.split('\n')[0])
        })
        child.once('exit', code => { reject(new Error(`exited ${String(code)}`)) })
      })
      const ready = JSON.parse(line)
      assert.deepEqual(Object.keys(ready).sort(), ['addrs', 'peerId'])
      assert.ok(ready.addrs.some((a: string) => a.includes('/tcp/') && !a.includes('/ws')))
      assert.ok(ready.addrs.some((a: string) => a.includes('/ws')), 'the bootstrap role listens on WebSockets too')
      assert.ok(ready.addrs.every((a: string) => a.endsWith(`/p2p/${String(ready.peerId)}`)))
    } finally {
      child.kill('SIGTERM')
      const code = await new Promise(resolve => child.once('exit', resolve))
      assert.equal(code, 0)
    }
  })
})

describe('idlegrid submit: a newcomer with no peers (issue 36 item 7)', function () {
  this.timeout(90_000)
  let dir: Awaited<ReturnType<typeof tempDir>>
  const advice = missingBootstrap({ role: 'renter', bootstrap: [] })
  const exists = async (path: string): Promise<boolean> => await stat(path).then(() => true, () => false)

  beforeEach(async () => {
    dir = await tempDir()
    await writeFile(join(dir.path, 'job.yaml'), 'name: first\ntier: silver\nworkload: evaluation\nruntime: { command: [echo, hi] }\nestimatedMinutes: 1\nauction: { bidWindowMs: 300 }\n')
  })
  afterEach(async () => { await dir.cleanup() })

  /** The one line `idlegrid doctor` gives for a node without bootstrap peers, and no auction or output behind it. */
  function assertRefusedForNoPeers (run: CliResult, what: string): void {
    assertOneLineError(run, 2, /knows no peers/)
    assert.ok(advice != null)
    assert.ok(run.stderr.includes(advice.problem) && run.stderr.includes(advice.fix), `${what}: doctor's words and fix: ${run.stderr}`)
    assert.doesNotMatch(run.stdout, /auction|published|no_award|outputs:/, `${what}: no auction ran`)
  }

  it('a short-lived renter on a fresh data dir with no bootstrap: exit 2 before any auction, nothing left behind', async () => {
    const dataDir = join(dir.path, 'fresh')
    const outDir = join(dir.path, 'out')
    const run = await idlegrid(['submit', join(dir.path, 'job.yaml'), '--data-dir', dataDir, '--out-dir', outDir])
    assertRefusedForNoPeers(run, 'short-lived')
    assert.equal(await exists(outDir), false, 'no output directory')
    assert.equal(await exists(dataDir), false, 'no data directory: no node was started')
  })

  it('a running renter node that knows no peers refuses the same way', async () => {
    const dataDir = join(dir.path, 'renter')
    const outDir = join(dir.path, 'out')
    const node = await spawnNode('renter', { dataDir, args: ['--listen', '/ip4/127.0.0.1/tcp/0'] })
    try {
      const run = await idlegrid(['submit', join(dir.path, 'job.yaml'), '--data-dir', dataDir, '--out-dir', outDir])
      assertRefusedForNoPeers(run, 'running node')
      assert.equal(await exists(outDir), false, 'no output directory')
    } finally {
      await node.stop()
    }
  })

  it('no award with peers: the summary line names no empty provider', async () => {
    const seed = await spawnNode('bootstrap', { dataDir: join(dir.path, 'seed'), args: ['--listen', '/ip4/127.0.0.1/tcp/0'] })
    try {
      const run = await idlegrid(['submit', join(dir.path, 'job.yaml'), '--max-attempts', '1', '--data-dir', join(dir.path, 'renter'), '--out-dir', join(dir.path, 'out'), '--bootstrap', seed.addrs[0] as string])
      assert.equal(run.code, 1, run.stderr)
      assert.match(run.stdout, /^job [0-9a-f]{32}: no_award, no provider was awarded the job \(after 0 attempt\(s\)\)$/m)
      assert.doesNotMatch(run.stdout, /on {2}after/)
    } finally {
      await seed.stop()
    }
  })
})
