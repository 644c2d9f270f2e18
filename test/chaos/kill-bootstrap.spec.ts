/**
 * Issue 19 item 3, kills: the network's only bootstrap SIGKILLed and started again from the
 * same data directory on the same port. The others redial it (src/node/connectivity/connector.ts redials
 * the bootstrap list while connected to none of it), everyone hears everyone again and a job
 * completes, within a bound; the time to recover is the figure.
 */
import { strict as assert } from 'node:assert'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { recordFault, tempDir, waitForMesh } from '../utils/index.js'
import { spawnSubmit, startKillNetwork, writeJob, type KillNetwork } from './kill-network.js'

/** Restart to reconnected mesh: the connector redials every 10 s, heartbeats need a few more. */
const RECONNECT_BOUND_MS = 45_000

describe('chaos: the only bootstrap killed and restarted', function () {
  this.timeout(240_000)
  let kn: KillNetwork | undefined
  let tmp: { path: string, cleanup: () => Promise<void> }

  before(async () => {
    tmp = await tempDir('idlegrid-chaos-kill-bootstrap-')
    kn = await startKillNetwork(tmp.path, 2)
  })

  after(async () => {
    await kn?.stop()
    await tmp?.cleanup()
  })

  it('chaos: the others reconnect to the restarted bootstrap and the market works again', async () => {
    const k = kn as KillNetwork
    const job = await writeJob(tmp.path, 'upper', 'tr a-z A-Z < inputs/words.txt > outputs/upper.txt')
    const old = k.bootstrap
    old.child.kill('SIGKILL')
    await old.stop()
    const restartedAt = Date.now()
    const bootstrap = await k.restartBootstrap()
    assert.equal(bootstrap.peerId, old.peerId, 'same identity from the same data directory')
    assert.equal(bootstrap.addrs[0], old.addrs[0], 'same address')
    const others = [...k.providers, k.renter]
    // every pair involving the bootstrap: DHT routing, topic subscription, heartbeats heard
    const view = await waitForMesh([bootstrap, ...others], RECONNECT_BOUND_MS, undefined, {
      needed: (a, b) => a === bootstrap || b === bootstrap
    })
    const reconnectMs = Date.now() - restartedAt
    const submitted = Date.now()
    const { code, summary, stderr } = await spawnSubmit(k.renter.dataDir, tmp.path, job).done
    const jobMs = Date.now() - submitted
    const jobOk = code === 0 && summary.status === 'ok'
    recordFault({
      fault: 'kill',
      checked: 'the only bootstrap SIGKILLed, restarted (same dir, same port): others reconnect, a job completes',
      result: view.complete && jobOk ? 'ok' : (view.complete ? `job ${String(summary.status)}` : `not reconnected: ${view.missing[0]}`),
      figure: `reconnected ${(reconnectMs / 1000).toFixed(1)} s after the restart (bound ${RECONNECT_BOUND_MS / 1000} s); next job done in ${(jobMs / 1000).toFixed(1)} s`
    })
    assert.ok(view.complete, view.missing.join('\n'))
    assert.ok(jobOk, `${JSON.stringify(summary)}\n${stderr}`)
    assert.equal(await readFile(join(summary.outputDir, 'outputs', 'upper.txt'), 'utf8'), 'HELLO IDLEGRID\n')
  })
})
