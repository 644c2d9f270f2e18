import * as assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { BIN_PATH } from '../utils/index.js'
import type { DemoSummary } from '../../src/demo/summary.js'

async function demoDirs (): Promise<string[]> {
  return (await readdir(tmpdir())).filter(d => d.startsWith('idlegrid-demo-'))
}

describe('idlegrid demo (the whole market on loopback, as the README runs it)', function () {
  this.timeout(240_000)

  it('plays the scenario: gold preempts bronze, EU stays in the EU, the impossible job is explained, every attestation verifies', async () => {
    const before = await demoDirs()
    const { code, stdout, stderr } = await new Promise<{ code: number | null, stdout: string, stderr: string }>(
      resolve => {
        execFile(process.execPath, [BIN_PATH, 'demo', '--json'], { timeout: 200_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, IDLEGRID_BOOTSTRAP: '', IDLEGRID_DATA_DIR: '' } }, (err, out, errOut) => {
          resolve({ code: err == null ? 0 : (typeof err.code === 'number' ? err.code : null), stdout: out, stderr: errOut })
        })
      }
    )
    const lines = stdout.trim().split('\n')
    assert.equal(lines.length, 1, 'with --json the demo prints exactly one JSON object')
    const summary = JSON.parse(lines[0]) as DemoSummary
    // on a failure, where each job ran and how each attempt ended (the facts alone do not say why)
    const attempts = summary.jobs.map(j => `${j.key}: ${j.status} on ${String(j.providerName)}; ${j.attempts.map(a => `${a.providerName} [${a.bids.map(b => `${b.providerName} ${b.priceUsd}`).join(', ')}] ${String(a.outcome)}`).join(' → ')}`).join('; ')
    assert.equal(code, 0, `exit code (stderr: ${stderr.slice(-2000)}; facts ${JSON.stringify(summary.facts)}; jobs ${attempts})`)

    assert.equal(summary.network.providers.length, 5)
    assert.ok(new Set(summary.network.providers.map(p => p.region)).size >= 4, 'providers across regions')
    assert.deepEqual(summary.facts, {
      goldPreemptedBronze: true,
      bronzeFinishedElsewhere: true,
      euJobRanInEu: true,
      impossibleJobReported: true,
      everyAttestationVerified: true
    })

    const job = (key: string): DemoSummary['jobs'][number] => {
      const found = summary.jobs.find(j => j.key === key)
      assert.ok(found != null, `job ${key} is in the summary`)
      return found
    }
    const bronze = job('bronze')
    const gold = job('gold')
    assert.equal(bronze.preempted, true)
    assert.equal(bronze.attempts[0].outcome, 'preempted')
    assert.equal(bronze.attempts[0].provider, gold.provider, 'the gold job took the bronze job\'s GPU')
    assert.notEqual(bronze.provider, gold.provider, 'bronze finished on another provider')
    assert.equal(bronze.rows, 5000, 'every row was scored')
    assert.ok((bronze.resumedFromRow ?? 0) > 0, 'the bronze job resumed from its checkpoint instead of starting over')
    assert.equal(gold.region, 'eu-west')
    assert.equal(job('eu').residency, 'eu')
    assert.match(job('eu').region ?? '', /^eu-/)

    const impossible = job('impossible')
    assert.equal(impossible.status, 'no_bids')
    const declines = impossible.declines ?? {}
    assert.ok(Object.values(declines).reduce((a, b) => a + b, 0) >= 4, `most providers said why (${JSON.stringify(declines)})`)

    for (const j of summary.jobs.filter(x => x.status !== 'no_bids')) {
      assert.equal(j.status, 'ok', `${j.name} completed`)
      assert.equal(j.attestation?.verified, true, `${j.name}'s attestation verified`)
      assert.equal(j.receipt, 'OK')
      assert.ok(j.priceUsd != null && j.maxPriceUsd != null && j.priceUsd <= j.maxPriceUsd, `${j.name} paid at most its max price`)
    }
    assert.ok(
      summary.prices.averagePaidUsd != null &&
        summary.prices.averageMaxUsd != null &&
        summary.prices.averagePaidUsd <= summary.prices.averageMaxUsd
    )
    assert.ok(summary.providers.reduce((sum, p) => sum + p.jobsRun, 0) >= 5, 'providers ran the attempts (bronze twice)')
    assert.ok(summary.reputations.length >= 3, 'the renter computed reputations from its ledger')
    for (const r of summary.reputations) assert.ok(r.score >= 0 && r.score <= 1)

    assert.deepEqual(await demoDirs(), before, 'the demo removed its temporary data')
  })
})
