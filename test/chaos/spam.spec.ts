/**
 * Chaos, spam (issue 19 item 5): separate `idlegrid` processes on 127.0.0.1 (a bootstrap, two
 * providers, a renter) and an attacker process (test/redteam/attacks/spam.ts) sending 1,000
 * invalid messages a second on every topic and opening streams on every idlegrid protocol as
 * fast as it can; then another attacker process (test/redteam/attacks/valid-flood.ts) sending
 * 1,000 validly signed job requests a second from one key (in market version 2 the job shards are
 * the market's gossip). Honest auctions (`idlegrid submit
 * --auction-only`) run quiet, under the spam and under the valid flood: all must complete with a
 * p95 within 2× the quiet one; every honest node the attackers reached must drop them (the peer
 * guard, src/node/guard/peer-guard.ts: denied, disconnected, their redials refused), and the honest
 * processes' memory must stay bounded.
 */
import * as assert from 'node:assert/strict'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { isJobShardTopic } from '../../protocols/ids.js'
import { submitJob } from '../exec/fixtures.js'
import { startAttacker, type AttackerProcess } from '../redteam/harness.js'
import { chaosFull, recordFault, spawnNode, startLocalNetwork, tempDir, waitFor, waitForMesh, type LocalNetwork, type NodeProcess } from '../utils/index.js'
import type { NodeStatus } from '../../src/node/status.js'

const FULL = chaosFull()
/** auctions in each phase */
const AUCTIONS = FULL ? 30 : 4
const RATE = 1_000
/** what the honest processes' resident memory may grow by under the spam */
const RSS_GROWTH_LIMIT_MIB = 150

async function rssMiB (node: NodeProcess): Promise<number> {
  const status = await readFile(`/proc/${String(node.child.pid)}/status`, 'utf8')
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1])
  return kb / 1024
}

/** A denial reason from `dropped` (not '-' for never met, nor '(kept: …)'). */
const isDenial = (reason: string): boolean => reason !== '-' && !reason.startsWith('(kept')

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
      if (run.code !== 0) {
        const guards = await Promise.all(net.all.map(async n => `${n.role}: ${JSON.stringify((await n.status()).peerGuard)}`))
        assert.fail(`auction ${runs}: ${JSON.stringify(run.summary)}\n${run.stderr.slice(-2000)}\nguards: ${guards.join('\n')}`)
      }
      const accepted = Number(run.summary.timings?.publishToAcceptedMs)
      assert.ok(Number.isFinite(accepted), `auction ${runs} has no acceptance time: ${JSON.stringify(run.summary.timings)}`)
      times.push(accepted)
    }
    return times
  }

  /**
   * Every honest node the attack reached holds no connection to `attacker`, and at least one
   * denied it. A node is reached when it subscribes to a topic the attack floods (`attacked`:
   * gossipsub hands a topic's messages only to its subscribers; the other nodes' views say who
   * subscribes) or when it refused streams; a node that is neither (the renter: it subscribes to
   * nothing, and publishes its jobs without subscribing) got nothing to judge the attacker by,
   * and may keep a connection it made itself (its DHT lookups reach the attacker too). Returns
   * each node's denial reason ('-' where it never met it, '(kept: …)' where it kept a connection).
   */
  async function dropped (
    attacker: string,
    attacked: (topic: string) => boolean,
    attackerProcess?: AttackerProcess
  ): Promise<string[]> {
    let seen = ''
    return await waitFor(async () => {
      const statuses = await Promise.all(net.all.map(async n => await n.status()))
      const subscribed = new Set(
        statuses.flatMap(s =>
          Object.entries(s.topics)
            .filter(([t]) => attacked(t))
            .flatMap(([, ids]) => ids)
        )
      )
      const reached = (s: NodeStatus): boolean => subscribed.has(s.peerId) || s.peerGuard.counters.streamsRefused > 0
      const holds = (s: NodeStatus): boolean => s.peers.some(p => p.peerId === attacker)
      const connected = statuses.filter(s => reached(s) && holds(s)).map(s => s.role)
      const reasons = statuses.map(s => s.peerGuard.denied.find(d => d.peerId === attacker)?.reason ?? (holds(s) ? '(kept: it subscribes to no attacked topic and refused no stream)' : '-'))
      seen = JSON.stringify({
        connected,
        reasons,
        counters: statuses.map(s => s.peerGuard.counters),
        jobs: statuses.map(s => Object.entries(s.gossip).filter(([t]) => isJobShardTopic(t))),
        attacker: attackerProcess?.stderr().slice(-1500)
      })
      return connected.length === 0 && reasons.some(isDenial) && reasons
    }, { timeoutMs: 30_000, what: `the honest nodes to drop ${attacker}` }).catch((err: Error) => { throw new Error(`${err.message}; last seen ${seen}`) })
  }

  /**
   * The attacker's key comes back in a plain node (the attack's process has stopped; a busy
   * flooder times its own redials out): the bootstrap, which denied it, refuses its connection.
   * (Checked for the spammer only: the valid flooder's denial goes through the same gater.)
   */
  async function redialRefused (attack: string, attackerId: string): Promise<number> {
    const before = (await net.bootstrap.status()).peerGuard.counters.connectionsRefused
    const again = await spawnNode('renter', { dataDir: join(tmp.path, `attacker-${attack}`, 'attacker-0'), args: ['--listen', '/ip4/127.0.0.1/tcp/0', '--bootstrap', net.bootstrap.addrs[0] as string] })
    try {
      assert.equal(again.peerId, attackerId)
      return await waitFor(async () => {
        const status = await net.bootstrap.status()
        const refused = status.peerGuard.counters.connectionsRefused - before
        return refused > 0 && !status.peers.some(p => p.peerId === attackerId) && refused
      }, { timeoutMs: 30_000, what: `the bootstrap to refuse ${attack}'s key again` })
    } finally {
      await again.stop()
    }
  }

  it('chaos: 1,000 invalid messages a second and a stream flood, then 1,000 valid job requests a second: auctions complete within 2× the quiet p95, both attackers are dropped, memory stays bounded', async () => {
    const quiet = await auctions(AUCTIONS)
    const rssBefore = await Promise.all(net.all.map(rssMiB))

    attacker = await startAttacker('spam', { bootstrap: net.bootstrap.addrs[0] as string, baseDir: tmp.path, options: { rate: RATE } })
    const spammer = attacker.peerIds[0] as string
    // the flood is on: a second of it reported
    await attacker.line(l => l?.progress === true && l.sent >= RATE / 2, 30_000)
    const spammed = await auctions(AUCTIONS)

    // every honest node it reached dropped it: denied, disconnected, redials refused
    const spamDropped = await dropped(spammer, () => true)
    const afterSpam = await Promise.all(net.all.map(async n => await n.status()))
    const rejected = afterSpam
      .map(s => Object.values(s.gossip).flatMap(t => Object.entries(t)).filter(([k]) => k.startsWith('reject:')).reduce((sum, [, n]) => sum + n, 0))
    // a spammer slow to stop (its loops wait on timed-out dials) is killed: its last progress line counts then
    const spamOutcome = await attacker.stop(5_000)
    attacker = undefined
    assert.equal(spamOutcome.error, undefined, spamOutcome.error)
    const result = spamOutcome.result ?? spamOutcome as Record<string, any>
    const spamRedials = await redialRefused('spam', spammer)

    // a flood of valid messages from one key
    attacker = await startAttacker('valid-flood', { bootstrap: net.bootstrap.addrs[0] as string, baseDir: tmp.path, options: { rate: RATE } })
    const flooder = attacker.peerIds[0] as string
    await attacker.line(l => l?.progress === true && l.sent >= RATE / 2, 30_000)
    const flooded = await auctions(AUCTIONS)
    // job requests are gossip on the job shards only
    const floodDropped = await dropped(flooder, isJobShardTopic, attacker)
    const ignored = (await Promise.all(net.all.map(async n => await n.status()))).map(
      (s, i) => s.peerGuard.counters.droppedByRate - (afterSpam[i]?.peerGuard.counters.droppedByRate ?? 0)
    )
    const floodOutcome = await attacker.stop(5_000)
    attacker = undefined
    assert.equal(floodOutcome.error, undefined, floodOutcome.error)
    const flood = { result: floodOutcome.result ?? floodOutcome as Record<string, any> }

    const rssAfter = await Promise.all(net.all.map(rssMiB))
    for (const node of net.all) assert.equal(node.child.exitCode, null, `${node.role} exited: ${node.stderr().slice(-2000)}`)
    const growth = rssAfter.map((after, i) => after - (rssBefore[i] as number))
    const quietP95 = p95(quiet)
    const spamP95 = p95(spammed)
    const floodP95 = p95(flooded)
    const figures = `auction p95 quiet ${quietP95} ms, under spam ${spamP95} ms (${(spamP95 / quietP95).toFixed(2)}×), under the valid flood ${floodP95} ms (${(floodP95 / quietP95).toFixed(2)}×) (${AUCTIONS} each; all quiet ${quiet.join(',')} spam ${spammed.join(',')} flood ${flooded.join(',')}); ` +
      `spammer sent ${String(result?.sent)} messages (${Number(result?.messagesPerSecond).toFixed(0)}/s) and opened ${String(result?.streams)} streams (${Number(result?.streamsPerSecond).toFixed(0)}/s, ${String(result?.streamsRefused)} refused ${JSON.stringify(result?.refusals)}); ` +
      `honest nodes rejected ${rejected.join('/')} before dropping it (${spamDropped.join(' / ')}; its key refused ${spamRedials}× by the bootstrap when back); ` +
      `flooder sent ${String(flood.result?.sent)} valid job requests (${Number(flood.result?.messagesPerSecond).toFixed(0)}/s), ${ignored.join('/')} ignored over the rate, dropped (${floodDropped.join(' / ')}); ` +
      `RSS MiB before ${rssBefore.map(r => r.toFixed(0)).join('/')} after ${rssAfter.map(r => r.toFixed(0)).join('/')}`
    console.log(`      [figures] ${figures}`)
    assert.ok(Number(result?.sent) > 0 && Number(result?.streams) > 0, `the spam did not happen: ${JSON.stringify(result)}`)
    assert.ok(spamP95 <= 2 * quietP95, `auctions under spam: p95 ${spamP95} ms > 2 × ${quietP95} ms`)
    assert.ok(Number(flood.result?.sent) > RATE, `the valid flood did not happen: ${JSON.stringify(flood.result)}`)
    assert.ok(floodP95 <= 2 * quietP95, `auctions under the valid flood: p95 ${floodP95} ms > 2 × ${quietP95} ms`)
    assert.ok(growth.every(g => g < RSS_GROWTH_LIMIT_MIB), `RSS grew by ${growth.map(g => g.toFixed(0)).join('/')} MiB`)
    recordFault({ fault: `spam: ${RATE} invalid msgs/s on every topic + stream flood`, checked: 'honest auctions complete, p95 ≤ 2× quiet', result: 'ok', figure: `p95 quiet ${quietP95} ms, spam ${spamP95} ms (${(spamP95 / quietP95).toFixed(2)}×), ${AUCTIONS}+${AUCTIONS} auctions` })
    recordFault({ fault: 'spam: same', checked: 'spammer dropped by the honest nodes it reached: denied, disconnected, redials refused', result: 'ok', figure: `${spamDropped.filter(isDenial).length} of ${net.all.length} denied it (${[...new Set(spamDropped.filter(isDenial).map(r => r.replace(/-?\d+/g, 'N')))].join('; ')}); ${String(result?.sent)} sent, ${rejected.reduce((a, b) => a + b, 0)} validated+rejected in all; ${String(result?.streams)} streams opened` })
    recordFault({ fault: `spam: ${RATE} valid signed job requests/s from one key`, checked: 'honest auctions complete, p95 ≤ 2× quiet; flooder dropped', result: 'ok', figure: `p95 ${floodP95} ms (${(floodP95 / quietP95).toFixed(2)}×); ${String(flood.result?.sent)} sent, ${ignored.reduce((a, b) => a + b, 0)} ignored over the rate; ${floodDropped.filter(isDenial).length} of ${net.all.length} denied it and none holds a connection to it` })
    recordFault({ fault: 'spam: same', checked: `honest RSS growth < ${RSS_GROWTH_LIMIT_MIB} MiB over both floods`, result: 'ok', figure: `growth MiB ${growth.map(g => g.toFixed(0)).join('/')} (bootstrap/providers/renter)` })
  })
})
