/**
 * Issue 19 item 3, kills: providers SIGKILLed mid-job, one after another (20 in the full run,
 * 3 in the suite). Each victim is started again from its data directory so the market keeps
 * its capacity; every job the renter submitted must complete on another provider or be
 * reported plainly: a job lost is one that did neither.
 */
import { strict as assert } from 'node:assert'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { chaosFull, recordFault, tempDir, waitFor } from '../utils/index.js'
import { runningOn, sleepRandom, spawnSubmit, startKillNetwork, writeJob, type KillNetwork } from './kill-network.js'

describe('chaos: providers SIGKILLed mid-job', function () {
  const kills = chaosFull() ? 20 : 3
  this.timeout(120_000 + kills * 60_000)
  let kn: KillNetwork | undefined
  let tmp: { path: string, cleanup: () => Promise<void> }

  before(async () => {
    tmp = await tempDir('idlegrid-chaos-kill-providers-')
    kn = await startKillNetwork(tmp.path, 3)
  })

  after(async () => {
    await kn?.stop()
    await tmp?.cleanup()
  })

  it(`chaos: ${kills} provider kills mid-job lose no job`, async () => {
    const k = kn as KillNetwork
    const job = await writeJob(tmp.path, 'slow', 'echo start; sleep 4; tr a-z A-Z < inputs/words.txt > outputs/upper.txt')
    let completed = 0
    let reported = 0
    let lost = 0
    const failures: string[] = []
    const missed: string[] = []
    const started = Date.now()
    for (let round = 0; round < kills; round++) {
      const submit = spawnSubmit(k.renter.dataDir, tmp.path, job)
      const victim = await waitFor(async () => await runningOn(k.providers), { timeoutMs: 90_000, what: `round ${round}: the job running somewhere` })
      const index = k.providers.indexOf(victim)
      // somewhere in the job's 4 s of work, not always at its first second
      await sleepRandom(1_000)
      victim.child.kill('SIGKILL')
      // the market keeps three providers: the victim comes back while the job fails over
      const restarted = k.restartProvider(index)
      const { code, summary, stderr } = await submit.done
      await restarted
      const history: Array<{ provider: string, outcome: string }> = summary.history ?? []
      if (summary.status === 'ok' && code === 0) {
        const output = await readFile(join(summary.outputDir, 'outputs', 'upper.txt'), 'utf8').catch(() => '')
        const failedOver = history[0]?.provider === victim.peerId && history[0]?.outcome === 'lost' && summary.provider !== victim.peerId
        if (output !== 'HELLO IDLEGRID\n') { lost++; failures.push(`round ${round}: ok but output ${JSON.stringify(output)}`) } else {
          completed++
          // a job that ended before the kill landed is not lost, but the kill missed it
          if (!failedOver) missed.push(`round ${round}: the kill missed the job: ${JSON.stringify(history)}`)
        }
      } else if (typeof summary.status === 'string' && summary.status !== 'ok' && code !== 0) {
        // not completed, but the renter was told plainly (a status and a non-zero exit)
        reported++
        failures.push(`round ${round}: reported ${String(summary.status)}: ${JSON.stringify(history)}`)
      } else {
        lost++
        failures.push(`round ${round}: exit ${String(code)}, no summary: ${stderr.slice(-1000)}`)
      }
    }
    const seconds = (Date.now() - started) / 1000
    recordFault({
      fault: 'kill',
      checked: `${kills} providers SIGKILLed mid-job (restarted after): every job completes elsewhere or is reported`,
      result: lost === 0 && reported === 0 && missed.length === 0 ? 'ok' : `${lost} lost, ${reported} reported not done, ${missed.length} kills missed`,
      figure: `${completed} of ${kills} jobs completed (${completed - missed.length} after failover from the killed provider), ${reported} reported, ${lost} lost; ${(seconds / kills).toFixed(1)} s per round`
    })
    assert.equal(lost, 0, failures.join('\n'))
    // three live providers each round: a failover has somewhere to go, so every job completes
    assert.equal(completed, kills, failures.join('\n'))
    // each kill must have hit its job mid-run, or this checked nothing
    assert.deepEqual(missed, [])
  })
})
