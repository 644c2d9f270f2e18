import { strict as assert } from 'node:assert'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { once } from 'node:events'
import { chmod, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { ProcessRunner } from '../../../src/exec/runners/index.js'
import { JobLauncher, type JobChild } from '../../../src/exec/runners/launcher.js'
import { MAX_RELAYED_BYTES } from '../../../src/exec/runners/launcher-messages.js'
import { processAlive, tempDir, waitFor } from '../../utils/index.js'
import { running } from './process-fixtures.js'

/** This process's minor page faults so far (/proc/self/stat, field 10). */
function minorFaults (): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? []
  return Number(fields[7])
}

interface Ended {
  stdout: string
  stderr: string
  code: number | null
  signal: string | null
  error?: NodeJS.ErrnoException
}

async function ended (child: JobChild): Promise<Ended> {
  const out: Ended = { stdout: '', stderr: '', code: null, signal: null }
  child.stdout?.setEncoding('utf8').on('data', (t: string) => { out.stdout += t })
  child.stderr?.setEncoding('utf8').on('data', (t: string) => { out.stderr += t })
  child.once('exit', (code: number | null, signal: string | null) => { out.code = code; out.signal = signal })
  child.once('error', (err: NodeJS.ErrnoException) => { out.error = err })
  // not events.once: it would reject on 'error', which a command that cannot start emits before 'close'
  await new Promise(resolve => child.once('close', resolve))
  return out
}

describe('exec: the job launcher', function () {
  this.timeout(30_000)
  let launcher: JobLauncher

  beforeEach(() => { launcher = new JobLauncher() })
  afterEach(() => { launcher.stop() })

  it('starts a process from its own process: stdin, stdout, stderr, exit code and environment pass through', async () => {
    const child = launcher.spawn('/bin/sh', ['-c', 'echo "parent $PPID"; echo "env $GREETING"; cat; echo oops >&2; exit 3'], { env: { GREETING: 'hello', PATH: '/usr/bin:/bin' } })
    child.stdin?.end('from stdin\n')
    const result = await ended(child)
    assert.equal(result.code, 3)
    assert.equal(result.stderr, 'oops\n')
    assert.match(result.stdout, /^parent (\d+)\nenv hello\nfrom stdin\n$/)
    const parent = Number(/^parent (\d+)/.exec(result.stdout)?.[1])
    assert.equal(parent, launcher.pid, 'the launcher, not this process, is the parent')
    assert.notEqual(parent, process.pid)
    assert.equal(typeof child.pid, 'number')
  })

  it('leaves this process\'s memory alone, where a fork of its own marks every page copy-on-write (the reason it exists)', async () => {
    launcher.start()
    await ended(launcher.spawn('/bin/true', [], {}))
    const buffer = Buffer.alloc(64 * 1024 * 1024, 1) // 16,384 pages, each written once already
    const writeAll = (value: number): number => {
      const before = minorFaults()
      buffer.fill(value)
      return minorFaults() - before
    }
    writeAll(2)
    await ended(launcher.spawn('/bin/true', [], {}))
    const afterLauncher = writeAll(3)
    const direct = spawn('/bin/true', [], { stdio: 'ignore' })
    await once(direct, 'close')
    const afterFork = writeAll(4)
    // a fork's child shares every page until it execs; the parent's next write to each faults
    assert.ok(afterFork > 8_000, `a fork of this process costs a fault per page written after it (${afterFork} faults for 16,384 pages)`)
    assert.ok(afterLauncher < afterFork / 8, `${afterLauncher} faults after a launched process, ${afterFork} after a fork`)
  })

  it('reports a command that cannot start as an error, as Node does (ENOENT), and the launcher goes on', async () => {
    const missing = await ended(launcher.spawn('/nonexistent/command', [], {}))
    assert.equal(missing.error?.code, 'ENOENT')
    const ok = await ended(launcher.spawn('/bin/sh', ['-c', 'echo fine'], {}))
    assert.equal(ok.stdout, 'fine\n')
  })

  it('relays at most its bound of output, and a job writing more is not blocked by a full pipe', async () => {
    const bytes = MAX_RELAYED_BYTES + 4 * 1024 * 1024
    const child = launcher.spawn('/bin/sh', ['-c', `head -c ${bytes} /dev/zero; echo done >&2`], {})
    const result = await ended(child)
    const relayed = result.stdout.length // NUL bytes: one character each
    assert.equal(result.code, 0)
    assert.equal(result.stderr, 'done\n')
    assert.ok(relayed >= MAX_RELAYED_BYTES && relayed < MAX_RELAYED_BYTES + 1024 * 1024, `relayed ${relayed} bytes of ${bytes}`)
  })

  it('kills the process groups it started when the provider lets it go, and starts again for the next job', async () => {
    const child = launcher.spawn('/bin/sh', ['-c', 'sleep 30 & echo $!; wait'], { detached: true })
    let sleeper = 0
    child.stdout?.on('data', (b: Buffer) => { sleeper = Number(b.toString().trim()) })
    await waitFor(() => sleeper > 0, { timeoutMs: 10_000, what: 'the job to start its sleep' })
    const end = ended(child)
    const first = launcher.pid
    launcher.stop()
    const result = await end
    assert.equal(result.signal, 'SIGKILL')
    await waitFor(() => !processAlive(sleeper), { timeoutMs: 10_000, what: 'the job\'s background process to be killed with it' })
    const again = await ended(launcher.spawn('/bin/sh', ['-c', 'echo again'], {}))
    assert.equal(again.stdout, 'again\n')
    assert.notEqual(launcher.pid, first)
  })

  it('a launcher killed outright ends its running jobs as SIGKILLed, not as hanging', async () => {
    const child = launcher.spawn('/bin/sh', ['-c', 'echo up; sleep 30'], { detached: true })
    await once(child, 'spawn')
    const end = ended(child)
    process.kill(launcher.pid as number, 'SIGKILL')
    const result = await end
    assert.equal(result.signal, 'SIGKILL')
    // nothing here kills a bare child's group (the process runner does, and its jobs carry a parent-death signal)
    try { process.kill(-(child.pid as number), 'SIGKILL') } catch {}
  })

  it('process runner: a job whose launcher is killed outright dies too, background processes and all', async () => {
    const tmp = await tempDir('idlegrid-launcher-')
    const runner = new ProcessRunner()
    try {
      // jobs run as another user when we are root: it must pass through to the work dir
      await chmod(tmp.path, 0o711)
      const dir = join(tmp.path, 'job')
      await mkdir(join(dir, 'outputs'), { recursive: true })
      let line = ''
      const handle = runner.start({ jobId: 'cd'.repeat(16), workDir: dir, command: ['/bin/sh', '-c', 'sleep 600 & echo "$PPID $$ $!"; wait'], env: {}, timeoutMs: 60_000, graceMs: 500 }, l => { line ||= l.line })
      await waitFor(() => line !== '', { timeoutMs: 10_000, what: 'the job to start' })
      const [launcherPid, ...jobPids] = line.split(' ').map(Number)
      process.kill(launcherPid as number, 'SIGKILL')
      const outcome = await handle.done
      assert.equal(outcome.status, 'completed', 'ended by a signal, not by its time limit')
      assert.ok(outcome.exitCode < 0, `exit ${outcome.exitCode}: killed`)
      for (const pid of jobPids) await waitFor(() => !running(pid), { timeoutMs: 5_000, what: `job process ${pid} to die with its launcher` })
    } finally {
      runner.close()
      await tmp.cleanup()
    }
  })
})
