/** The metrics' label sets stay bounded whatever peers send (issue 18 item 1), and pulled counters add up. */
import * as assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { TOPIC } from '../../protocols/ids.js'
import { MAX_LABEL_VALUES, ReasonLabels, enumLabel } from '../../src/observe/labels.js'
import { IdlegridMetrics } from '../../src/observe/metrics.js'
import { recordAttack } from '../utils/index.js'
import { parseMetrics } from './fixtures.js'

async function series (metrics: IdlegridMetrics, name: string): Promise<Map<string, number>> {
  const all = parseMetrics(await metrics.registry.metrics())
  return new Map([...all].filter(([k]) => k.startsWith(name + '{') || k === name))
}

describe('observe: bounded metric labels (issue 18 item 1)', () => {
  it('a label from an enum is the value or "other"', () => {
    assert.equal(enumLabel('ok', ['ok', 'failed']), 'ok')
    assert.equal(enumLabel('OK"} evil 1', ['ok', 'failed']), 'other')
    assert.equal(enumLabel(7, ['ok']), 'other')
  })

  it('reason labels take our own texts only, at most MAX_LABEL_VALUES of them', () => {
    const labels = new ReasonLabels()
    assert.equal(labels.label('duplicate'), 'duplicate')
    assert.equal(labels.label('ERR_BAD_SIGNATURE'), 'ERR_BAD_SIGNATURE')
    assert.equal(labels.label('validator failed: 12D3KooW…'), 'other', 'a colon: text quoting something')
    assert.equal(labels.label('job 42'), 'other', 'digits: an id or a size')
    for (let i = 0; i < 100; i++) labels.label(`reason ${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`)
    assert.equal(labels.label('never seen before'), 'other')
    assert.equal(labels.label('duplicate'), 'duplicate', 'those already used stay')
  })

  it('red team: 1,676 distinct refusal reasons and 50 unknown topics make a bounded set of series', async () => {
    const metrics = new IdlegridMetrics()
    const ledger: Record<string, number> = { accept: 3 }
    for (let i = 0; i < 1_000; i++) ledger[`reject:validator failed: peer-chosen text ${i}`] = 1
    for (let i = 0; i < 1_000; i++) ledger[`ignore:${'abcdefghijklmnopqrstuvwxyz'[i % 26]}${'abcdefghijklmnopqrstuvwxyz'[Math.floor(i / 26) % 26]} reason`] = 1
    const gossip: Record<string, Record<string, number>> = { [TOPIC.ledger]: ledger }
    for (let i = 0; i < 50; i++) gossip[`/evil/${i}`] = { accept: 1 }
    metrics.pull({ gossip, market: { jobsSeen: 1, bids: 1, wins: 0, fillRate: 0, expectedEarningsUsd: 0, declines: { 'made-up-reason': 5, 'no-capacity': 2 } } })
    const gossipSeries = await series(metrics, 'idlegrid_gossip_messages_total')
    const declines = await series(metrics, 'idlegrid_market_declines_total')
    recordAttack({ issue: '18.1', attack: '1,676 distinct gossip refusal reasons, 50 made-up topics and an unknown decline reason as metric labels', got: `${gossipSeries.size} gossip series, ${declines.size} decline series`, limit: `labels from our enums or our own reason texts (at most ${MAX_LABEL_VALUES}), the rest "other"` })
    assert.ok(gossipSeries.size <= 2 * (MAX_LABEL_VALUES + 1) + 2, `${gossipSeries.size} series`)
    assert.equal(gossipSeries.get('idlegrid_gossip_messages_total{topic="other",verdict="accept",reason=""}'), 50)
    assert.equal(gossipSeries.get(`idlegrid_gossip_messages_total{topic="${TOPIC.ledger}",verdict="reject",reason="other"}`), 1_000)
    assert.equal(declines.get('idlegrid_market_declines_total{reason="other"}'), 5)
    assert.equal(declines.get('idlegrid_market_declines_total{reason="no-capacity"}'), 2)
    const refusals = await series(metrics, 'idlegrid_ledger_refusals_total')
    const refused = Object.entries(ledger).filter(([k]) => k !== 'accept').reduce((a, [, n]) => a + n, 0)
    assert.equal([...refusals.values()].reduce((a, b) => a + b, 0), refused, 'every ledger refusal counted')
  })

  it('heartbeat stream verdicts become bounded series that grow by what the count grew by', async () => {
    const metrics = new IdlegridMetrics()
    const stats: Record<string, number> = { accept: 4, 'ignore:expired': 1 }
    for (let i = 0; i < 200; i++) stats[`reject:made-up ${i}`] = 1
    metrics.pull({ heartbeats: stats })
    metrics.pull({ heartbeats: { ...stats, accept: 6 } })
    const m = await series(metrics, 'idlegrid_heartbeats_received_total')
    assert.equal(m.get('idlegrid_heartbeats_received_total{verdict="accept",reason=""}'), 6)
    assert.equal(m.get('idlegrid_heartbeats_received_total{verdict="ignore",reason="expired"}'), 1)
    assert.ok(m.size <= MAX_LABEL_VALUES + 3, `${m.size} series`)
  })

  it('a pulled count is added once: the counter grows by what the service\'s count grew by', async () => {
    const metrics = new IdlegridMetrics()
    const market = (bids: number): NonNullable<Parameters<IdlegridMetrics['pull']>[0]['market']> => ({ jobsSeen: bids, bids, wins: 1, fillRate: 1 / bids, expectedEarningsUsd: 0.5, declines: {} })
    metrics.pull({ market: market(2) })
    metrics.pull({ market: market(2) })
    metrics.pull({ market: market(5) })
    const m = parseMetrics(await metrics.registry.metrics())
    assert.equal(m.get('idlegrid_market_bids_total'), 5)
    assert.equal(m.get('idlegrid_market_wins_total'), 1)
    assert.equal(m.get('idlegrid_market_fill_ratio'), 0.2)
  })

  it('job outcomes outside the enum count as "other", and a preemption is counted as one', async () => {
    const metrics = new IdlegridMetrics()
    metrics.jobEnded('provider', 'preempted', 2_000)
    metrics.jobEnded('renter', 'x"} 1\nfake_metric 9', 1_000)
    const m = parseMetrics(await metrics.registry.metrics())
    assert.equal(m.get('idlegrid_preemptions_total{side="provider"}'), 1)
    assert.equal(m.get('idlegrid_jobs_total{side="renter",outcome="other"}'), 1)
    assert.equal(m.get('fake_metric'), undefined)
  })

  it('the Grafana dashboard (examples/grafana) charts only metrics a node serves', async () => {
    const dashboard = JSON.parse(await readFile('examples/grafana/idlegrid.json', 'utf8')) as { panels: Array<{ targets: Array<{ expr: string }> }> }
    const ours = new Set((await new IdlegridMetrics().registry.getMetricsAsJSON()).map(m => m.name))
    const used = new Set(dashboard.panels.flatMap(p => p.targets.flatMap(t => [...t.expr.matchAll(/\b([a-z][a-z0-9_]*)\{/g)].map(m => m[1] as string))))
    assert.ok(used.size >= 20, `${used.size} metrics charted`)
    for (const name of used) {
      const base = name.replace(/_(bucket|sum|count)$/, '')
      // libp2p's and Node's come from @libp2p/prometheus-metrics and prom-client's defaults
      assert.ok(ours.has(base) || /^(libp2p|nodejs|process)_/.test(name), `${name} is served`)
    }
    for (const name of ours) assert.ok([...used].some(u => u.startsWith(name)), `${name} is charted`)
  })
})
