import * as assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { callControl } from '../../src/control/index.js'
import { BIN_PATH, spawnNode, startLocalNetwork, type LocalNetwork, type NodeProcess } from '../utils/index.js'
import type { LedgerStatus, Reputation } from '../../src/ledger/index.js'
import { tempDir, waitFor } from '../utils/index.js'

// Five nodes as processes (bootstrap, three providers, one renter). Jobs' entries come from the
// development control method ledger.appendTestJob (offered only with --dev-ledger-methods):
// the provider signs an attestation into its feed, a dev renter (a real key) signs the receipt.

const run = promisify(execFile)
// every node replicates every feed: this spec is of full replication (the bounded scope: scope.spec.ts)
const PROVIDER_ARGS = (i: number): string[] => ['--simulate-gpu', 'RTX 4090:24', '--region', 'eu-west', '--price-floor', `${0.5 + i / 10}`, '--dev-ledger-methods', '--ledger-replicate', 'all']

async function status (node: NodeProcess): Promise<LedgerStatus> {
  return await callControl(node.dataDir, 'ledger.status', {}, { timeoutMs: 10_000 }) as LedgerStatus
}

async function headsOf (node: NodeProcess): Promise<string> {
  return JSON.stringify((await status(node)).heads)
}

async function reputations (node: NodeProcess, now: number): Promise<Reputation[]> {
  return await callControl(node.dataDir, 'reputation', { now }, { timeoutMs: 10_000 }) as Reputation[]
}

describe('ledger across five node processes', function () {
  this.timeout(240_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  let net: LocalNetwork
  let restarted: NodeProcess | undefined

  before(async () => {
    dir = await tempDir('idlegrid-ledger-net-')
    net = await startLocalNetwork({ baseDir: dir.path, providers: 3, renters: 1, heartbeatSeconds: 1, providerArgs: PROVIDER_ARGS, renterArgs: () => ['--dev-ledger-methods', '--ledger-replicate', 'all'] })
  })
  after(async () => {
    await restarted?.stop()
    await net?.stop()
    await dir?.cleanup()
  })

  it('a provider offline while 50 jobs\' entries are written converges after it returns; a restart keeps every entry and the same reputations', async () => {
    const [p1, p2, p3] = net.providers
    const online = [net.bootstrap, p1, p2, net.renters[0]]
    // every node holds a ledger and answers for it
    for (const n of net.all) assert.equal((await status(n)).entries, 0)

    assert.equal(await p3.stop('SIGTERM'), 0, 'the provider stops cleanly')

    // 50 jobs from two providers and five renters
    for (let k = 0; k < 5; k++) {
      await callControl(p1.dataDir, 'ledger.appendTestJob', { count: 5, renter: k }, { timeoutMs: 30_000 })
      await callControl(p2.dataDir, 'ledger.appendTestJob', { count: 5, renter: k, outcome: k === 4 ? 'failed' : 'ok' }, { timeoutMs: 30_000 })
    }
    // 50 attestations and 50 receipts, in 12 feeds (2 providers, 10 dev renters)
    const total = async (n: NodeProcess): Promise<number> =>
      (JSON.parse(await headsOf(n)) as Array<{ seq: number }>).reduce((a, h) => a + h.seq, 0)
    // p1 pulls p2's own feed as soon as p2's heartbeat hints at it, but the dev renters' receipts
    // are feeds of keys that run no node: nobody heartbeats or announces them to p1 (neither
    // their counterparty nor a seed), so they come with p1's periodic sync round (every 30 s,
    // from start): the bound allows one round to be missed
    await waitFor(async () => (await total(p1)) === 100, { timeoutMs: 75_000, intervalMs: 250, what: 'p1 to hold all 100 entries' })
    await waitFor(async () => {
      const all = await Promise.all(online.map(headsOf))
      return all.every(h => h === all[0]) && (await headsOf(p2)) === all[0] && JSON.parse(all[0]).length === 12
    }, { timeoutMs: 60_000, intervalMs: 500, what: 'the online nodes to converge' })

    // the provider returns with its data dir: it pulls what it missed
    restarted = await spawnNode('provider', { dataDir: p3.dataDir, args: ['--listen', '/ip4/127.0.0.1/tcp/0', '--heartbeat-seconds', '1', '--bootstrap', net.bootstrap.addrs[0], ...PROVIDER_ARGS(2)] })
    await waitFor(async () => (await headsOf(restarted as NodeProcess)) === (await headsOf(net.bootstrap)), { timeoutMs: 60_000, intervalMs: 500, what: 'the returning provider to converge' })

    // every node holds the same evidence at the same `now` (its own score weighs renters by its
    // trust in them: these dev renters have no path of trust to anyone but their provider)
    const now = Date.now()
    const reps = await Promise.all(
      [...online, restarted].map(async n =>
        (await reputations(n, now)).map(({ score, jobScore, successWeight, failureWeight, ...evidence }) => evidence)
      )
    )
    for (const r of reps) assert.deepEqual(r, reps[0])
    const byPeer = new Map(reps[0].map(r => [r.peerId, r]))
    assert.equal(byPeer.get(p1.peerId)?.jobs, 25)
    assert.equal(byPeer.get(p2.peerId)?.failed, 5)
    assert.ok((byPeer.get(p1.peerId)?.evidenceScore ?? 0) > (byPeer.get(p2.peerId)?.evidenceScore ?? 1), 'the provider with failures ranks lower')
    assert.equal(new Map((await reputations(net.bootstrap, now)).map(r => [r.peerId, r.score])).get(p1.peerId), 0.5, 'renters nobody trusts add nothing for the bootstrap')

    // a restart keeps every entry and the same reputations
    const beforeRestart = { heads: await headsOf(restarted), reps: await reputations(restarted, now) }
    assert.equal(await restarted.stop('SIGTERM'), 0)
    restarted = await spawnNode('provider', { dataDir: p3.dataDir, args: ['--listen', '/ip4/127.0.0.1/tcp/0', '--heartbeat-seconds', '1', ...PROVIDER_ARGS(2)] })
    assert.equal(await headsOf(restarted), beforeRestart.heads)
    assert.deepEqual(await reputations(restarted, now), beforeRestart.reps)
  })

  it('the CLI shows ledger status, a feed, and reputation as JSON from the running node', async () => {
    const p1 = net.providers[0]
    const env = { ...process.env, IDLEGRID_BOOTSTRAP: '', IDLEGRID_DATA_DIR: '' }
    const statusOut = await run(process.execPath, [BIN_PATH, 'ledger', 'status', '--json', '--data-dir', p1.dataDir], { env })
    const s = JSON.parse(statusOut.stdout.trim().split('\n')[0]) as LedgerStatus & { via: string }
    assert.equal(s.via, 'running')
    assert.ok(s.entries >= 100 && s.authors >= 7 && s.diskBytes > 0)
    assert.equal(s.earnings.paidJobs, 25)

    const repOut = await run(process.execPath, [BIN_PATH, 'reputation', '--json', '--data-dir', p1.dataDir], { env })
    const rows = repOut.stdout.trim().split('\n').map(line => JSON.parse(line) as { peerId: string, score: number, jobs: number, slashed: boolean })
    assert.ok(rows.length >= 2)
    for (const r of rows) {
      assert.equal(typeof r.peerId, 'string')
      assert.ok(r.score >= 0 && r.score <= 1)
      assert.equal(typeof r.jobs, 'number')
      assert.equal(r.slashed, false)
    }
    const one = await run(process.execPath, [BIN_PATH, 'reputation', p1.peerId, '--data-dir', p1.dataDir], { env })
    assert.match(one.stdout, /score 0\.\d{3}/)
    // the explanation: p1's five dev renters got their trust only from p1 itself, so they do not count for it
    assert.match(one.stdout, /direct\s+0 renters\s+0 jobs/)
    assert.match(one.stdout, /discounted\s+5 renters\s+25 jobs: not counted \d+\.\d\d successes/)
    assert.match(one.stdout, /every renter counted fully: 0\.\d{3}/)
    const show = await run(process.execPath, [BIN_PATH, 'ledger', 'show', p1.peerId, '--limit', '3', '--data-dir', p1.dataDir], { env })
    assert.match(show.stdout, /feed of .*: 25 entries/)
    assert.equal(show.stdout.trim().split('\n').length, 4)
    const earnings = await run(process.execPath, [BIN_PATH, 'ledger', 'earnings', '--json', '--data-dir', p1.dataDir], { env })
    assert.equal((JSON.parse(earnings.stdout) as { paidJobs: number }).paidJobs, 25)
    await assert.rejects(run(process.execPath, [BIN_PATH, 'ledger', 'frobnicate', '--data-dir', p1.dataDir], { env }), (err: any) => err.code === 2)
    // the bootstrap node has no dev methods
    await assert.rejects(callControl(net.bootstrap.dataDir, 'ledger.appendTestJob', {}, { timeoutMs: 5_000 }))
  })
})
