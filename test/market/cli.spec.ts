import * as assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { BIN_PATH, inspectMesh, startLocalNetwork, tempDir, waitFor, type LocalNetwork } from '../utils/index.js'
import { DEFAULT_RANKING } from '../../src/market/shared/ranking.js'

/** Six provider processes; with a neutral reputation the lowest dynamic price wins, and prices follow the floors. */
const PROVIDERS = [
  { region: 'eu-west', floor: '1.00', gpu: 'H100:80' },
  { region: 'eu-central', floor: '0.80', gpu: 'A100:40' },
  { region: 'us-east', floor: '0.50', gpu: 'H100:80' },
  { region: 'eu-north', floor: '1.20', gpu: 'H100:80' },
  { region: 'ap-south', floor: '0.60', gpu: 'RTX 4090:24' },
  { region: 'us-west', floor: '2.00', gpu: 'L40S:48' }
]

interface Run { code: number | null, stdout: string, stderr: string }

async function idlegrid (args: string[], timeoutMs = 60_000): Promise<Run> {
  const child = spawn(process.execPath, [BIN_PATH, ...args], { env: { ...process.env, IDLEGRID_BOOTSTRAP: '', IDLEGRID_DATA_DIR: '' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (c: string) => { stdout += c })
  child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr += c })
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
  clearTimeout(timer)
  return { code, stdout, stderr }
}

function lastJson (text: string): any {
  const lines = text.trim().split('\n').filter(l => l.startsWith('{'))
  return JSON.parse(lines[lines.length - 1] as string)
}

describe('market auction (separate processes, idlegrid submit)', function () {
  this.timeout(240_000)
  let dir: Awaited<ReturnType<typeof tempDir>>
  let net: LocalNetwork
  const logs: string[] = []

  before(async () => {
    dir = await tempDir()
    net = await startLocalNetwork({
      baseDir: dir.path,
      providers: PROVIDERS.length,
      renters: 0,
      providerArgs: (i) => ['--simulate-gpu', PROVIDERS[i]?.gpu as string, '--region', PROVIDERS[i]?.region as string, '--price-floor', PROVIDERS[i]?.floor as string, '--images', '*']
    })
    net.providers.forEach((p, i) => { logs[i] = ''; p.child.stdout?.setEncoding('utf8').on('data', (c: string) => { logs[i] += c }) })
    // gossip must reach everyone (heartbeats heard all round) before a renter publishes
    await waitFor(async () => {
      const { statuses } = await inspectMesh(net.all)
      return statuses.every(s => statuses.every(o => o.peerId === s.peerId || s.heard.some(h => h.peerId === o.peerId)))
    }, { timeoutMs: 90_000, intervalMs: 500, what: 'every node to hear every other node\'s heartbeats' })
  })

  after(async () => {
    await net?.stop()
    await dir?.cleanup()
  })

  const submit = async (...flags: string[]): Promise<Run> => await idlegrid([
    'submit', 'examples/jobs/llama-eval.yaml', '--auction-only', '--json', '--data-dir', join(dir.path, 'renter'),
    '--bootstrap', net.bootstrap.addrs[0] as string, '--gpu', 'h100', '--gpu', 'a100', '--gpu', 'rtx-4090', '--gpu', 'l40s', '--min-vram', '16', '--max-price', '10', '--wait', '5', '--window-ms', '3000', ...flags
  ])
  const pid = (i: number): string => net.providers[i]?.peerId as string

  it('awards the lowest price and the winning provider logs its bid and win', async () => {
    const r = await idlegrid([
      'submit', '--auction-only', '--json', '--data-dir', join(dir.path, 'renter'), '--bootstrap', net.bootstrap.addrs[0] as string,
      '--image', 'ghcr.io/acme/eval:1', '--wait', '5', '--window-ms', '3000'
    ])
    assert.equal(r.code, 0, r.stderr + r.stdout)
    const report = lastJson(r.stdout)
    assert.equal(typeof report.jobId, 'string')
    assert.equal(report.bids.length, PROVIDERS.length, JSON.stringify(report.bids))
    for (const b of report.bids) assert.equal(typeof b.price, 'number')
    // the rule: lowest price / reliability^w (reliability from the renter's own ledger view;
    // with equal reliabilities that is the lowest price, us-east's floor)
    const valid = (
      report.bids as Array<{ provider: string, price: number, reliability: number, dropped?: string }>
    ).filter(b => b.dropped == null)
    const score = (b: { price: number, reliability: number }): number =>
      b.price / Math.max(0.01, b.reliability) ** DEFAULT_RANKING.reliabilityWeight
    const ranked = valid.slice().sort((a, b) => score(a) - score(b) || a.price - b.price)
    // on a loaded machine a winner may miss its accept deadline: the award then fails over in rank order
    const attempts = report.attempts as Array<{ winner: string, outcome: string }>
    assert.deepEqual(
      attempts.map(a => a.winner),
      ranked.slice(0, attempts.length).map(b => b.provider),
      JSON.stringify({ attempts, ranked })
    )
    assert.ok(attempts.slice(0, -1).every(a => a.outcome !== 'accepted'))
    assert.equal(report.award.winner, attempts.at(-1)?.winner)
    assert.equal(attempts.at(-1)?.outcome, 'accepted')
    const predicted = ranked[0]
    if (new Set(valid.map(b => b.reliability)).size === 1) assert.equal(predicted?.provider, pid(2))
    const winner = net.providers.findIndex(p => p.peerId === report.award.winner)
    await waitFor(() => logs[winner]?.includes('"market:won"'), { timeoutMs: 10_000, what: 'the winner to log its win' })
    assert.match(logs[0] as string, /"market:bid"/)
  })

  it('keeps a residency-eu job in the EU', async () => {
    const r = await submit()
    assert.equal(r.code, 0, r.stderr + r.stdout)
    const report = lastJson(r.stdout)
    for (const b of report.bids) if (b.dropped == null) assert.equal(b.residency, 'eu')
    const euIds = [0, 1, 3].map(pid)
    assert.ok(euIds.includes(report.award.winner), 'the winner is an EU provider')
    const valid = (
      report.bids as Array<{ provider: string, price: number, reliability: number, dropped?: string }>
    ).filter(b => b.dropped == null)
    // with equal reliabilities the best EU bid is eu-central's (the cheapest EU floor); it wins
    // unless it missed its accept deadline
    const first = (report.attempts as Array<{ winner: string }>)[0]?.winner
    if (new Set(valid.map(b => b.reliability)).size === 1) assert.equal(first, pid(1))
  })

  it('ends a job nobody can serve with "no bids" and the decline counts', async () => {
    const r = await submit('--min-vram', '200')
    assert.equal(r.code, 1, r.stderr + r.stdout)
    const report = lastJson(r.stdout)
    assert.equal(report.award, undefined)
    assert.equal(report.noBids.declines.vram, PROVIDERS.length, JSON.stringify(report.noBids))
  })
})
