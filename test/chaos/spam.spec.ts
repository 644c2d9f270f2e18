/**
 * Chaos, spam (issue 19 item 5): separate `idlegrid` processes on 127.0.0.1 (a bootstrap, two
 * providers, a renter) and an attacker process (test/redteam/attacks/spam.ts) sending 1,000
 * invalid messages a second on every topic and opening streams on every idlegrid protocol as
 * fast as it can. Honest auctions (`idlegrid submit --auction-only`) run quiet and then under
 * the spam: all must complete with a p95 within 2× the quiet one; every honest node must score
 * the spammer below gossipsub's graylist threshold (its messages then go unread), and the
 * honest processes' memory must stay bounded.
 */
import * as assert from 'node:assert/strict'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { submitJob } from '../exec/fixtures.js'
import { startAttacker, type AttackerProcess } from '../redteam/harness.js'
import { chaosFull, recordFault, startLocalNetwork, tempDir, waitFor, waitForMesh, type LocalNetwork, type NodeProcess } from '../utils/index.js'

const FULL = chaosFull()
/** auctions in each phase */
const AUCTIONS = FULL ? 30 : 4
const RATE = 1_000
/** gossipsub's graylist threshold (create-node.ts keeps the library's default) */
const GRAYLIST = -80
/** what the honest processes' resident memory may grow by under the spam */
const RSS_GROWTH_LIMIT_MIB = 150

async function rssMiB (node: NodeProcess): Promise<number> {
  const status = await readFile(`/proc/${String(node.child.pid)}/status`, 'utf8')
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1])
  return kb / 1024
}

function p95 (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)] as number
}

describe('chaos: spam from one peer (issue 19 item 5)', function () {
  this.timeout(FULL ? 900_000 : 240_000)
  let net: LocalNetwork
  let tmp: { path: string, cleanup: () => Promise<void> }
  let attacker: AttackerProcess | undefined
  let runs = 0

  before(async () => {
    tmp = await tempDir('idlegrid-chaos-spam-')
    net = await startLocalNetwork({ baseDir: tmp.path, providers: 2, renters: 1 })
    await writeFile(join(tmp.path, 'quick.yaml'), [
      'name: quick', 'tier: silver', 'workload: evaluation', 'runtime:', '  command: [/bin/true]', 'estimatedMinutes: 1',
      'auction:', '  bidWindowMs: 1000', '  acceptTimeoutMs: 3000'
    ].join('\n') + '\n')
    const view = await waitForMesh(net.all, 60_000)
    assert.ok(view.complete, view.missing.join('\n'))
  })

  after(async () => {
    await attacker?.stop(2_000)
    await net?.stop()
    await tmp?.cleanup()
  })

  /**
   * `count` auctions one after another; each must be awarded and accepted. Their times, ms, as
   * the renter node measured them (job request published to the winner's acceptance).
   */
  async function auctions (count: number): Promise<number[]> {
    const times: number[] = []
    for (let i = 0; i < count; i++) {
      const run = await submitJob((net.renters[0] as NodeProcess).dataDir, tmp.path, 'quick.yaml', ['--auction-only', '--out-dir', join(tmp.path, `out-${++runs}`)], 60_000)
      assert.equal(run.code, 0, `auction ${runs}: ${JSON.stringify(run.summary)}\n${run.stderr.slice(-2000)}`)
      const accepted = Number(run.summary.timings?.publishToAcceptedMs)
      assert.ok(Number.isFinite(accepted), `auction ${runs} has no acceptance time: ${JSON.stringify(run.summary.timings)}`)
      times.push(accepted)
    }
    return times
  }

  it('chaos: 1,000 invalid messages a second and a stream flood: auctions complete within 2× the quiet p95, the spammer is graylisted, memory stays bounded', async () => {
    const quiet = await auctions(AUCTIONS)
    const rssBefore = await Promise.all(net.all.map(rssMiB))

    attacker = await startAttacker('spam', { bootstrap: net.bootstrap.addrs[0] as string, baseDir: tmp.path, options: { rate: RATE } })
    const spammer = attacker.peerIds[0] as string
    // the flood is on: a second of it reported
    await attacker.line(l => l?.progress === true && l.sent >= RATE / 2, 30_000)
    const spammed = await auctions(AUCTIONS)

    // every honest node connected to the spammer scores it below the graylist threshold
    const scores = await waitFor(async () => {
      const statuses = await Promise.all(net.all.map(async n => await n.status()))
      const seen = statuses.map(s => s.gossipScores[spammer]).filter((s): s is number => s != null)
      return seen.length > 0 && seen.every(s => s < GRAYLIST) && seen
    }, { timeoutMs: 30_000, what: 'the honest nodes to graylist the spammer' })
    const rejected = (await Promise.all(net.all.map(async n => await n.status())))
      .map(s => Object.values(s.gossip).flatMap(t => Object.entries(t)).filter(([k]) => k.startsWith('reject:')).reduce((sum, [, n]) => sum + n, 0))
    const rssAfter = await Promise.all(net.all.map(rssMiB))
    const { result, error } = await attacker.stop()
    attacker = undefined
    assert.equal(error, undefined, error)

    for (const node of net.all) assert.equal(node.child.exitCode, null, `${node.role} exited: ${node.stderr().slice(-2000)}`)
    const growth = rssAfter.map((after, i) => after - (rssBefore[i] as number))
    const quietP95 = p95(quiet)
    const spamP95 = p95(spammed)
    const figures = `auction p95 quiet ${quietP95} ms, under spam ${spamP95} ms (${(spamP95 / quietP95).toFixed(2)}×, ${AUCTIONS} each; all quiet ${quiet.join(',')} spam ${spammed.join(',')}); ` +
      `spammer sent ${String(result?.sent)} messages (${Number(result?.messagesPerSecond).toFixed(0)}/s) and opened ${String(result?.streams)} streams (${Number(result?.streamsPerSecond).toFixed(0)}/s, ${String(result?.streamsRefused)} refused ${JSON.stringify(result?.refusals)}, connected to ${String(result?.peers)} peers); ` +
      `honest nodes rejected ${rejected.join('/')} before graylisting (scores ${scores.map(s => s.toFixed(0)).join('/')}); ` +
      `RSS MiB before ${rssBefore.map(r => r.toFixed(0)).join('/')} after ${rssAfter.map(r => r.toFixed(0)).join('/')}`
    console.log(`      [figures] ${figures}`)
    assert.ok(Number(result?.sent) > 0 && Number(result?.streams) > 0, `the spam did not happen: ${JSON.stringify(result)}`)
    assert.ok(spamP95 <= 2 * quietP95, `auctions under spam: p95 ${spamP95} ms > 2 × ${quietP95} ms`)
    assert.ok(growth.every(g => g < RSS_GROWTH_LIMIT_MIB), `RSS grew by ${growth.map(g => g.toFixed(0)).join('/')} MiB`)
    recordFault({ fault: `spam: ${RATE} invalid msgs/s on every topic + stream flood`, checked: 'honest auctions complete, p95 ≤ 2× quiet', result: 'ok', figure: `p95 quiet ${quietP95} ms, spam ${spamP95} ms (${(spamP95 / quietP95).toFixed(2)}×), ${AUCTIONS}+${AUCTIONS} auctions` })
    recordFault({ fault: 'spam: same', checked: 'spammer scored below graylist (-80) by every honest node', result: 'ok', figure: `scores ${scores.map(s => s.toFixed(0)).join('/')}; ${String(result?.sent)} sent, ${rejected.reduce((a, b) => a + b, 0)} validated+rejected in all; ${String(result?.streams)} streams opened` })
    recordFault({ fault: 'spam: same', checked: `honest RSS growth < ${RSS_GROWTH_LIMIT_MIB} MiB`, result: 'ok', figure: `growth MiB ${growth.map(g => g.toFixed(0)).join('/')} (bootstrap/providers/renter)` })
  })
})
