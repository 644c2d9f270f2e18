/**
 * Issue 19 item 3, kills: a renter killed mid-submit. Twice: the `idlegrid submit` command
 * (its control connection closes, the renter node cancels the attempt), then the renter node
 * itself (its connections close). Either way the provider must stop the orphan job within a
 * bound (its attempt record leaves 'running' and none of the job's processes is left), and a
 * rerun of the same job file completes, the node restarted where it died.
 */
import { strict as assert } from 'node:assert'
import { randomBytes } from 'node:crypto'
import { recordFault, tempDir, waitFor } from '../utils/index.js'
import { processesWith, providerJobs, spawnSubmit, startKillNetwork, writeJob, type KillNetwork } from './kill-network.js'
import type { NodeProcess } from '../utils/index.js'

/** From the kill to the orphan's processes gone; the job itself would run about 7 s more. */
const ORPHAN_STOP_BOUND_MS = 5_000

describe('chaos: a renter killed mid-submit', function () {
  this.timeout(240_000)
  let kn: KillNetwork | undefined
  let tmp: { path: string, cleanup: () => Promise<void> }
  const marker = `orphan-${randomBytes(6).toString('hex')}`
  let job: string

  before(async () => {
    tmp = await tempDir('idlegrid-chaos-kill-renter-')
    kn = await startKillNetwork(tmp.path, 1)
    // about 7 s of work, its /bin/sh carrying the marker in its command line
    job = await writeJob(tmp.path, 'long', `: ${marker}; echo start; i=0; while [ $i -lt 35 ]; do sleep 0.2; i=$((i+1)); done; tr a-z A-Z < inputs/words.txt > outputs/upper.txt`)
  })

  after(async () => {
    await kn?.stop()
    await tmp?.cleanup()
  })

  /**
   * Starts the job, waits until it runs on the provider, kills `victim()`; resolves with ms from
   * the kill until the orphan is stopped.
   */
  async function killMidJob (what: string, kill: (submit: ReturnType<typeof spawnSubmit>) => void): Promise<{ stopMs: number, submitEnd: Awaited<ReturnType<typeof spawnSubmit>['done']> }> {
    const k = kn as KillNetwork
    const provider = k.providers[0] as NodeProcess
    const submit = spawnSubmit(k.renter.dataDir, tmp.path, job)
    await waitFor(async () => (await providerJobs(provider)).some(j => j.state === 'running') && processesWith(marker).length > 0, { timeoutMs: 90_000, what: `${what}: the job running` })
    const killedAt = Date.now()
    kill(submit)
    const submitEnd = await submit.done
    await waitFor(async () => processesWith(marker).length === 0 && !(await providerJobs(provider)).some(j => j.state === 'running'),
      { timeoutMs: 60_000, what: `${what}: the provider to stop the orphan job` })
    return { stopMs: Date.now() - killedAt, submitEnd }
  }

  async function rerun (what: string): Promise<{ ok: boolean, detail: string }> {
    const k = kn as KillNetwork
    const { code, summary, stderr } = await spawnSubmit(k.renter.dataDir, tmp.path, job).done
    return { ok: code === 0 && summary.status === 'ok', detail: `${what}: rerun exit ${String(code)} ${JSON.stringify(summary)} ${stderr.slice(-1000)}` }
  }

  it('chaos: the submit command SIGKILLed mid-job: the provider stops the orphan, a rerun completes', async () => {
    const { stopMs } = await killMidJob('submit killed', submit => { submit.child.kill('SIGKILL') })
    const again = await rerun('submit killed')
    recordFault({
      fault: 'kill',
      checked: 'the renter\'s submit command SIGKILLed mid-job: provider stops the orphan, rerun completes',
      result: stopMs <= ORPHAN_STOP_BOUND_MS && again.ok ? 'ok' : `orphan stopped in ${stopMs} ms, rerun ${again.ok ? 'ok' : 'failed'}`,
      figure: `orphan stopped ${(stopMs / 1000).toFixed(1)} s after the kill (bound ${ORPHAN_STOP_BOUND_MS / 1000} s); rerun ${again.ok ? 'completed' : 'failed'}`
    })
    assert.ok(stopMs <= ORPHAN_STOP_BOUND_MS, `orphan stopped after ${stopMs} ms`)
    assert.ok(again.ok, again.detail)
  })

  it('chaos: the renter node SIGKILLed mid-job: the submit reports it, the provider stops the orphan, a rerun after restart completes', async () => {
    const k = kn as KillNetwork
    const { stopMs, submitEnd } = await killMidJob('renter node killed', () => { k.renter.child.kill('SIGKILL') })
    // the command lost its node: it says so and fails, it does not hang or claim success
    const reported = submitEnd.code !== 0 && submitEnd.summary.status !== 'ok' && submitEnd.stderr.trim().length > 0
    await k.restartRenter()
    const again = await rerun('renter node killed')
    recordFault({
      fault: 'kill',
      checked: 'the renter node SIGKILLed mid-job: submit reports it, provider stops the orphan, rerun after restart completes',
      result: stopMs <= ORPHAN_STOP_BOUND_MS && again.ok && reported ? 'ok' : `orphan stopped in ${stopMs} ms, reported ${String(reported)}, rerun ${again.ok ? 'ok' : 'failed'}`,
      figure: `orphan stopped ${(stopMs / 1000).toFixed(1)} s after the kill (bound ${ORPHAN_STOP_BOUND_MS / 1000} s); submit said: ${submitEnd.stderr.trim().split('\n').pop()?.replace(k.renter.dataDir, 'DIR').slice(0, 100) ?? ''}`
    })
    assert.ok(reported, `submit exit ${String(submitEnd.code)}: ${JSON.stringify(submitEnd.summary)} ${submitEnd.stderr}`)
    assert.ok(stopMs <= ORPHAN_STOP_BOUND_MS, `orphan stopped after ${stopMs} ms`)
    assert.ok(again.ok, again.detail)
  })
})
