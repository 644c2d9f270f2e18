import { strict as assert } from 'node:assert'
import { chmod, mkdir, readFile, writeFile, symlink } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseTelemetry, readGpuTelemetry } from '../../../src/capability/gpu/gpu.js'
import { checkRelativePath, fileSetDigest, hashFile, listRegularFiles, sortEntries } from '../../../src/exec/shared/digest.js'
import { ExecError } from '../../../src/exec/errors.js'
import { DockerRunner, dockerRunArgs, JOB_PATH, JobLauncher, ProcessRunner, type LogLine, type RunSpec } from '../../../src/exec/runners/index.js'
import type { CallResult } from '../../../src/exec/runners/launcher.js'
import { TelemetryAccumulator, TelemetrySampler } from '../../../src/exec/provider/telemetry.js'
import { sha256 } from '../../../src/identity/index.js'
import { dockerSettings, splitDockerFields } from '../../../src/cli/commands/docker-options.js'
import { processAlive, tempDir, waitFor } from '../../utils/index.js'
import { isCoded } from '../../../src/common/index.js'

const FAKE_SMI = fileURLToPath(new URL('../../../../test/fixtures/nvidia-smi/fake-nvidia-smi.sh', import.meta.url))

async function workDir (root: string, name: string): Promise<string> {
  const dir = join(root, name)
  await mkdir(join(dir, 'inputs'), { recursive: true })
  await mkdir(join(dir, 'outputs'), { recursive: true })
  return dir
}

function spec (dir: string, command: string[], more: Partial<RunSpec> = {}): RunSpec {
  return { jobId: 'ab'.repeat(16), workDir: dir, command, env: {}, timeoutMs: 20_000, graceMs: 500, ...more }
}

describe('exec: process runner', function () {
  this.timeout(30_000)
  let tmp: { path: string, cleanup: () => Promise<void> }
  before(async () => {
    tmp = await tempDir('idlegrid-exec-')
    // jobs run as another user when we are root: it must pass through to the work dirs
    await chmod(tmp.path, 0o711)
  })
  after(async () => { await tmp.cleanup() })

  it('starts the job from its launcher, never by forking the provider (a fork marks all the provider\'s memory copy-on-write)', async () => {
    const runner = new ProcessRunner()
    try {
      const dir = await workDir(tmp.path, 'parent')
      const lines: string[] = []
      const outcome = await runner.start(spec(dir, ['/bin/sh', '-c', 'echo "$PPID"']), line => { lines.push(line.line) }).done
      assert.equal(outcome.status, 'completed')
      const parent = Number(lines[0])
      assert.ok(parent > 0 && parent !== process.pid, `the job's parent is ${parent}, this process is ${process.pid}`)
      const parentCommand = (await readFile(`/proc/${parent}/cmdline`, 'utf8')).split('\0')
      assert.ok(parentCommand.some(arg => arg.endsWith('launcher-main.js')), `the job's parent runs ${parentCommand.join(' ')}`)
    } finally {
      runner.close()
    }
  })

  it('gives the job none of the provider\'s variables', async () => {
    process.env.IDLEGRID_PROVIDER_SECRET = 'do-not-leak'
    process.env.AWS_SECRET_ACCESS_KEY = 'do-not-leak-either'
    try {
      const dir = await workDir(tmp.path, 'env')
      const handle = new ProcessRunner().start(spec(dir, ['/bin/sh', '-c', 'env > outputs/env.txt'], { env: { JOB_VAR: 'mine' } }), () => {})
      const outcome = await handle.done
      assert.equal(outcome.status, 'completed')
      assert.equal(outcome.exitCode, 0)
      const lines = (await readFile(join(dir, 'outputs', 'env.txt'), 'utf8')).trim().split('\n')
      const env = Object.fromEntries(lines.map(l => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))
      assert.equal(env.PATH, JOB_PATH)
      assert.equal(env.HOME, dir)
      assert.equal(env.JOB_VAR, 'mine')
      assert.equal(env.IDLEGRID_OUTPUT_DIR, join(dir, 'outputs'))
      // the shell adds PWD, SHLVL and _ itself; everything else must be ours
      const allowed = new Set(['PATH', 'HOME', 'JOB_VAR', 'PWD', 'SHLVL', '_'])
      for (const key of Object.keys(env)) {
        assert.ok(allowed.has(key) || (key.startsWith('IDLEGRID_') && key !== 'IDLEGRID_PROVIDER_SECRET'), `job saw variable ${key}`)
      }
      assert.equal(env.IDLEGRID_PROVIDER_SECRET, undefined)
      assert.equal(env.AWS_SECRET_ACCESS_KEY, undefined)
    } finally {
      delete process.env.IDLEGRID_PROVIDER_SECRET
      delete process.env.AWS_SECRET_ACCESS_KEY
    }
  })

  it('refuses reserved or malformed job variables', () => {
    const runner = new ProcessRunner()
    assert.throws(() => { runner.check(spec('/tmp', ['true'], { env: { LD_PRELOAD: '/x.so' } })) }, (err: unknown) => isCoded(err, ExecError, 'ERR_RUNNER'))
    assert.throws(() => { runner.check(spec('/tmp', ['true'], { env: { 'A=B': 'x' } })) }, (err: unknown) => isCoded(err, ExecError, 'ERR_RUNNER'))
    assert.throws(() => { runner.check(spec('/tmp', ['true'], { env: { IDLEGRID_JOB_ID: 'x' } })) }, (err: unknown) => isCoded(err, ExecError, 'ERR_RUNNER'))
    assert.throws(() => { runner.check(spec('/tmp', [])) }, (err: unknown) => isCoded(err, ExecError, 'ERR_RUNNER'))
  })

  it('streams log lines from stdout and stderr and reports the exit code', async () => {
    const dir = await workDir(tmp.path, 'logs')
    const lines: LogLine[] = []
    const outcome = await new ProcessRunner().start(spec(dir, ['/bin/sh', '-c', 'echo one; echo two >&2; printf three; exit 3']), l => lines.push(l)).done
    assert.equal(outcome.status, 'completed')
    assert.equal(outcome.exitCode, 3)
    assert.deepEqual(lines.map(l => `${l.stream}:${l.line}`).sort(), ['stderr:two', 'stdout:one', 'stdout:three'])
  })

  it('runs `node` as the Node the provider runs on, not the one on the job\'s PATH', async () => {
    const dir = await workDir(tmp.path, 'node')
    const lines: LogLine[] = []
    const outcome = await new ProcessRunner().start(spec(dir, ['node', '-e', 'console.log(process.version)']), l => lines.push(l)).done
    assert.equal(outcome.status, 'completed')
    assert.deepEqual(lines.map(l => l.line), [process.version])
  })

  it('kills the whole process group at the time limit', async () => {
    const dir = await workDir(tmp.path, 'timeout')
    // the job starts a background sleeper that ignores nothing and would outlive a plain kill. The
    // limit leaves the shell time to start it: in a loaded CI run a 500 ms limit once came before
    // the shell (gate, cgroup, rlimits, setpriv) had written child.pid
    const handle = new ProcessRunner().start(spec(dir, ['/bin/sh', '-c', 'sleep 60 & echo $! > outputs/child.pid; trap "" TERM; sleep 60; wait'], { timeoutMs: 3_000, graceMs: 300 }), () => {})
    const outcome = await handle.done
    assert.equal(outcome.status, 'timeout')
    assert.ok(outcome.exitCode < 0, `killed by a signal, got ${outcome.exitCode}`)
    const pidFile = await readFile(join(dir, 'outputs', 'child.pid'), 'utf8').catch(() => { throw new Error('the job did not start its background child within its 3 s limit (a machine this loaded cannot show the kill)') })
    const child = Number(pidFile.trim())
    await waitFor(() => !processAlive(child), { timeoutMs: 5_000, intervalMs: 20, what: 'the background child to be gone' }).catch(err => {
      // once seen in a loaded CI run and not since: say what the process is, should it happen again
      throw new Error(`${String(err.message)}; pid ${child}: ${procLines(child)}`)
    })
  })

  it('preemption sends SIGTERM, lets the job checkpoint within the grace, then stops it', async () => {
    const dir = await workDir(tmp.path, 'preempt')
    const script = 'trap "echo checkpoint > outputs/ckpt.txt; exit 0" TERM; echo started; while true; do sleep 0.1; done'
    const lines: string[] = []
    const handle = new ProcessRunner().start(spec(dir, ['/bin/sh', '-c', script], { graceMs: 5_000 }), l => lines.push(l.line))
    await waitFor(() => lines.includes('started'), { timeoutMs: 10_000, intervalMs: 20, what: 'the job to start' })
    handle.preempt(5_000, 'test')
    const outcome = await handle.done
    assert.equal(outcome.status, 'preempted')
    assert.equal((await readFile(join(dir, 'outputs', 'ckpt.txt'), 'utf8')).trim(), 'checkpoint')
  })

  it('preemption sends SIGTERM once to each process: the job\'s handler runs once, and a child that left the group gets it too', async () => {
    const dir = await workDir(tmp.path, 'preempt-once')
    // each handler appends a line and takes a while: a second SIGTERM would run the shell's trap again
    const escapee = 'trap "echo escapee >> outputs/terms.txt; exit 0" TERM; echo escaped; while :; do sleep 0.1; done'
    const script = `setsid /bin/sh -c '${escapee}' & trap "echo job >> outputs/terms.txt; sleep 1; echo checkpoint > outputs/ckpt.txt; exit 0" TERM; echo started; while :; do sleep 0.1; done`
    const lines: string[] = []
    const handle = new ProcessRunner().start(spec(dir, ['/bin/sh', '-c', script], { graceMs: 5_000 }), l => lines.push(l.line))
    await waitFor(() => lines.includes('started') && lines.includes('escaped'), { timeoutMs: 10_000, intervalMs: 20, what: 'the job and its escapee to set their traps' })
    handle.preempt(5_000, 'test')
    const outcome = await handle.done
    assert.equal(outcome.status, 'preempted')
    assert.equal(outcome.exitCode, 0, outcome.detail)
    assert.equal((await readFile(join(dir, 'outputs', 'ckpt.txt'), 'utf8')).trim(), 'checkpoint')
    assert.deepEqual((await readFile(join(dir, 'outputs', 'terms.txt'), 'utf8')).trim().split('\n').sort(), ['escapee', 'job'])
  })

  it('preemption SIGKILLs a job that ignores SIGTERM after the grace', async () => {
    const dir = await workDir(tmp.path, 'preempt-kill')
    const lines: string[] = []
    const handle = new ProcessRunner().start(spec(dir, ['/bin/sh', '-c', 'trap "" TERM; echo started; while true; do sleep 0.1; done']), l => lines.push(l.line))
    await waitFor(() => lines.includes('started'), { timeoutMs: 10_000, intervalMs: 20, what: 'the job to start' })
    const at = Date.now()
    handle.preempt(300, 'test')
    const outcome = await handle.done
    assert.equal(outcome.status, 'preempted')
    assert.equal(outcome.exitCode, -9)
    assert.ok(Date.now() - at >= 250)
  })

  it('a missing command fails without throwing', async () => {
    const dir = await workDir(tmp.path, 'missing')
    const outcome = await new ProcessRunner().start(spec(dir, ['no-such-command-idlegrid']), () => {}).done
    assert.equal(outcome.status, 'failed')
    assert.equal(outcome.exitCode, -1)
  })
})

describe('exec: output hashing', () => {
  let tmp: { path: string, cleanup: () => Promise<void> }
  before(async () => { tmp = await tempDir('idlegrid-exec-') })
  after(async () => { await tmp.cleanup() })

  it('lists the regular files of an output dir in a stable order, skips symlinks, and hashes them', async () => {
    const dir = join(tmp.path, 'out')
    await mkdir(join(dir, 'sub'), { recursive: true })
    await writeFile(join(dir, 'b.txt'), 'bee')
    await writeFile(join(dir, 'a.txt'), 'a')
    await writeFile(join(dir, 'sub', 'c.bin'), Buffer.alloc(3000, 7))
    await writeFile(join(dir, 'empty'), '')
    await symlink('/etc/passwd', join(dir, 'leak'))
    const files = await listRegularFiles(dir, { maxFiles: 4096, maxBytes: Number.MAX_SAFE_INTEGER })
    assert.deepEqual(files, [{ path: 'a.txt', size: 1 }, { path: 'b.txt', size: 3 }, { path: 'empty', size: 0 }, { path: 'sub/c.bin', size: 3000 }])
    const entries = []
    for (const f of files) entries.push({ path: f.path, ...(await hashFile(join(dir, f.path))) })
    assert.deepEqual(entries[1]?.sha256, sha256('bee'))
    // the digest of protocols/README.md §4, computed by hand
    const parts: Buffer[] = []
    for (const e of entries) {
      const size = Buffer.alloc(8)
      size.writeBigUInt64BE(e.size)
      parts.push(Buffer.from(e.path), Buffer.of(0), size, Buffer.from(e.sha256))
    }
    assert.deepEqual(fileSetDigest(entries), sha256(Buffer.concat(parts)))
    assert.deepEqual(fileSetDigest([...entries].reverse()), fileSetDigest(entries), 'order-independent')
    assert.deepEqual(fileSetDigest([]), sha256(''))
    // the provider's limits on what a job may return
    await assert.rejects(listRegularFiles(dir, { maxFiles: 3, maxBytes: Number.MAX_SAFE_INTEGER }), (err: unknown) => isCoded(err, ExecError, 'ERR_OUTPUT_LIMIT'))
    await assert.rejects(listRegularFiles(dir, { maxFiles: 4096, maxBytes: 3003 }), (err: unknown) => isCoded(err, ExecError, 'ERR_OUTPUT_LIMIT'))
    assert.equal((await listRegularFiles(dir, { maxFiles: 4, maxBytes: 3004 })).length, 4)
    assert.deepEqual(await listRegularFiles(join(dir, 'missing'), { maxFiles: 1, maxBytes: 1 }), [])
  })

  it('orders paths by UTF-8 bytes', () => {
    const e = (path: string): { path: string, size: bigint, sha256: Uint8Array } => ({ path, size: 0n, sha256: sha256('') })
    // U+FF5E sorts after U+1F600 in UTF-16 code units, but before it in UTF-8 bytes
    assert.deepEqual(sortEntries([e('\u{1F600}'), e('\uFF5E'), e('a')]).map(x => x.path), ['a', '\uFF5E', '\u{1F600}'])
  })

  it('refuses unsafe paths', () => {
    for (const bad of ['', '/etc/passwd', '../x', 'a/../b', 'a//b', './a', 'a\\b', 'a\0b']) assert.throws(() => checkRelativePath(bad), /path/)
    assert.equal(checkRelativePath('a/b.c'), 'a/b.c')
  })
})

describe('exec: docker runner', function () {
  this.timeout(60_000)
  const base: RunSpec = {
    jobId: 'cd'.repeat(16),
    workDir: '/var/idlegrid/jobs/x',
    command: ['python', 'train.py'],
    image: 'ghcr.io/acme/train:1.2',
    env: { EPOCHS: '3' },
    timeoutMs: 60_000,
    graceMs: 10_000,
    gpu: { index: 1, uuid: 'GPU-1234-abcd', simulated: false }
  }

  it('builds the docker run argv: GPU, no network, read-only root, memory, work dir', () => {
    const args = dockerRunArgs(base, 'idlegrid-test', { allowedImages: ['ghcr.io/acme/*'], memoryMib: 8192 })
    const has = (...seq: string[]): boolean => args.some((_, i) => seq.every((s, j) => args[i + j] === s))
    assert.equal(args[0], 'run')
    assert.ok(has('--gpus', 'device=GPU-1234-abcd'))
    assert.ok(has('--network', 'none'))
    assert.ok(has('--read-only'))
    assert.ok(has('--memory', '8192m'))
    assert.ok(has('--mount', 'type=bind,source=/var/idlegrid/jobs/x,target=/job'))
    assert.ok(has('--workdir', '/job'))
    assert.ok(has('--cap-drop', 'ALL'))
    assert.ok(has('--security-opt', 'no-new-privileges'))
    assert.ok(has('--user', '65534:65534'), 'an unprivileged user by default')
    assert.ok(has('--pids-limit', '1024'))
    assert.ok(has('--log-driver', 'none'), 'the engine keeps no copy of the log on its disk')
    assert.ok(!args.includes('--rm'), 'removed by the runner after it inspected how the run ended')
    assert.ok(has('--env', 'EPOCHS=3'))
    assert.ok(has('--env', 'IDLEGRID_OUTPUT_DIR=/job/outputs'))
    assert.ok(has('--', 'ghcr.io/acme/train:1.2', 'python', 'train.py'))
    assert.ok(!args.some(a => a.includes(process.env.HOME ?? '\0nohome') && a.startsWith('HOME=')), 'no provider HOME')
  })

  it('gives a network only when both the job and the policy allow it; no --gpus for simulated GPUs', () => {
    assert.ok(dockerRunArgs({ ...base, network: true }, 'n', { allowedImages: [], allowNetwork: true }).includes('bridge'))
    assert.ok(!dockerRunArgs({ ...base, network: true }, 'n', { allowedImages: [] }).includes('bridge'))
    assert.ok(!dockerRunArgs({ ...base, gpu: { index: 0, uuid: 'GPU-sim-h100-0', simulated: true } }, 'n', { allowedImages: [] }).includes('--gpus'))
  })

  it('bounds CPUs and file size, runs as the configured user, never as root', () => {
    const args = dockerRunArgs({ ...base, diskBytes: 5_000_000 }, 'n', { allowedImages: [], cpus: 2.5, user: '1234:5678', pull: 'never' })
    const has = (...seq: string[]): boolean => args.some((_, i) => seq.every((s, j) => args[i + j] === s))
    assert.ok(has('--cpus', '2.5'))
    assert.ok(has('--ulimit', 'fsize=5000000'))
    assert.ok(has('--user', '1234:5678'))
    assert.ok(has('--pull', 'never'))
    assert.throws(() => new DockerRunner({ allowedImages: [], user: '0:0' }), /never run as root/)
    assert.throws(() => new DockerRunner({ allowedImages: [], user: 'root' }), /numeric uid:gid/)
  })

  it('takes the engine, user and pull policy from flags over the config file\'s provider fields', () => {
    const { rest, file } = splitDockerFields({ region: 'eu-west', dockerHost: 'unix:///run/d.sock', dockerUser: '1000:1000', dockerPull: 'never' })
    assert.deepEqual(rest, { region: 'eu-west' }, 'the policy never sees the docker fields')
    assert.deepEqual(dockerSettings({}, file), { host: 'unix:///run/d.sock', user: '1000:1000', pull: 'never' })
    assert.deepEqual(dockerSettings({ 'docker-host': 'tcp://127.0.0.1:2375', 'docker-user': '7:7' }, file), { host: 'tcp://127.0.0.1:2375', user: '7:7', pull: 'never' })
    assert.throws(() => dockerSettings({ 'docker-user': '0:0' }, {}), /never run as root/)
    assert.throws(() => dockerSettings({}, { dockerUser: 'nobody' }), /provider\.dockerUser/)
    assert.throws(() => dockerSettings({ 'docker-pull': 'always' }, {}), /--docker-pull/)
  })

  it('enforces the image allow-list', () => {
    const runner = new DockerRunner({ allowedImages: ['ghcr.io/acme/*', 'docker.io/library/alpine'] })
    runner.check(base)
    runner.check({ ...base, image: 'docker.io/library/alpine:3.20' })
    assert.throws(() => { runner.check({ ...base, image: 'docker.io/evil/miner:latest' }) }, (err: unknown) => isCoded(err, ExecError, 'ERR_RUNNER'))
    assert.throws(() => { runner.check({ ...base, image: undefined }) }, (err: unknown) => isCoded(err, ExecError, 'ERR_RUNNER'))
    assert.throws(() => { new DockerRunner({ allowedImages: [] }).check(base) }, (err: unknown) => isCoded(err, ExecError, 'ERR_RUNNER'))
  })
})

describe('exec: telemetry', () => {
  it('summarises utilisation, max temperature and energy', () => {
    const acc = new TelemetryAccumulator()
    acc.add({ index: 1, utilizationPct: 50, temperatureC: 60, powerDrawW: 100 }, 0)
    acc.add({ index: 1, utilizationPct: 100, temperatureC: 71, powerDrawW: 300 }, 1000)
    acc.add({ index: 1, temperatureC: 65 }, 2000)
    const s = acc.summary(false)
    assert.equal(s.samples, 3)
    assert.equal(s.avgUtilPpm, 750_000)
    assert.equal(s.maxTempC, 71)
    assert.equal(s.energyMj, 200_000n) // (100 + 300) / 2 W × 1 s
    assert.equal(s.simulated, false)
  })

  it('samples the fake nvidia-smi for the slot\'s GPU', async () => {
    let reads = 0
    const sampler = new TelemetrySampler({
      gpuIndex: 1,
      simulated: false,
      intervalMs: 50,
      read: async () => {
        reads++
        return await readGpuTelemetry({ nvidiaSmi: FAKE_SMI })
      }
    })
    sampler.start()
    // reads run one after another: once the third began, the first two were sampled
    await waitFor(() => reads >= 3, { timeoutMs: 10_000, intervalMs: 20, what: 'three telemetry reads' })
    const s = await sampler.stop()
    assert.ok(s.samples >= 2, `samples ${s.samples}`)
    assert.equal(s.maxTempC, 71)
    assert.equal(s.avgUtilPpm, 980_000)
    assert.ok(s.energyMj > 0n)
    assert.deepEqual(parseTelemetry('1, 71, 98, 318.27\n')[0]?.temperatureC, 71)
  })

  it('through the provider\'s launcher (no fork of the provider per sample): the same samples and the same errors as a direct run', async () => {
    const launcher = new JobLauncher()
    try {
      let launched = 0
      const run = async (
        file: string,
        args: string[],
        options: { env?: Record<string, string>, timeoutMs: number, maxBytes: number }
      ): Promise<CallResult> => {
        launched++
        return await launcher.call(file, args, options)
      }
      assert.deepEqual(
        await readGpuTelemetry({ nvidiaSmi: FAKE_SMI, run }),
        await readGpuTelemetry({ nvidiaSmi: FAKE_SMI })
      )
      const errorOf = async (opts: Parameters<typeof readGpuTelemetry>[0]): Promise<string> => await readGpuTelemetry(opts).then(() => 'no error', (err: Error) => `${err.name}: ${err.message}`)
      const cases: Array<Parameters<typeof readGpuTelemetry>[0]> = [
        { nvidiaSmi: '/nonexistent/nvidia-smi' },
        { nvidiaSmi: FAKE_SMI, env: { ...process.env, FAKE_NVIDIA_SMI_FIXTURE: 'driver-failure' } },
        { nvidiaSmi: FAKE_SMI, env: { ...process.env, FAKE_NVIDIA_SMI_SLEEP: '1' }, timeoutMs: 300 }
      ]
      for (const opts of cases) {
        const direct = await errorOf(opts)
        assert.notEqual(direct, 'no error')
        assert.equal(await errorOf({ ...opts, run }), direct)
      }
      // every read through `run` went to the launcher, none forked this process instead
      assert.equal(launched, 1 + cases.length)
    } finally {
      launcher.stop()
    }
  })

  it('a simulated GPU gives a summary marked simulated', async () => {
    const sampler = new TelemetrySampler({ gpuIndex: 0, simulated: true })
    sampler.start()
    const s = await sampler.stop()
    assert.equal(s.simulated, true)
    assert.equal(s.samples, 0)
  })
})

/** What /proc says of `pid`: its stat line, command line and cgroup (for a failure message). */
function procLines (pid: number): string {
  const read = (file: string): string => { try { return readFileSync(`/proc/${pid}/${file}`, 'utf8').replaceAll('\0', ' ').trim() } catch (err: any) { return `(${String(err?.code ?? err)})` } }
  return `stat: ${read('stat')}; cmdline: ${read('cmdline')}; cgroup: ${read('cgroup')}`
}
