/**
 * Chaos, wrong clocks (issue 19 item 4): separate `idlegrid` processes on 127.0.0.1, a bootstrap,
 * an honest provider and renter, plus a provider whose clock runs fast and a renter whose clock
 * runs 5 minutes slow (libfaketime preloaded, clock-faketime.ts). Past the 30 s skew bound their
 * heartbeats, bids, job requests and ledger entries are refused with a reason the receiver
 * counts, nobody crashes, and once both restart with the right clock the market works for them
 * and their new ledger entries replicate.
 *
 * The fast provider is 5 minutes ahead in the full run (CHAOS_FULL=1). Its feed's times never
 * go back (protocols/README.md §7), so after the restart its next entries still carry the fast
 * time and replicate only when that time comes within the bound: about 4.5 minutes. The short
 * run (the plain suite) puts it 45 s ahead, which checks the same rules within a minute.
 */
import * as assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { callControl } from '../../src/control/index.js'
import { JOB_SHARD_TOPICS } from '../../protocols/ids.js'
import { submitJob } from '../exec/fixtures.js'
import { chaosFull, DEFAULT_PROVIDER_ARGS, recordFault, spawnNode, startLocalNetwork, tempDir, waitFor, waitForMesh, type LocalNetwork, type NodeProcess } from '../utils/index.js'
import { faketimeLibrary, skewedClockEnv } from './clock-faketime.js'
import type { LedgerStatus, SyncReport } from '../../src/ledger/index.js'

const FULL = chaosFull()
const FAST_MS = FULL ? 5 * 60_000 : 45_000
const SLOW_MS = -5 * 60_000
const PROVIDER_ARGS = ['--runner', 'process', ...DEFAULT_PROVIDER_ARGS, '--dev-ledger-methods']
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`

describe('chaos: clocks skewed past the bound (issue 19 item 4)', function () {
  this.timeout(FULL ? 900_000 : 480_000)
  let net: LocalNetwork
  let tmp: { path: string, cleanup: () => Promise<void> }
  let fast: NodeProcess
  let slow: NodeProcess
  let runs = 0
  const honestProvider = (): NodeProcess => net.providers[0] as NodeProcess
  const honestRenter = (): NodeProcess => net.renters[0] as NodeProcess

  /** A provider or renter joining the network, with its clock moved by `offsetMs` (0: right). */
  async function join_ (role: 'provider' | 'renter', name: string, offsetMs: number): Promise<NodeProcess> {
    const args = ['--listen', '/ip4/127.0.0.1/tcp/0', '--heartbeat-seconds', '1', '--bootstrap', net.bootstrap.addrs[0] as string, ...(role === 'provider' ? PROVIDER_ARGS : [])]
    return await spawnNode(role, {
      dataDir: join(tmp.path, name),
      args,
      env: offsetMs === 0 ? {} : skewedClockEnv(offsetMs)
    })
  }

  /** verdicts on the heartbeats the node's peers sent it (the heartbeat stream; the topic is off) */
  async function heartbeatVerdicts (node: NodeProcess): Promise<Record<string, number>> {
    return (await node.status()).heartbeats
  }

  /** verdict counts summed over every job shard */
  async function jobShards (node: NodeProcess): Promise<Record<string, number>> {
    const all = (await node.status()).gossip
    const out: Record<string, number> = {}
    for (const topic of JOB_SHARD_TOPICS) {
      for (const [k, v] of Object.entries(all[topic] ?? {})) out[k] = (out[k] ?? 0) + v
    }
    return out
  }

  async function submit (renter: NodeProcess): Promise<Awaited<ReturnType<typeof submitJob>>> {
    return await submitJob(renter.dataDir, tmp.path, 'upper.yaml', ['--out-dir', join(tmp.path, `out-${++runs}`)], 60_000)
  }

  before(async function () {
    if (faketimeLibrary() == null) {
      console.log('      skipped: libfaketime is not installed (apt-get install faketime; .ci/run installs it)')
      this.skip()
    }
    tmp = await tempDir('idlegrid-chaos-clock-')
    net = await startLocalNetwork({ baseDir: tmp.path, providers: 1, renters: 1, providerArgs: () => PROVIDER_ARGS })
    await writeFile(join(tmp.path, 'words.txt'), 'hello idlegrid\n')
    await writeFile(join(tmp.path, 'upper.yaml'), [
      'name: upper', 'tier: silver', 'workload: evaluation',
      'runtime:', `  command: [/bin/sh, -c, ${JSON.stringify('tr a-z A-Z < inputs/words.txt > outputs/upper.txt')}]`,
      'inputs: [words.txt]', 'estimatedMinutes: 1',
      'auction:', '  bidWindowMs: 1500', '  acceptTimeoutMs: 3000'
    ].join('\n') + '\n')
    const view = await waitForMesh(net.all, 60_000)
    assert.ok(view.complete, view.missing.join('\n'))
    fast = await join_('provider', 'provider-fast', FAST_MS)
    slow = await join_('renter', 'renter-slow', SLOW_MS)
  })

  after(async () => {
    await Promise.all([fast?.stop(), slow?.stop()])
    await net?.stop()
    await tmp?.cleanup()
  })

  it('chaos: a fast provider\'s and a slow renter\'s heartbeats, bids, job requests and entries are refused with a reason; the honest market goes on', async () => {
    // heartbeats: the fast one's are from the future, the slow one's expired: both ignored, a
    // clock rule scores nobody down (protocols/README.md §9)
    const heartbeats = await waitFor(async () => {
      const counts = await heartbeatVerdicts(net.bootstrap)
      return (counts['ignore:heartbeat from the future'] ?? 0) > 0 && (counts['ignore:expired'] ?? 0) > 0 && counts
    }, { timeoutMs: 30_000, what: 'the bootstrap to refuse the skewed nodes\' heartbeats' })
    const heard = (await net.bootstrap.status()).heard.map(h => h.peerId)
    assert.ok(!heard.includes(fast.peerId) && !heard.includes(slow.peerId), 'a skewed node counts as present')

    // the fast provider's ledger entry: refused as ahead of the clock when an honest node pulls
    // it; the bootstrap does (it holds every feed, and is the provider's trust seed), an honest
    // provider would not (its bounded scope holds its counterparties' feeds, not this one's)
    await callControl(fast.dataDir, 'ledger.appendSummary', {}, { timeoutMs: 10_000 })
    const refusedEntry = await waitFor(async () => {
      const report = await callControl(net.bootstrap.dataDir, 'ledger.sync', { timeoutMs: 10_000 }, { timeoutMs: 20_000 }) as SyncReport
      return report.errors.find(e => /ahead of the local clock/.test(e))
    }, { timeoutMs: 30_000, what: 'an honest sync to refuse the fast provider\'s entry' })

    // the slow renter sees every honest message as from the future and refuses it (ignored: it
    // does not score the honest peers down for its own clock); a job request of its that arrives has
    // expired: nobody bids, and its submit fails
    const slowSees = await waitFor(async () => {
      const counts = await heartbeatVerdicts(slow)
      return (counts['ignore:heartbeat from the future'] ?? 0) > 0 && counts
    }, { timeoutMs: 30_000, what: 'the slow renter to refuse honest heartbeats as from the future' })
    const slowRun = await submit(slow)
    assert.notEqual(slowRun.code, 0, `the slow renter's job ran: ${JSON.stringify(slowRun.summary)}`)
    const jobs = await jobShards(honestProvider())
    assert.equal(jobs.accept ?? 0, 0, `the honest provider accepted a job request: ${JSON.stringify(jobs)}`)
    const slowError = String(slowRun.summary.detail ?? slowRun.summary.error ?? slowRun.stderr.trim().split('\n').at(-1) ?? '')
    console.log(`      [figures] slow renter's submit (exit ${String(slowRun.code)}): ${JSON.stringify(slowRun.summary).slice(0, 600)} ${slowRun.stderr.slice(-400)}`)

    // the honest renter's job completes on the honest provider; the fast provider's bids never win
    const run = await submit(honestRenter())
    assert.equal(run.code, 0, `${JSON.stringify(run.summary)}\n${run.stderr.slice(-2000)}`)
    assert.equal(run.summary.provider, honestProvider().peerId)
    // bids go straight to the renter (no gossip verdicts): what it kept is in its auction's report
    const bids = run.summary.auction?.received ?? run.summary.received ?? {}

    for (const node of [...net.all, fast, slow]) assert.equal(node.child.exitCode, null, `${node.role} ${node.peerId} exited: ${node.stderr().slice(-2000)}`)
    // a wrong clock is not a lie: nobody denied anybody for it (each skewed node sent well over
    // the 8 rejected messages that would have scored it past the guard's bound)
    for (const node of [...net.all, fast, slow]) {
      const denied = (await node.status()).peerGuard.denied
      assert.deepEqual(denied, [], `${node.role} ${node.peerId} denied peers for their clocks: ${JSON.stringify(denied)}`)
    }
    console.log(`      [figures] bootstrap heartbeats ${JSON.stringify(heartbeats)}; honest provider jobs ${JSON.stringify(jobs)}; honest renter bids ${JSON.stringify(bids)}; sync: ${refusedEntry}`)
    recordFault({ fault: `clock: provider ${seconds(FAST_MS)} fast, renter ${seconds(-SLOW_MS)} slow`, checked: 'heartbeats refused (future / expired), never counted present', result: 'ok', figure: `${heartbeats['ignore:heartbeat from the future']} from the future, ${heartbeats['ignore:expired']} expired at the bootstrap` })
    recordFault({ fault: `clock: provider ${seconds(FAST_MS)} fast`, checked: 'its ledger entry refused by honest sync; its bids never win', result: 'ok', figure: `"${refusedEntry.replace(/^.* refuse: /, '').slice(0, 110)}"; renter bids ${JSON.stringify(bids)}; job won by the honest provider` })
    recordFault({ fault: `clock: renter ${seconds(-SLOW_MS)} slow`, checked: 'it refuses honest heartbeats as from the future; its job never runs, its submit fails; nobody crashes', result: 'ok', figure: `${slowSees['ignore:heartbeat from the future']} future heartbeats refused by it; honest provider jobs ${JSON.stringify(jobs)}; submit exit ${String(slowRun.code)}: ${slowError.slice(0, 80)}` })
  })

  it('chaos: restarted with the right clock, both rejoin, the slow renter\'s job runs and the fast provider\'s entries replicate', async () => {
    const ownSeq = (await callControl(fast.dataDir, 'ledger.status', {}, { timeoutMs: 10_000 }) as LedgerStatus).own.seq
    await Promise.all([fast.stop(), slow.stop()])
    const restartedAt = Date.now()
    fast = await join_('provider', 'provider-fast', 0)
    slow = await join_('renter', 'renter-slow', 0)
    // renters are DHT clients and need not reach each other. Its refused messages were
    // ignored, not rejected, so nobody scored the fast provider down or denied it: it rejoins
    // at once (before that rule, the peer guard kept it out for 10 minutes)
    const view = await waitForMesh([...net.all, fast, slow], 300_000, undefined, { needed: (a, b) => a.role !== 'renter' || b.role !== 'renter' })
    assert.ok(view.complete, view.missing.join('\n'))
    const meshMs = Date.now() - restartedAt

    const run = await submit(slow)
    assert.equal(run.code, 0, `${JSON.stringify(run.summary)}\n${run.stderr.slice(-2000)}`)
    assert.equal(run.summary.status, 'ok', JSON.stringify(run.summary))

    // a new entry of the formerly fast provider: its time is at least its last fast-dated entry's
    const appended = await callControl(fast.dataDir, 'ledger.appendSummary', {}, { timeoutMs: 10_000 }) as { seq?: number } | undefined
    const target = Math.max(ownSeq + 1, Number(appended?.seq ?? 0))
    const replicated = await waitFor(async () => {
      await callControl(honestProvider().dataDir, 'ledger.sync', { timeoutMs: 10_000 }, { timeoutMs: 20_000 })
      const status = await callControl(honestProvider().dataDir, 'ledger.status', {}, { timeoutMs: 10_000 }) as LedgerStatus
      return (status.heads.find(h => h.author === fast.peerId)?.seq ?? 0) >= target
    }, { timeoutMs: FAST_MS + 60_000, intervalMs: 2_000, what: `the honest provider to hold the formerly fast provider's feed up to seq ${target}` })
    assert.ok(replicated)
    const replicatedMs = Date.now() - restartedAt

    for (const node of [...net.all, fast, slow]) assert.equal(node.child.exitCode, null, `${node.role} ${node.peerId} exited`)
    console.log(`      [figures] full mesh again ${seconds(meshMs)} after the restart; the fast provider's feed (seq ${target}) replicated after ${seconds(replicatedMs)}`)
    recordFault({ fault: 'clock: both restarted with the right clock', checked: 'mesh and heartbeats again, the slow renter\'s job runs', result: 'ok', figure: `full mesh ${seconds(meshMs)} after the restart; job ${String(run.summary.status)} on attempt ${String(run.summary.attempts)}` })
    recordFault({ fault: `clock: provider was ${seconds(FAST_MS)} fast`, checked: 'its new entries replicate (dated ≥ its fast-dated head: feed times never go back)', result: 'ok', figure: `feed to seq ${target} at the honest provider ${seconds(replicatedMs)} after the restart` })
  })
})
