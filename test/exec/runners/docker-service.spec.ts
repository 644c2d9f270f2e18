/**
 * Service leases under the docker runner, on a real engine (issue 38 item 1): each lease's
 * container listens on its port inside a network of its own with no route out, reached by
 * the provider at its address there; still non-root, read-only, without capabilities; a
 * preempted lease is drained with SIGTERM; the network goes with the lease. And `--shm-size`
 * within the provider's bound.
 */
import { strict as assert } from 'node:assert'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { join } from 'node:path'
import { DockerRunner, type DockerRunnerOptions, type RunHandle, type RunSpec, type ServiceNetwork } from '../../../src/exec/runners/index.js'
import { ExecError } from '../../../src/exec/errors.js'
import { dockerClientEnv } from '../../../src/exec/runners/docker-client.js'
import { sweepOwner } from '../../../src/exec/runners/service-network.js'
import { freePort } from '../../../src/serve/host.js'
import { recordAttack, tempDir, waitFor } from '../../utils/index.js'
import { engineMissing, TEST_IMAGE } from './docker-engine.js'
import { isCoded } from '../../../src/common/index.js'

/** every container and lease network this spec makes carries this owner label: after() removes them on every path */
const OWNER = randomBytes(8).toString('hex')

function runner (more: Partial<DockerRunnerOptions> = {}): DockerRunner {
  return new DockerRunner({ allowedImages: [TEST_IMAGE], pull: 'never', memoryMib: 256, cpus: 1, pidsLimit: 64, owner: OWNER, ...more })
}

async function get (host: string, port: number, path: string): Promise<{ status: number, body: string }> {
  return await new Promise(resolve => {
    const req = request({ host, port, path, timeout: 3_000 }, res => {
      let body = ''
      res.setEncoding('utf8').on('data', (c: string) => { body += c }).on('end', () => { resolve({ status: res.statusCode ?? 0, body }) })
    })
    req.on('timeout', () => { req.destroy() })
    req.on('error', () => { resolve({ status: 0, body: '' }) })
    req.end()
  })
}

const networksOf = (jobId: string): string[] => execFileSync('docker', ['network', 'ls', '-q', '--filter', `label=idlegrid.lease=${jobId}`], { encoding: 'utf8', timeout: 15_000 }).split('\n').filter(l => l.trim() !== '')

describe('exec: service leases under the docker runner (real engine)', function () {
  this.timeout(90_000)
  let tmp: { path: string, cleanup: () => Promise<void> }

  before(async function () {
    const why = engineMissing()
    if (why != null) {
      console.log(`      (skipped: ${why})`)
      this.skip()
    }
    tmp = await tempDir('idlegrid-docker-svc-')
  })
  after(async () => {
    // a failed assertion or a timeout must not leave containers or bridges behind
    if (engineMissing() == null) await sweepOwner({ docker: 'docker', env: dockerClientEnv() }, OWNER)
    await tmp?.cleanup()
  })

  /**
   * A lease serving inputs/www with busybox httpd on $PORT (what a service file would ship), and a
   * script of its own.
   */
  async function lease (
    name: string,
    script: string
  ): Promise<{ spec: RunSpec, network: ServiceNetwork, r: DockerRunner }> {
    const r = runner()
    const jobId = randomBytes(16).toString('hex')
    const dir = join(tmp.path, name)
    await mkdir(join(dir, 'inputs', 'www'), { recursive: true })
    await mkdir(join(dir, 'outputs'), { recursive: true })
    await writeFile(join(dir, 'inputs', 'www', 'health'), 'ok\n')
    await writeFile(join(dir, 'inputs', 'www', 'name'), `${name}\n`)
    const network = await r.openServiceNetwork(jobId)
    const port = await freePort()
    const spec: RunSpec = {
      jobId,
      workDir: dir,
      image: TEST_IMAGE,
      env: { PORT: String(port) },
      timeoutMs: 60_000,
      graceMs: 2_000,
      command: ['sh', '-c', `${script}\nexec httpd -f -p "$PORT" -h /job/inputs/www`],
      service: { port, network: network.name }
    }
    return { spec, network, r }
  }

  async function serving (handle: RunHandle, spec: RunSpec): Promise<{ host: string, port: number }> {
    assert.ok(handle.endpoint != null, 'a docker lease says where it is reached')
    const at = await handle.endpoint()
    assert.equal(at.port, spec.service?.port)
    await waitFor(async () => (await get(at.host, at.port, '/health')).status === 200, { timeoutMs: 20_000, what: 'the service answering its health path' })
    return at
  }

  it('serves on its own internal network, reached by the provider; confined as a job; drained by SIGTERM; the network goes with it', async () => {
    const { spec, network, r } = await lease('one', [
      'o=/job/outputs',
      'id -u > $o/uid',
      'if touch /rootfile 2>/dev/null; then echo yes; else echo no; fi > $o/root-writable',
      'grep -E "^CapEff:" /proc/self/status | tr -s "\\t " " " > $o/caps',
      'ls /sys/class/net | sort | tr "\\n" " " > $o/net',
      'trap "echo drained > $o/term; exit 0" TERM'
    ].join('\n'))
    const internal = execFileSync('docker', ['network', 'inspect', '--format', '{{.Internal}}', network.name], { encoding: 'utf8' }).trim()
    assert.equal(internal, 'true', 'the lease network is created --internal')
    const handle = r.start(spec, () => {})
    try {
      const at = await serving(handle, spec)
      assert.notEqual(at.host, '127.0.0.1', 'reached at its address on the lease network')
      assert.deepEqual(await get(at.host, at.port, '/name'), { status: 200, body: 'one\n' })
      assert.equal((await readFile(join(spec.workDir, 'outputs', 'uid'), 'utf8')).trim(), '65534')
      assert.equal((await readFile(join(spec.workDir, 'outputs', 'root-writable'), 'utf8')).trim(), 'no')
      assert.equal((await readFile(join(spec.workDir, 'outputs', 'caps'), 'utf8')).trim(), 'CapEff: 0000000000000000')
      assert.equal((await readFile(join(spec.workDir, 'outputs', 'net'), 'utf8')).trim(), 'eth0 lo', 'one network: its lease\'s')
    } finally {
      handle.preempt(2_000, 'drain test')
    }
    const outcome = await handle.done
    assert.equal(outcome.status, 'preempted')
    await network.remove()
    assert.deepEqual(networksOf(spec.jobId), [], 'the lease network is removed')
  })

  it('red team: a lease cannot reach another lease\'s service through the host (its network is its own)', async () => {
    const victim = await lease('victim', '')
    const victimRun = victim.r.start(victim.spec, () => {})
    const attacker = await lease('attacker', '')
    let attackerRun: RunHandle | undefined
    try {
      const at = await serving(victimRun, victim.spec)
      // the attacker knows the victim's address and port (say, by guessing): it tries them, and its gateway
      const probe = await lease('probe', [
        'o=/job/outputs',
        // busybox's static wget crashes in these images: nc speaks the HTTP
        `if printf 'GET /name HTTP/1.0\\r\\n\\r\\n' | nc -w 3 ${at.host} ${at.port} 2>/dev/null | grep -q victim; then echo reached; else echo refused; fi > $o/to-victim`,
        'ip route > $o/routes 2>/dev/null || true'
      ].join('\n'))
      attackerRun = probe.r.start(probe.spec, () => {})
      await serving(attackerRun, probe.spec)
      const verdict = (await readFile(join(probe.spec.workDir, 'outputs', 'to-victim'), 'utf8')).trim()
      recordAttack({ issue: '38.1', attack: 'a service lease dials another lease\'s service by address', got: verdict, limit: 'refused' })
      assert.equal(verdict, 'refused', `another lease's service is out of reach (routes: ${await readFile(join(probe.spec.workDir, 'outputs', 'routes'), 'utf8').catch(() => '?')})`)
      attackerRun.cancel('done')
      await attackerRun.done
      await probe.network.remove()
    } finally {
      attackerRun?.cancel('done')
      victimRun.cancel('done')
      await victimRun.done
      await victim.network.remove()
      await attacker.network.remove()
    }
  })

  it('a provider started again removes the containers and lease networks its killed predecessor left', async () => {
    const owner = randomBytes(8).toString('hex')
    const first = runner({ owner })
    const jobId = randomBytes(16).toString('hex')
    const network = await first.openServiceNetwork(jobId)
    const dir = join(tmp.path, 'orphan')
    await mkdir(join(dir, 'outputs'), { recursive: true })
    // the first provider "dies": its run is never stopped, its network never removed
    const orphan = first.start({ jobId, workDir: dir, image: TEST_IMAGE, env: {}, timeoutMs: 120_000, graceMs: 1_000, command: ['sleep', '600'], service: { port: 8080, network: network.name } }, () => {})
    await waitFor(() => execFileSync('docker', ['ps', '-q', '--filter', `label=idlegrid.job=${jobId}`], { encoding: 'utf8' }).trim() !== '', { timeoutMs: 20_000, what: 'the orphan running' })
    const again = runner({ owner })
    again.open()
    assert.deepEqual(await again.swept, { containers: 1, networks: 1 })
    again.close()
    assert.equal(execFileSync('docker', ['ps', '-aq', '--filter', `label=idlegrid.job=${jobId}`], { encoding: 'utf8' }).trim(), '', 'the orphan container is gone')
    assert.deepEqual(networksOf(jobId), [], 'its network too')
    const outcome = await orphan.done
    assert.notEqual(outcome.status, 'completed')
  })

  it('--shm-size: the container gets the shared memory the job asks for, within the provider\'s bound', async () => {
    const r = runner({ maxShmMiB: 128 })
    const dir = join(tmp.path, 'shm')
    await mkdir(join(dir, 'outputs'), { recursive: true })
    const spec: RunSpec = { jobId: randomBytes(16).toString('hex'), workDir: dir, image: TEST_IMAGE, env: {}, timeoutMs: 30_000, graceMs: 1_000, command: ['sh', '-c', 'df -k /dev/shm | tail -1 | tr -s " " | cut -d" " -f2 > /job/outputs/shm'], shmSizeMiB: 96 }
    const outcome = await r.start(spec, () => {}).done
    assert.equal(outcome.status, 'completed', outcome.detail)
    assert.equal(Number((await readFile(join(dir, 'outputs', 'shm'), 'utf8')).trim()), 96 * 1024, '/dev/shm is 96 MiB')
    assert.throws(() => { r.check({ ...spec, shmSizeMiB: 129 }) }, (err: Error) => isCoded(err, ExecError, 'ERR_RUNNER') && /129 MiB is over this provider's bound of 128 MiB/.test(err.message))
    assert.throws(() => { runner({ maxShmMiB: 10_000 }).check({ ...spec, shmSizeMiB: 300 }) }, /over this provider's bound of 256 MiB/, 'never above the memory limit: it counts against it')
  })
})
