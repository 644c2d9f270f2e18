/**
 * The process runner's isolation on this machine: the job's user, its work dir handed over
 * and back, its whole process tree killed (with a cgroup and with the /proc fallback) on
 * completion, timeout and preemption, and its rlimits. Tests that switch users need root and
 * skip with the reason otherwise.
 */
import { strict as assert } from 'node:assert'
import { chmod, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ExecError } from '../../../src/exec/errors.js'
import { cgroupHierarchies } from '../../../src/exec/runners/job-cgroup.js'
import { DEFAULT_JOB_UIDS, planJobUser } from '../../../src/exec/runners/job-user.js'
import { ProcessRunner, type ProcessRunnerOptions, type RunSpec } from '../../../src/exec/runners/index.js'
import { checkWorkRootOutside } from '../../../src/exec/runners/work-dirs.js'
import { otherUser, tempDir, waitFor, type OtherUser } from '../../utils/index.js'
import { ESCAPES, running } from './process-fixtures.js'
import { isCoded } from '../../../src/common/index.js'

function spec (dir: string, script: string, more: Partial<RunSpec> = {}): RunSpec {
  return { jobId: 'cd'.repeat(16), workDir: dir, command: ['/bin/sh', '-c', script], env: {}, timeoutMs: 20_000, graceMs: 300, ...more }
}

async function pidsIn (dir: string): Promise<number[]> {
  return await Promise.all(['setsid.pid', 'daemon.pid'].map(async f => Number((await readFile(join(dir, 'outputs', f), 'utf8')).trim())))
}

describe('exec: process runner isolation', function () {
  this.timeout(60_000)
  let tmp: { path: string, cleanup: () => Promise<void> }
  let user: OtherUser | string
  let n = 0
  /** A fresh job dir (inputs/, outputs/) under a work root the runner prepared. */
  const jobDir = async (runner: ProcessRunner): Promise<string> => {
    await runner.prepareWorkRoot(join(tmp.path, 'work'))
    const dir = join(tmp.path, 'work', `job-${n++}`)
    await mkdir(join(dir, 'inputs'), { recursive: true, mode: 0o700 })
    await mkdir(join(dir, 'outputs'))
    return dir
  }
  const needRoot = (ctx: Mocha.Context): void => { if (typeof user === 'string') { console.log(`      skipped: ${user}`); ctx.skip() } }

  before(async () => {
    tmp = await tempDir('idlegrid-isolation-')
    // the job user must be able to pass through the temp dir to reach the work root
    await chmod(tmp.path, 0o711)
    user = await otherUser()
  })
  after(async () => { await tmp.cleanup() })

  it('runs the job as the job user with its inputs readable, outputs writable, and the provider reads them back', async function () {
    needRoot(this)
    const runner = new ProcessRunner()
    const dir = await jobDir(runner)
    await writeFile(join(dir, 'inputs', 'in.txt'), 'from the renter\n')
    const outcome = await runner.start(spec(dir, 'id -u > outputs/uid; tr a-z A-Z < inputs/in.txt > outputs/up.txt'), () => {}).done
    assert.equal(outcome.status, 'completed', outcome.detail)
    assert.equal(outcome.exitCode, 0)
    // the default as root: a uid of the job's own from DEFAULT_JOB_UIDS
    const uid = Number((await readFile(join(dir, 'outputs', 'uid'), 'utf8')).trim())
    assert.ok(uid >= DEFAULT_JOB_UIDS.first && uid <= DEFAULT_JOB_UIDS.last, `job ran as uid ${uid}`)
    assert.equal(await readFile(join(dir, 'outputs', 'up.txt'), 'utf8'), 'FROM THE RENTER\n')
    assert.equal((await stat(dir)).mode & 0o777, 0o700)
    assert.equal((await stat(join(tmp.path, 'work'))).mode & 0o777, 0o711)
  })

  for (const cgroups of [true, false]) {
    const how = cgroups ? 'its cgroup' : 'the /proc fallback (no cgroup)'
    const opts: ProcessRunnerOptions = { cgroups }

    it(`completion: setsid and double-fork escapes are killed with ${how}`, async function () {
      if (cgroups && cgroupHierarchies().length === 0) this.skip()
      const runner = new ProcessRunner(opts)
      const dir = await jobDir(runner)
      const outcome = await runner.start(spec(dir, ESCAPES), () => {}).done
      assert.equal(outcome.status, 'completed', outcome.detail)
      for (const pid of await pidsIn(dir)) assert.equal(running(pid), false, `process ${pid} outlived the job`)
    })

    it(`timeout and preemption: the whole tree goes with ${how}`, async function () {
      const runner = new ProcessRunner(opts)
      const timedOut = await jobDir(runner)
      const t = await runner.start(spec(timedOut, `${ESCAPES}; trap "" TERM; sleep 1000`, { timeoutMs: 1_500 }), () => {}).done
      assert.equal(t.status, 'timeout')
      for (const pid of await pidsIn(timedOut)) assert.equal(running(pid), false, `process ${pid} outlived the timeout`)
      const preempted = await jobDir(runner)
      const lines: string[] = []
      const handle = runner.start(spec(preempted, `${ESCAPES}; sleep 1000`), l => lines.push(l.line))
      await waitFor(() => lines.includes('started'), { what: 'the job to start its escapes' })
      handle.preempt(200, 'test')
      assert.equal((await handle.done).status, 'preempted')
      for (const pid of await pidsIn(preempted)) assert.equal(running(pid), false, `process ${pid} outlived the preemption`)
    })
  }

  it('a file past the size limit is cut (SIGXFSZ)', async () => {
    const runner = new ProcessRunner({ limits: { fileBytes: 1024 * 1024 } })
    const dir = await jobDir(runner)
    const outcome = await runner.start(spec(dir, 'head -c 3000000 /dev/zero > outputs/big; echo "exit $?" > outputs/status'), () => {}).done
    assert.equal(outcome.status, 'completed')
    assert.ok((await stat(join(dir, 'outputs', 'big'))).size <= 1024 * 1024)
    assert.notEqual((await readFile(join(dir, 'outputs', 'status'), 'utf8')).trim(), 'exit 0')
  })

  it('a CPU-bound process is stopped at its CPU-time limit (SIGXCPU)', async () => {
    const runner = new ProcessRunner({ limits: { cpuSeconds: 1 } })
    const dir = await jobDir(runner)
    const outcome = await runner.start(spec(dir, 'while :; do :; done'), () => {}).done
    assert.equal(outcome.status, 'completed')
    assert.equal(outcome.exitCode, -24, `SIGXCPU ends it, got ${outcome.exitCode}`)
  })

  it('memory beyond the limit is refused or the job killed', async () => {
    const runner = new ProcessRunner({ limits: { memoryBytes: 64 * 1024 * 1024 } })
    const dir = await jobDir(runner)
    // the shell holds 200 MB of command output in memory
    const outcome = await runner.start(spec(dir, 'x=$(head -c 200000000 /dev/zero | tr "\\0" a); echo survived > outputs/survived'), () => {}).done
    assert.notEqual(outcome.exitCode, 0)
    await assert.rejects(readFile(join(dir, 'outputs', 'survived')))
  })

  it('a fork bomb is bounded by the process limit, and nothing of it survives', async function () {
    const runner = new ProcessRunner({ limits: { processes: 16 } })
    if (typeof user === 'string' && cgroupHierarchies().length === 0) this.skip()
    const dir = await jobDir(runner)
    // at most 200 forks whatever happens: the test cannot hurt the machine
    const script = 'i=0; while [ $i -lt 200 ]; do sleep 1000 & echo $! >> outputs/pids; i=$((i+1)); echo $i > outputs/n; done; wait'
    const handle = runner.start(spec(dir, script, { timeoutMs: 5_000 }), () => {})
    const outcome = await handle.done
    const forked = Number((await readFile(join(dir, 'outputs', 'n'), 'utf8').catch(() => '0')).trim())
    assert.ok(forked < 200 && forked <= 16, `forked ${forked} with a limit of 16 (${outcome.status})`)
    const pids = (await readFile(join(dir, 'outputs', 'pids'), 'utf8').catch(() => '')).split('\n').filter(Boolean).map(Number)
    for (const pid of pids) assert.equal(running(pid), false)
  })

  it('a uid range gives concurrent jobs different uids, and one cannot read the other\'s dir', async function () {
    needRoot(this)
    const runner = new ProcessRunner({ jobUser: '61400-61401' })
    const a = await jobDir(runner)
    const b = await jobDir(runner)
    await writeFile(join(a, 'inputs', 'secret.txt'), 'victim data')
    const lines: string[] = []
    const victim = runner.start(spec(a, 'echo up; id -u > outputs/uid; sleep 1000'), l => lines.push(l.line))
    await waitFor(() => lines.includes('up'), { what: 'the victim job' })
    const attacker = await runner.start(spec(b, `id -u > outputs/uid; cat /proc/*/cwd/inputs/secret.txt > outputs/stolen 2>/dev/null; cat ${a}/inputs/secret.txt >> outputs/stolen 2>/dev/null; true`), () => {}).done
    victim.cancel('test over')
    await victim.done
    assert.equal(attacker.status, 'completed')
    assert.notEqual((await readFile(join(a, 'outputs', 'uid'), 'utf8')).trim(), (await readFile(join(b, 'outputs', 'uid'), 'utf8')).trim())
    assert.equal(await readFile(join(b, 'outputs', 'stolen'), 'utf8'), '')
  })

  it('a missing command fails to start without throwing', async () => {
    const runner = new ProcessRunner()
    const dir = await jobDir(runner)
    const outcome = await runner.start({ ...spec(dir, ''), command: ['no-such-command-idlegrid'] }, () => {}).done
    assert.equal(outcome.status, 'failed')
    assert.match(outcome.detail ?? '', /command not found/)
  })
})

describe('exec: process runner setup', () => {
  it('parses --job-user and refuses root, unknown names and bad ranges', () => {
    assert.deepEqual(planJobUser('1234:55', 0).uids, [1234])
    assert.equal(planJobUser('1234:55', 0).gid, 55)
    assert.deepEqual(planJobUser('61000-61002', 0).uids, [61000, 61001, 61002])
    assert.equal(planJobUser(undefined, 0).dedicated, true)
    assert.ok(planJobUser(undefined, 0).uids.length > 1, 'as root, the default gives each running job its own uid')
    assert.equal(planJobUser(undefined, 0).gid, 'same-as-uid')
    assert.equal(planJobUser(undefined, 1000).dedicated, false)
    assert.throws(() => planJobUser('0', 0), /root/)
    assert.throws(() => planJobUser('root', 0), /root/)
    assert.throws(() => planJobUser('no-such-user-idlegrid', 0), (err: unknown) => isCoded(err, ExecError, 'ERR_RUNNER'))
    assert.throws(() => planJobUser('5-1', 0), /range/)
    assert.throws(() => planJobUser('1-100000', 0), /range/)
    assert.throws(() => planJobUser('nobody', 1000), /only a provider running as root/)
  })

  it('refuses a work root inside the data dir, a symlinked one and one owned by another user', async () => {
    assert.throws(() => { checkWorkRootOutside('/data/idl/jobs', '/data/idl') }, /inside the data dir/)
    assert.throws(() => { checkWorkRootOutside('/data/idl', '/data/idl') }, /inside the data dir/)
    checkWorkRootOutside('/data/idl-jobs', '/data/idl')
    const tmp = await tempDir('idlegrid-workroot-')
    try {
      await mkdir(join(tmp.path, 'real'))
      await symlink(join(tmp.path, 'real'), join(tmp.path, 'link'))
      const runner = new ProcessRunner()
      await assert.rejects(runner.prepareWorkRoot(join(tmp.path, 'link')), /not a directory/)
      await assert.rejects(runner.prepareWorkRoot('relative/dir'), /absolute/)
      const user = await otherUser()
      if (typeof user !== 'string') {
        const { chown } = await import('node:fs/promises')
        await chown(join(tmp.path, 'real'), user.uid, user.gid)
        await assert.rejects(runner.prepareWorkRoot(join(tmp.path, 'real')), /owned by uid/)
        // jobs as another user cannot pass a 0700 ancestor
        await mkdir(join(tmp.path, 'mine', 'work'), { recursive: true })
        await assert.rejects(runner.prepareWorkRoot(join(tmp.path, 'mine', 'work')), /does not let the job user through/)
      }
    } finally {
      await tmp.cleanup()
    }
  })
})
