import * as assert from 'node:assert/strict'
import { chmod, chown, mkdir, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { checkDataDir, checkDisk, checkDocker, checkGpus, checkListenPorts, checkNodeVersion } from '../../src/doctor/local-checks.js'
import { otherUser, tempDir } from '../utils/index.js'
import { fakeTool, NVIDIA_SMI_2X_H100 } from './fake-tools.js'

describe('idlegrid doctor: checks of this machine', function () {
  this.timeout(20_000)
  let dir: Awaited<ReturnType<typeof tempDir>>
  beforeEach(async () => { dir = await tempDir() })
  afterEach(async () => { await dir.cleanup() })

  it('node: 22 passes, 20 fails with the fix', () => {
    assert.equal(checkNodeVersion('22.3.0').status, 'ok')
    const old = checkNodeVersion('20.20.2')
    assert.equal(old.status, 'fail')
    assert.match(old.fix ?? '', /Node 22/)
  })

  it('gpu: recorded nvidia-smi output passes; missing binary, driver failure and garbage fail', async () => {
    const good = await checkGpus(await fakeTool(dir.path, 'smi-ok', { stdout: NVIDIA_SMI_2X_H100 }))
    assert.equal(good.status, 'ok')
    assert.match(good.detail, /2x NVIDIA H100 80GB HBM3, driver 550\.54\.15/)
    const missing = await checkGpus(join(dir.path, 'no-such-smi'))
    assert.equal(missing.status, 'fail')
    assert.match(missing.detail, /not found/)
    assert.match(missing.fix ?? '', /--simulate-gpu/)
    const driver = await checkGpus(await fakeTool(dir.path, 'smi-driver', { stdout: 'NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver.\n', code: 9 }))
    assert.equal(driver.status, 'fail')
    assert.match(driver.detail, /communicate with the NVIDIA driver/)
    const garbage = await checkGpus(await fakeTool(dir.path, 'smi-garbage', { stdout: 'x'.repeat(5000) + '\n' }))
    assert.equal(garbage.status, 'fail')
    assert.ok(garbage.detail.length <= 160, 'a bounded one-line detail')
    const none = await checkGpus(await fakeTool(dir.path, 'smi-none', { stdout: '' }))
    assert.equal(none.status, 'fail')
  })

  it('docker: engine with the nvidia runtime passes; no CLI, no engine and no GPU runtime are reported', async () => {
    const withGpu = await checkDocker({
      docker: await fakeTool(dir.path, 'docker-gpu', { byArg: { version: { stdout: '26.1.5\n' }, info: { stdout: '{"nvidia":{"path":"nvidia-container-runtime"},"runc":{"path":"runc"}} null\n' } } })
    })
    assert.deepEqual(withGpu.map(r => [r.id, r.status]), [['docker', 'ok'], ['docker.gpu-runtime', 'ok']])
    assert.match(withGpu[0].detail, /26\.1\.5/)

    const noCli = await checkDocker({ docker: join(dir.path, 'no-docker') })
    assert.deepEqual(noCli.map(r => [r.id, r.status]), [['docker', 'fail']])
    assert.match(noCli[0].fix ?? '', /docker\.io|--runner process/)

    const noEngine = await checkDocker({ docker: await fakeTool(dir.path, 'docker-down', { stderr: 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n', code: 1 }) })
    assert.equal(noEngine[0].status, 'fail')
    assert.match(noEngine[0].detail, /Cannot connect to the Docker daemon/)

    const noRuntime = await checkDocker({
      docker: await fakeTool(dir.path, 'docker-cpu', { byArg: { version: { stdout: '26.1.5\n' }, info: { stdout: '{"runc":{"path":"runc"}} null\n' } } })
    })
    assert.deepEqual(noRuntime.map(r => [r.id, r.status]), [['docker', 'ok'], ['docker.gpu-runtime', 'warn']])
    assert.match(noRuntime[1].fix ?? '', /nvidia-container-toolkit/)
  })

  it('data dir: a fresh path and an owner-only dir pass; a file, a world-writable dir and another owner fail', async () => {
    assert.equal((await checkDataDir(join(dir.path, 'new', 'data'))).status, 'ok')
    const mine = join(dir.path, 'mine')
    await mkdir(mine, { mode: 0o700 })
    assert.equal((await checkDataDir(mine)).status, 'ok')
    const file = join(dir.path, 'file')
    await writeFile(file, '')
    assert.equal((await checkDataDir(file)).status, 'fail')
    const open = join(dir.path, 'open')
    await mkdir(open)
    await chmod(open, 0o777)
    const world = await checkDataDir(open)
    assert.equal(world.status, 'fail')
    assert.match(world.fix ?? '', /chmod 700/)
    const other = await otherUser()
    if (typeof other === 'string') return
    const theirs = join(dir.path, 'theirs')
    await mkdir(theirs, { mode: 0o700 })
    await chown(theirs, other.uid, other.gid)
    const owned = await checkDataDir(theirs)
    assert.equal(owned.status, 'fail')
    assert.match(owned.detail, new RegExp(`owned by uid ${other.uid}`))
  })

  it('disk: limits above the free space fail or warn', async () => {
    assert.equal((await checkDisk(dir.path, { failBelowBytes: 1, warnBelowBytes: 2 })).status, 'ok')
    assert.equal((await checkDisk(dir.path, { failBelowBytes: 1, warnBelowBytes: Number.MAX_SAFE_INTEGER })).status, 'warn')
    const full = await checkDisk(join(dir.path, 'not', 'yet'), { failBelowBytes: Number.MAX_SAFE_INTEGER, warnBelowBytes: Number.MAX_SAFE_INTEGER })
    assert.equal(full.status, 'fail')
    assert.match(full.detail, new RegExp(`free at ${dir.path}`))
  })

  it('ports: a port in use fails naming it; a free one and tcp/0 pass', async () => {
    const server: Server = createServer()
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as { port: number }).port
    try {
      const busy = await checkListenPorts([`/ip4/127.0.0.1/tcp/${port}`, '/ip4/127.0.0.1/tcp/0'], false)
      assert.equal(busy.status, 'fail')
      assert.match(busy.detail, new RegExp(`tcp/${port} \\(EADDRINUSE\\)`))
      assert.equal((await checkListenPorts([`/ip4/127.0.0.1/tcp/${port}`], true)).status, 'ok', 'held by the node running on the data dir')
    } finally {
      await new Promise(resolve => server.close(resolve))
    }
    assert.equal((await checkListenPorts([`/ip4/127.0.0.1/tcp/${port}`], false)).status, 'ok')
    assert.equal((await checkListenPorts(['/ip4/127.0.0.1/tcp/0'], false)).status, 'ok')
  })
})
