/**
 * Issue 19 item 2: six `idlegrid` processes (bootstrap, three providers, two renters), each in
 * its own network namespace on a bridge this spec creates, split in two groups while jobs run
 * and ledger entries are written, then healed. Checked: every job completes, no provider
 * started a job more often than its renter's summary says, every node holds the same feed
 * heads within 10 s of the heal, and the same viewer-independent reputation evidence.
 * Every node is a full replica (`ledger.replicate: all`, a seed's default): equal heads is a full
 * replica's promise. A bounded node (a provider's and a renter's default, issue 40 item 3) takes
 * a feed out of its scope only from the feed's author while connected to it, so its heads match
 * the others' only once it is connected to each author again, which the heal does not bound: the
 * connections across the split are gone by then and come back in 3–16 s (measured here and in CI).
 * Needs root and iproute2; elsewhere the suite is skipped and says why.
 */
import { strict as assert } from 'node:assert'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { callControl } from '../../src/control/index.js'
import { chaosFull, recordFault, spawnNode, tempDir, waitFor, waitForMesh, type NodeProcess } from '../utils/index.js'
import { submitJob, type Submitted } from '../exec/fixtures.js'
import { createPartitionLab, type PartitionLab } from './partition-lab.js'
import { entriesIn, evidenceOf, headsDiff, headsOf, startedJobs, unknownRuns } from './partition-checks.js'

const FULL = chaosFull()
/** split/heal rounds, quick jobs per renter per round during the split */
const ROUNDS = FULL ? 3 : 1
const QUICK_JOBS = FULL ? 4 : 1
/** the bound from heal to equal ledgers */
const HEAL_BOUND_MS = 10_000

// node indexes: 0 bootstrap, 1-3 providers, 4-5 renters; group B is cut off from the rest
const GROUP_B = [2, 3, 5]
// the second provider (in group B) is cheapest, so the first renter's job runs across the split
const PRICE = ['1.50', '1.00', '2.00']

function jobFile (name: string, script: string): string {
  return [
    `name: ${name}`, 'tier: silver', 'workload: evaluation',
    'runtime:', `  command: [/bin/sh, -c, ${JSON.stringify(script)}]`,
    'inputs: [words.txt]', 'estimatedMinutes: 1',
    'auction:', '  bidWindowMs: 700', '  acceptTimeoutMs: 3000'
  ].join('\n') + '\n'
}

/** Attempts the providers started at or after `since` (ms), and their states (for error messages). */
async function startedSince (providers: NodeProcess[], since: number): Promise<{ count: number, states: string }> {
  let count = 0
  const states: string[] = []
  for (const p of providers) {
    const view = await callControl(p.dataDir, 'exec.jobs', {}, { timeoutMs: 5_000 }) as { jobs: Array<{ state: string, startedAt?: number, rejected?: string }> }
    count += view.jobs.filter(j => (j.startedAt ?? 0) >= since).length
    states.push(`${p.peerId.slice(-6)}: ${view.jobs.map(j => j.rejected ?? j.state).join(',')}`)
  }
  return { count, states: states.join('; ') }
}

async function allEqual (values: Array<Promise<string>>): Promise<boolean> {
  const got = await Promise.all(values)
  return got.every(v => v === got[0])
}

describe('chaos: partitions in network namespaces', function () {
  this.timeout(FULL ? 900_000 : 300_000)
  let lab: PartitionLab | undefined
  let dir: { path: string, cleanup: () => Promise<void> } | undefined
  const nodes: NodeProcess[] = []

  before(async function () {
    if (process.getuid?.() !== 0) {
      console.log('    (skipped: network namespaces need root)')
      this.skip()
    }
    try {
      lab = await createPartitionLab(6)
    } catch (err: any) {
      console.log(`    (skipped: this host refuses network namespaces: ${String(err?.message ?? err).split('\n')[0]})`)
      this.skip()
    }
    dir = await tempDir('idlegrid-partition-')
    const l = lab
    await writeFile(join(dir.path, 'replica.yaml'), 'ledger:\n  replicate: all\n')
    const replica = join(dir.path, 'replica.yaml')
    const args = (i: number): string[] => ['--config', replica, '--listen', `/ip4/${l.address(i)}/tcp/0`, '--heartbeat-seconds', '1']
    nodes.push(await spawnNode('bootstrap', { dataDir: join(dir.path, 'bootstrap'), args: args(0), prefix: l.prefix(0) }))
    const boot = ['--bootstrap', nodes[0].addrs[0]]
    // two GPU slots each: group A has one provider, which runs the first renter's cut slow job
    // again beside its quick jobs; with one slot those quick jobs found no bidder for the whole
    // rerun and ended "no award" (capacity, not the fault under test)
    const providerArgs = (k: number): string[] => ['--runner', 'process', '--simulate-gpu', 'H100:80:2', '--region', 'eu-west', '--price-floor', PRICE[k]]
    const d = dir.path
    nodes.push(...await Promise.all([
      ...[0, 1, 2].map(async k => await spawnNode('provider', { dataDir: join(d, `provider-${k + 1}`), args: [...args(k + 1), ...boot, ...providerArgs(k)], prefix: l.prefix(k + 1) })),
      ...[0, 1].map(async k => await spawnNode('renter', { dataDir: join(d, `renter-${k + 1}`), args: [...args(k + 4), ...boot], prefix: l.prefix(k + 4) }))
    ]))
    // renters need not know each other (they trade with providers, sync ledgers with anyone)
    const view = await waitForMesh(nodes, 60_000, undefined, { needed: (a, b) => a.role !== 'renter' || b.role !== 'renter' })
    assert.ok(view.complete, view.missing.join('\n'))
    await writeFile(join(d, 'words.txt'), 'hello idlegrid\n')
    // long enough to be running when the split comes: the split waits for the second slow job
    // to start, and under load (CI, two busy loops and a second test process) that took more
    // than the 12 s this job used to last, so the fault missed both jobs
    await writeFile(join(d, 'slow.yaml'), jobFile('slow', 'sleep 30; tr a-z A-Z < inputs/words.txt > outputs/upper.txt'))
    await writeFile(join(d, 'quick.yaml'), jobFile('quick', 'tr a-z A-Z < inputs/words.txt > outputs/upper.txt'))
  })

  after(async () => {
    await Promise.all(nodes.map(async n => await n.stop('SIGTERM', 5_000)))
    await lab?.cleanup()
    await dir?.cleanup()
  })

  it('chaos: split in two while jobs run and write ledger entries, then healed: no job lost or run unknown to its renter, ledgers and reputations equal within 10 s', async () => {
    const l = lab as PartitionLab
    const d = (dir as { path: string }).path
    const [bootstrap, p1, p2, p3, r1, r2] = nodes
    const providers = [p1, p2, p3]
    const results: Submitted[] = []
    const healMs: number[] = []
    const evidenceMs: number[] = []
    let converged = ''

    for (let round = 0; round < ROUNDS; round++) {
      // a job from each renter running on a provider across the coming split (the cheapest provider is in group B)
      const roundStart = Date.now()
      const started = async (n: number, what: string): Promise<void> => {
        await waitFor(async () => (await startedSince(providers, roundStart)).count >= n, {
          timeoutMs: 90_000,
          intervalMs: 200,
          what
        }).catch(async err => {
          throw new Error(`${String(err.message)}; providers' attempts: ${(await startedSince(providers, roundStart)).states}`)
        })
      }
      const pending = [submitJob(r1.dataDir, d, 'slow.yaml')]
      await started(1, 'the first slow job to start')
      pending.push(submitJob(r2.dataDir, d, 'slow.yaml'))
      await started(2, 'the second slow job to start')

      await l.split(GROUP_B)
      // both sides run jobs while apart: each writes an attestation and a receipt. (Entries of
      // --dev-ledger-methods' renter keys are not used: such a key never connects or trades, so
      // a node reaching its provider only through another renter's receipts holds it at
      // standing depth 4, past MAX_STANDING_DEPTH, and rightly keeps it in quarantine.)
      // one after another per renter (a renter's concurrent jobs are the market's slot limits'
      // matter, not this fault's)
      const quick = [r1, r2].map(async r => {
        const done: Submitted[] = []
        for (let k = 0; k < QUICK_JOBS; k++) done.push(await submitJob(r.dataDir, d, 'quick.yaml'))
        return done
      })
      results.push(...await Promise.all(pending), ...(await Promise.all(quick)).flat())
      // each node's own feed as it stands before the heal: all of it must reach everyone
      const own = await Promise.all(nodes.map(async n => ({ author: n.peerId, seq: (await callControl(n.dataDir, 'ledger.status', {}, { timeoutMs: 5_000 }) as { own: { seq: number } }).own.seq })))

      await l.heal()
      const healedAt = Date.now()
      // past the bound: say which feeds lag where (the figure alone does not tell why)
      const lateTimer = setTimeout(() => {
        void headsDiff(nodes).then(diff => { if (diff.length > 0) console.log(`      round ${round + 1}: heads still differ ${HEAL_BOUND_MS} ms after the heal:\n        ${diff.join('\n        ')}`) }, () => {})
      }, HEAL_BOUND_MS)
      await waitFor(async () => {
        if (!await allEqual(nodes.map(headsOf))) return false
        const heads = JSON.parse(await headsOf(bootstrap)) as Array<{ author: string, seq: number }>
        return own.every(o => o.seq === 0 || (heads.find(h => h.author === o.author)?.seq ?? 0) >= o.seq)
      }, { timeoutMs: 60_000, intervalMs: 100, what: 'every node to hold the same heads after the heal' }).catch(async (err) => {
        throw new Error(`round ${round + 1}: ${String(err.message)}\n${(await headsDiff(nodes)).join('\n')}`)
      })
      clearTimeout(lateTimer)
      healMs.push(Date.now() - healedAt)
      console.log(`      round ${round + 1}: heal → equal heads ${healMs[round]} ms`)
      const now = Date.now()
      await waitFor(async () => await allEqual(nodes.map(async n => await evidenceOf(n, now))), { timeoutMs: 60_000, intervalMs: 100, what: 'every node to hold the same reputation evidence' })
      evidenceMs.push(Date.now() - healedAt)
      converged = await headsOf(bootstrap)
    }

    const failed = results.filter(r => r.code !== 0 || r.summary.status !== 'ok')
    const lostAttempts = results.flatMap(r => (r.summary.history ?? []) as Array<{ outcome: string }>).filter(h => h.outcome === 'lost').length
    const unknown = unknownRuns(results, await startedJobs(providers))
    const maxHeal = Math.max(...healMs)
    const figure = `${results.length} jobs, ${failed.length} not completed, ${lostAttempts} attempts cut by the split and rerun, ${unknown.length} runs unknown to their renter; ` +
      `heal → equal ledgers max ${(maxHeal / 1000).toFixed(1)} s, equal evidence max ${(Math.max(...evidenceMs) / 1000).toFixed(1)} s (${ROUNDS} rounds, ${entriesIn(converged)} entries)`
    const problems = [
      ...failed.map(r => `job not completed (exit ${String(r.code)}, ${String(r.summary.status)}): ${JSON.stringify(r.summary.history ?? []).slice(0, 400)} ${r.stderr.slice(-300)}`),
      ...unknown,
      ...(maxHeal > HEAL_BOUND_MS ? [`ledgers equal only ${maxHeal} ms after the heal`] : []),
      ...(lostAttempts === 0 ? ['no attempt was cut by the split: the fault missed the running jobs'] : [])
    ]
    recordFault({ fault: 'partition', checked: '6 nodes in netns split 3|3 mid-job and mid-write, healed: jobs, heads, evidence', result: problems.length === 0 ? 'ok' : problems[0].slice(0, 120), figure })
    console.log(`      ${figure}`)
    assert.deepEqual(problems, [])
    for (const r of results) assert.equal(await readFile(join(r.summary.outputDir, 'outputs', 'upper.txt'), 'utf8'), 'HELLO IDLEGRID\n')
  })
})
