/**
 * The docker runner against a real engine (DOCKER_HOST; .ci/run starts a private one with
 * scripts/docker-engine.sh): what the job can and cannot do inside its container, the limits,
 * stops, and engine or image errors reported as failures with their reason.
 */
import { strict as assert } from 'node:assert'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, readFile, stat } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { join } from 'node:path'
import { measureDir } from '../../../src/exec/runners/disk-watch.js'
import { DockerRunner, type DockerRunnerOptions, type RunSpec } from '../../../src/exec/runners/index.js'
import { recordAttack, tempDir, waitFor } from '../../utils/index.js'
import { containersOf, engineMissing, TEST_IMAGE } from './docker-engine.js'

const MiB = 1024 * 1024

function runner (more: Partial<DockerRunnerOptions> = {}): DockerRunner {
  return new DockerRunner({ allowedImages: [TEST_IMAGE, 'idlegrid-nosuch*'], pull: 'never', memoryMib: 128, cpus: 1, pidsLimit: 64, ...more })
}

describe('exec: docker runner on a real engine', function () {
  this.timeout(60_000)
  let tmp: { path: string, cleanup: () => Promise<void> }

  before(async function () {
    const why = engineMissing()
    if (why != null) {
      console.log(`      (skipped: ${why})`)
      this.skip()
    }
    tmp = await tempDir('idlegrid-docker-')
  })
  after(async () => { await tmp?.cleanup() })

  async function job (name: string, script: string, more: Partial<RunSpec> = {}): Promise<RunSpec> {
    const dir = join(tmp.path, name)
    await mkdir(join(dir, 'inputs'), { recursive: true })
    await mkdir(join(dir, 'outputs'), { recursive: true })
    return { jobId: randomBytes(16).toString('hex'), workDir: dir, image: TEST_IMAGE, command: ['sh', '-c', script], env: {}, timeoutMs: 30_000, graceMs: 2_000, ...more }
  }

  const out = async (spec: RunSpec, file: string): Promise<string> => (await readFile(join(spec.workDir, 'outputs', file), 'utf8')).trim()

  it('confines the job: non-root, read-only root, writable work dir, no network, no capabilities, limits', async () => {
    let reached = 0
    const server: Server = createServer((_req, res) => { reached++; res.end('provider secret') })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as { port: number }).port
    try {
      const spec = await job('confined', [
        'o=/job/outputs',
        'id -u > $o/uid',
        'if touch /rootfile 2>/dev/null; then echo yes; else echo no; fi > $o/root-writable',
        'echo scratch > /job/scratch.txt && echo yes > $o/work-writable',
        'grep -E "^(CapEff|NoNewPrivs):" /proc/self/status | tr -s "\\t " " " > $o/status',
        'ls /sys/class/net > $o/net',
        // the provider's own loopback services (its node, a wallet …) are out of reach
        // (nc: busybox's static wget crashes in these images, which would read as "refused" whatever the network)
        `if printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 127.0.0.1 ${port} 2>/dev/null | grep -q secret; then echo reached; else echo refused; fi > $o/connect`,
        'grep "Max file size" /proc/self/limits | tr -s " " > $o/fsize',
        'cg () { for f in "$@"; do if [ -r "$f" ]; then cat "$f"; return; fi; done; echo none; }',
        'cg /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max > $o/mem',
        'cg /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max > $o/pids',
        'cg /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu.max > $o/cpu',
        'echo done'
      ].join('\n'), { diskBytes: 50 * MiB })
      const lines: string[] = []
      const outcome = await runner().start(spec, l => lines.push(l.line)).done
      assert.equal(outcome.status, 'completed', `${outcome.detail ?? ''} ${lines.join('\n')}`)
      assert.equal(outcome.exitCode, 0)
      assert.equal(await out(spec, 'uid'), '65534')
      assert.equal(await out(spec, 'root-writable'), 'no')
      assert.equal(await out(spec, 'work-writable'), 'yes')
      assert.equal((await stat(join(spec.workDir, 'scratch.txt'))).uid, 65534, 'the job owns what it writes, not root')
      assert.deepEqual((await out(spec, 'status')).split('\n').sort(), ['CapEff: 0000000000000000', 'NoNewPrivs: 1'])
      assert.equal(await out(spec, 'net'), 'lo')
      assert.equal(await out(spec, 'connect'), 'refused')
      assert.equal(reached, 0)
      assert.match(await out(spec, 'fsize'), new RegExp(`^Max file size ${50 * MiB} ${50 * MiB} bytes`))
      assert.equal(await out(spec, 'mem'), String(128 * MiB))
      assert.equal(await out(spec, 'pids'), '64')
      assert.match(await out(spec, 'cpu'), /^100000( 100000)?$/)
      assert.deepEqual(containersOf(spec.jobId), [], 'the container is removed after the run')
    } finally {
      server.close()
    }
  })

  it('kills the job at its time limit: TIMEOUT, container gone', async () => {
    const spec = await job('timeout', 'echo started; sleep 60', { timeoutMs: 1_500, graceMs: 500 })
    const outcome = await runner().start(spec, () => {}).done
    assert.equal(outcome.status, 'timeout', outcome.detail)
    assert.deepEqual(containersOf(spec.jobId), [])
  })

  it('preemption: SIGTERM reaches the job, it writes its checkpoint, and the run ends preempted', async () => {
    const spec = await job('preempt', 'trap "echo step-7 > /job/outputs/ckpt.txt; exit 0" TERM; echo started; while true; do sleep 0.1; done', { graceMs: 10_000 })
    const lines: string[] = []
    const handle = runner().start(spec, l => lines.push(l.line))
    await waitFor(() => lines.includes('started'), { timeoutMs: 20_000, intervalMs: 20, what: 'the job to start' })
    handle.preempt(10_000, 'test')
    const outcome = await handle.done
    assert.equal(outcome.status, 'preempted')
    assert.equal(outcome.exitCode, 0)
    assert.equal(await out(spec, 'ckpt.txt'), 'step-7')
  })

  it('preemption: a job that ignores SIGTERM is SIGKILLed after the grace', async () => {
    const spec = await job('preempt-kill', 'trap "" TERM; echo started; while true; do sleep 0.1; done')
    const lines: string[] = []
    const handle = runner().start(spec, l => lines.push(l.line))
    await waitFor(() => lines.includes('started'), { timeoutMs: 20_000, intervalMs: 20, what: 'the job to start' })
    handle.preempt(500, 'test')
    const outcome = await handle.done
    assert.equal(outcome.status, 'preempted')
    assert.equal(outcome.exitCode, 137, 'killed by SIGKILL')
    assert.deepEqual(containersOf(spec.jobId), [])
  })

  it('stops a job that writes past its disk share; no single file outgrows it', async () => {
    const share = 8 * MiB
    const spec = await job('disk', 'dd if=/dev/zero of=/job/outputs/big bs=1048576 count=32 2>/dev/null; echo "big: $?"; i=0; while true; do dd if=/dev/zero of=/job/outputs/f$i bs=1048576 count=1 2>/dev/null; i=$((i+1)); done', { diskBytes: share })
    const lines: string[] = []
    const outcome = await runner().start(spec, l => lines.push(l.line)).done
    assert.equal(outcome.status, 'failed')
    assert.match(outcome.detail ?? '', /past its disk share/)
    assert.ok((await stat(join(spec.workDir, 'outputs', 'big'))).size <= share, 'fsize stopped the single big file')
    assert.ok(lines.some(l => /^big: [1-9]/.test(l)), `dd saw the file size limit: ${lines.join('|')}`)
    const wrote = (await measureDir(spec.workDir)).bytes
    console.log(`      (disk share ${share} bytes; the job held ${wrote} when stopped)`)
    assert.ok(wrote < share + 512 * MiB, `overshoot bounded: ${wrote}`)
  })

  it('a job past its memory limit fails: out of memory', async () => {
    const spec = await job('oom', 'dd if=/dev/zero of=/dev/null bs=300M count=1; echo survived', { memoryMib: 64 })
    const lines: string[] = []
    const outcome = await runner({ memoryMib: 64 }).start(spec, l => lines.push(l.line)).done
    assert.equal(outcome.status, 'failed', lines.join('\n'))
    assert.match(outcome.detail ?? '', /out of memory/)
  })

  it('an engine it cannot reach is a FAILED run with the reason', async () => {
    const spec = await job('unreachable', 'echo never')
    const outcome = await runner({ host: 'unix:///tmp/idlegrid-no-engine/docker.sock' }).start(spec, () => {}).done
    assert.equal(outcome.status, 'failed')
    assert.equal(outcome.exitCode, -1)
    assert.equal(outcome.detail, 'docker engine not reachable at unix:///tmp/idlegrid-no-engine/docker.sock')
  })

  it('an image the engine does not have is a FAILED run with the reason', async () => {
    const spec = await job('no-image', 'echo never', { image: 'idlegrid-nosuch:1' })
    const outcome = await runner().start(spec, () => {}).done
    assert.equal(outcome.status, 'failed')
    assert.equal(outcome.exitCode, -1)
    assert.match(outcome.detail ?? '', /image idlegrid-nosuch:1 is not on the docker engine/)
  })

  it('a command the image does not have is a FAILED run', async () => {
    const spec = { ...(await job('no-command', '')), command: ['no-such-command-idlegrid'] }
    const outcome = await runner().start(spec, () => {}).done
    assert.equal(outcome.status, 'failed')
    assert.match(outcome.detail ?? '', /not in image/)
  })

  it('honours the engine address: DOCKER_HOST from the provider, or the runner\'s host option', async function () {
    const host = process.env.DOCKER_HOST
    if (host == null || host === '') {
      console.log('      (skipped: the engine is on the default socket here; the option is only testable with DOCKER_HOST)')
      this.skip()
    }
    const spec = await job('host', 'echo via-option > /job/outputs/o.txt')
    delete process.env.DOCKER_HOST
    try {
      const outcome = await runner({ host }).start(spec, () => {}).done
      assert.equal(outcome.status, 'completed', outcome.detail)
      assert.equal(await out(spec, 'o.txt'), 'via-option')
      if (!existsSync('/var/run/docker.sock')) {
        const without = await runner().start(await job('host-default', 'true'), () => {}).done
        assert.equal(without.status, 'failed', 'no engine on the default socket')
        assert.match(without.detail ?? '', /not reachable at the default socket/)
      }
    } finally {
      process.env.DOCKER_HOST = host
    }
  })

  it('red team (issue 13 item 7): a job seeks root and unbounded disk; a dead engine cannot yield COMPLETED', async () => {
    const share = 4 * MiB
    const spec = await job('attack7', 'id -u > /job/outputs/uid; chmod u+s /bin/busybox 2>/dev/null && echo setuid >> /job/outputs/uid; i=0; while true; do dd if=/dev/zero of=/job/f$i bs=1048576 count=1 2>/dev/null; i=$((i+1)); done', { diskBytes: share })
    const outcome = await runner().start(spec, () => {}).done
    const uid = await out(spec, 'uid')
    const held = (await measureDir(spec.workDir)).bytes
    const dead = await runner({ host: 'unix:///tmp/idlegrid-no-engine/docker.sock' }).start(await job('attack7-dead', 'true'), () => {}).done
    recordAttack({
      issue: '13.7',
      attack: 'docker job: run as root, fill the disk; provider with its engine elsewhere',
      got: `uid ${uid}; disk writer stopped (${outcome.status}) holding ${(held / MiB).toFixed(1)} MiB of a ${share / MiB} MiB share; dead engine → ${dead.status.toUpperCase()} (${dead.detail ?? ''})`,
      limit: '--user 65534:65534, --ulimit fsize + work dir measured every 100 ms, engine errors FAILED'
    })
    assert.equal(uid, '65534')
    assert.equal(outcome.status, 'failed')
    assert.equal(dead.status, 'failed')
  })
})
