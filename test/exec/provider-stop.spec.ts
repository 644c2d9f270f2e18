/**
 * A provider stopped while a job runs (node.stop(), as at a clean shutdown) ends the job and
 * cleans up after it before it lets go of its runner's launcher: the job's processes are gone
 * and, on a Docker engine, so is its container (the `docker kill` / `rm` calls go through the
 * launcher, which must still be there for them). Real nodes on 127.0.0.1, a real renter.
 */
import { strict as assert } from 'node:assert'
import { chmod } from 'node:fs/promises'
import { join } from 'node:path'
import { resolveConfig } from '../../src/config/index.js'
import { runAttempt, type AttemptResult, type JobPayload } from '../../src/exec/index.js'
import { DockerRunner, ProcessRunner, type Runner } from '../../src/exec/runners/index.js'
import { openAward } from '../../src/market/index.js'
import { createNode, type IdlegridNode } from '../../src/node/index.js'
import { tempDir, waitFor } from '../utils/index.js'
import { containersOf, engineMissing, TEST_IMAGE } from './runners/docker-engine.js'
import { execProviderServices, makeAward } from './fixtures.js'
import { running } from './runners/process-fixtures.js'
import { toHex } from '../../src/common/index.js'

interface Stopped { result: AttemptResult, jobIdHex: string, stopMs: number, upLine: string }

/** Starts `job` on a fresh provider with `runner`, stops the provider once the job printed "up". */
async function stopMidJob (dir: string, runner: Runner, job: JobPayload): Promise<Stopped> {
  const nodes: IdlegridNode[] = []
  try {
    const make = async (role: 'provider' | 'renter', services?: Record<string, (components: any) => unknown>): Promise<IdlegridNode> => {
      const config = resolveConfig({ role, flags: { dataDir: join(dir, role), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], heartbeatSeconds: 60 } })
      const node = await createNode(config, services != null ? { services } : {})
      nodes.push(node)
      return node
    }
    const provider = await make('provider', execProviderServices({
      runner,
      gpus: [{ index: 0, uuid: 'GPU-sim-h100-0', simulated: true, modelKey: 'h100-80gb' }],
      workRoot: join(dir, 'work'),
      requireAccepted: false,
      graceMs: 1_000
    }, join(dir, 'provider')))
    const renter = await make('renter')
    await renter.libp2p.dial(provider.libp2p.getMultiaddrs()[0])
    const awarded = makeAward(renter, provider.peerId)
    const jobIdHex = toHex(openAward(awarded.award).message.jobId)
    let upLine = ''
    const attempt = runAttempt(awarded, job, {
      libp2p: renter.libp2p,
      privateKey: renter.privateKey,
      peerId: renter.peerId,
      dir: join(dir, 'out'),
      onEvent: (e) => { if (e.type === 'log' && e.line.startsWith('up')) upLine = e.line }
    })
    await waitFor(() => upLine !== '', { timeoutMs: 30_000, what: 'the job to start' })
    const t0 = Date.now()
    await provider.stop()
    const stopMs = Date.now() - t0
    return { result: await attempt, jobIdHex, stopMs, upLine }
  } finally {
    await Promise.all(nodes.map(async n => { await n.stop() }))
  }
}

describe('exec: a provider stopped mid-job', function () {
  this.timeout(120_000)
  let tmp: { path: string, cleanup: () => Promise<void> }
  beforeEach(async () => {
    tmp = await tempDir('idlegrid-provider-stop-')
    // jobs run as another user when we are root: it must pass through to the work root
    await chmod(tmp.path, 0o711)
  })
  afterEach(async () => { await tmp.cleanup() })

  it('process runner: the job\'s processes are gone when stop() returns, and the renter\'s attempt ends', async () => {
    const stopped = await stopMidJob(tmp.path, new ProcessRunner(), {
      runtime: { command: ['/bin/sh', '-c', 'sleep 600 & echo "up $$ $!"; wait'], timeoutMs: 600_000 },
      inputs: []
    })
    assert.notEqual(stopped.result.outcome, 'ok')
    const pids = stopped.upLine.split(' ').slice(1).map(Number)
    assert.equal(pids.length, 2)
    for (const pid of pids) assert.ok(!running(pid), `job process ${pid} still runs after the provider stopped`)
    assert.ok(stopped.stopMs < 15_000, `stop took ${stopped.stopMs} ms`)
  })

  it('docker runner: the container is removed before stop() returns (its kill and rm go through the launcher)', async function () {
    const why = engineMissing()
    if (why != null) {
      console.log(`      (skipped: ${why})`)
      this.skip()
    }
    const stopped = await stopMidJob(tmp.path, new DockerRunner({ allowedImages: [TEST_IMAGE], pull: 'never' }), {
      runtime: { image: TEST_IMAGE, command: ['sh', '-c', 'echo up; sleep 600'], timeoutMs: 600_000 },
      inputs: []
    })
    assert.notEqual(stopped.result.outcome, 'ok')
    assert.deepEqual(containersOf(stopped.jobIdHex), [], 'no container of the job is left on the engine')
    assert.ok(stopped.stopMs < 15_000, `stop took ${stopped.stopMs} ms`)
  })
})
