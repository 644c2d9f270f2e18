/**
 * Replication scope (issue 40 item 3) over real libp2p nodes on 127.0.0.1 with real LevelDB
 * stores: a seed (replicate: all, the bootstrap default) holds a small market the renters care
 * about (providers p1, p2 and their renters r1–r3) and many unrelated pairs. A renter with the
 * bounded scope (its trust seeds: the seed and r1; providers it may award: p1, p2) syncs from
 * the seed and stores only its scope, skipping and counting the other heads; it computes the
 * same reputation for p1 and p2 as a renter with the same seeds that pulls every feed. A
 * provider it learns it may award later is pulled at the next sync.
 */
import * as assert from 'node:assert/strict'
import { join } from 'node:path'
import { resolveConfig, type Role } from '../../src/config/index.js'
import { ledgerService } from '../../src/ledger/service/ledger-node.js'
import type { LedgerService, LedgerServiceInit } from '../../src/ledger/service/ledger-service.js'
import { createNode, type IdlegridNode } from '../../src/node/index.js'
import { tempDir, waitFor } from '../utils/index.js'
import { jobEntries, newSigner, TestFeed } from './flood-fixtures.js'
import type { LedgerRecord } from '../../src/ledger/entries/entry.js'

const ledgerOf = (node: IdlegridNode): LedgerService =>
  (node.libp2p.services as unknown as { ledger: LedgerService }).ledger
/** Unrelated provider–renter pairs the seed also holds. */
const UNRELATED_PAIRS = 30

describe('replication scope: a renter stores what it needs, a seed everything (issue 40.3)', function () {
  this.timeout(120_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  const nodes: IdlegridNode[] = []
  let seed: IdlegridNode
  const feeds: Record<'p1' | 'p2' | 'r1' | 'r2' | 'r3', TestFeed> = {} as any
  const unrelated: Array<{ provider: TestFeed, renter: TestFeed }> = []
  const records: LedgerRecord[] = []

  async function start (name: string, role: Role, init: Partial<LedgerServiceInit>): Promise<IdlegridNode> {
    const bootstrap = role === 'bootstrap' ? [] : [seed.libp2p.getMultiaddrs()[0].toString()]
    const config = resolveConfig({ role, flags: { dataDir: join(dir.path, name), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap, heartbeatSeconds: 60 } })
    const node = await createNode(config, {
      services: {
        ledger: ledgerService({
          dataDir: config.dataDir,
          role,
          summaryIntervalMs: 0,
          syncIntervalMs: 3_600_000,
          ...init
        })
      }
    })
    nodes.push(node)
    return node
  }

  /** Syncs `node` with the seed until a heads exchange pulls nothing new (at most 10 rounds). */
  async function syncUntilQuiet (node: IdlegridNode): Promise<void> {
    await waitFor(() => node.libp2p.getConnections(seed.peerId).length > 0, { timeoutMs: 10_000, what: 'the renter to connect to the seed' })
    for (let round = 0; round < 10; round++) {
      const report = await ledgerOf(node).syncNow({ timeoutMs: 20_000 })
      assert.deepEqual(report.errors, [])
      if (report.pulled === 0) return
    }
  }

  /** A renter whose trust seeds are the seed and r1, that may award p1 and p2. */
  async function renter (name: string, replicate: 'all' | 'bounded' | undefined): Promise<IdlegridNode> {
    const node = await start(name, 'renter', { replicate, trustedPeers: [seed.peerId.toString(), feeds.r1.id] })
    ledgerOf(node).mayAward(feeds.p1.id)
    // a bid is how most providers come into scope: the auction asks its reliability
    ledgerOf(node).reliability(feeds.p2.id)
    await syncUntilQuiet(node)
    return node
  }

  const held = (node: IdlegridNode): Set<string> => new Set(ledgerOf(node).store.allHeads().map(h => h.authorId))

  before(async () => {
    dir = await tempDir('idlegrid-scope-')
    for (const k of ['p1', 'p2', 'r1', 'r2', 'r3'] as const) feeds[k] = new TestFeed(await newSigner())
    const at = Date.now() - 1000
    const job = (p: TestFeed, r: TestFeed): void => {
      const j = jobEntries(p, r, at)
      records.push(j.attestation, j.receipt)
    }
    for (let i = 0; i < 2; i++) {
      job(feeds.p1, feeds.r1)
      job(feeds.p1, feeds.r2)
      job(feeds.p2, feeds.r2)
      job(feeds.p2, feeds.r3)
    }
    job(feeds.p1, feeds.r3)
    for (let i = 0; i < UNRELATED_PAIRS; i++) {
      const pair = { provider: new TestFeed(await newSigner()), renter: new TestFeed(await newSigner()) }
      unrelated.push(pair)
      job(pair.provider, pair.renter)
      job(pair.provider, pair.renter)
    }
    const authors = [...new Set(records.map(r => r.authorId))]
    seed = await start('seed', 'bootstrap', { trustedPeers: authors })
    const outcomes = await ledgerOf(seed).ingest.ingest(records.map(r => r.envelope))
    assert.ok(outcomes.every(o => o.status === 'added'))
  })

  after(async () => {
    await Promise.all(nodes.map(async n => { await n.stop() }))
    await dir?.cleanup()
  })

  it('the seed (replicate: all by default) stores every feed', async () => {
    const status = await ledgerOf(seed).status()
    assert.equal(status.scope?.mode, 'all')
    assert.equal(status.authors, 5 + 2 * UNRELATED_PAIRS)
    assert.equal(status.entries, records.length)
  })

  it('a bounded renter stores only its scope and counts the heads it skipped; its reputation of p1, p2 equals a full renter\'s', async () => {
    // no `replicate` given: a renter's default
    const bounded = await renter('bounded', undefined)
    const full = await renter('full', 'all')
    const inScope = new Set([feeds.p1.id, feeds.p2.id, feeds.r1.id, feeds.r2.id, feeds.r3.id])
    assert.deepEqual([...held(bounded)].sort(), [...inScope].sort(), 'the bounded renter holds exactly the market it may award in')
    const status = await ledgerOf(bounded).status()
    assert.equal(status.scope?.mode, 'bounded', 'renters default to the bounded scope')
    assert.equal(status.scope?.awardable, 2)
    assert.equal(status.scope?.skippedAuthors, 2 * UNRELATED_PAIRS, 'every unrelated author offered was skipped')
    assert.ok((status.scope?.skippedHeads ?? 0) >= 2 * UNRELATED_PAIRS)
    assert.equal(status.quarantine.entries, 0, 'nothing out of scope was pulled, not even into the quarantine')
    const fullStatus = await ledgerOf(full).status()
    assert.equal(fullStatus.scope?.skippedHeads, 0)
    assert.ok(fullStatus.entries + fullStatus.quarantine.entries > status.entries, 'the full renter pulled the unrelated feeds too')
    const at = Date.now()
    for (const k of ['p1', 'p2'] as const) {
      const a = ledgerOf(bounded).reputation(feeds[k].id, at)
      const b = ledgerOf(full).reputation(feeds[k].id, at)
      assert.ok(a.jobs > 0, `${k}: jobs counted`)
      assert.equal(a.jobs, b.jobs, `${k}: jobs`)
      assert.equal(a.score, b.score, `${k}: score`)
      assert.equal(a.evidenceScore, b.evidenceScore, `${k}: evidence`)
    }
    console.log(`      [figures] offered ${2 * UNRELATED_PAIRS + 5} feeds (${records.length} entries): bounded renter stored ${status.authors} feeds, ${status.entries} entries, ${status.diskBytes} B; full renter ${fullStatus.authors} feeds + ${fullStatus.quarantine.authors} quarantined`)
  })

  it('a provider the renter learns it may award later is pulled at the next sync (into the quarantine: nobody it trusts vouches for it)', async () => {
    const node = await renter('later', 'bounded')
    const { provider, renter: its } = unrelated[0]
    const before = await ledgerOf(node).status()
    assert.equal(before.quarantine.authors, 0)
    ledgerOf(node).mayAward(provider.id)
    await syncUntilQuiet(node)
    const status = await ledgerOf(node).status()
    // scope decides what is pulled, standing what is stored: the provider's two attestations wait
    // in the quarantine, and a quarantined entry names nobody into scope, so its renter stays out
    assert.equal(status.quarantine.authors, 1, 'the provider\'s feed was pulled')
    assert.equal(status.quarantine.entries, 2)
    assert.ok(!held(node).has(its.id))
    assert.equal(status.authors, 5, 'nothing else was stored')
  })
})
