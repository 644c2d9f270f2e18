/**
 * Cold start (issue 40 item 4) over real libp2p nodes on 127.0.0.1 with real LevelDB stores: a
 * seed holds the feeds of authors who are all offline (honest providers and renters, and two
 * Sybil rings); fresh renters that know only the seed sync from it. Without a trust list a fresh
 * renter holds those feeds in quarantine and counts 0 jobs for every provider (today's rule,
 * kept); one that adopted an operator's signed list counts the honest providers' jobs, while
 * each ring gains nothing beyond what its real, trusted renters gave it. Forged, expired,
 * unaccepted and oversized lists are refused with their typed reason and change nothing.
 */
import * as assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { resolveConfig, type Role } from '../../src/config/index.js'
import { loadTrustLists, type TrustAnchors } from '../../src/ledger/reputation/anchors/adopt.js'
import { sealTrustList, type TrustListContent } from '../../src/ledger/reputation/anchors/list.js'
import { maxLiftPerCounterparty } from '../../src/ledger/reputation/reputation.js'
import { ledgerService } from '../../src/ledger/service/ledger-node.js'
import type { LedgerService, LedgerServiceInit } from '../../src/ledger/service/ledger-service.js'
import { createNode, type IdlegridNode } from '../../src/node/index.js'
import { recordAttack, tempDir, waitFor } from '../utils/index.js'
import { jobEntries, newSigner, TestFeed } from './flood-fixtures.js'
import type { LedgerRecord } from '../../src/ledger/entries/entry.js'
import type { Signer } from '../../src/ledger/dev.js'

const ledgerOf = (node: IdlegridNode): LedgerService =>
  (node.libp2p.services as unknown as { ledger: LedgerService }).ledger
const RING_KEYS = 20
const DAY = 86_400_000

describe('cold start: a fresh renter\'s first view, with and without an operator\'s trust list (issue 40.4)', function () {
  this.timeout(120_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  const nodes: IdlegridNode[] = []
  let seed: IdlegridNode
  let operator: Signer
  const feeds: Record<'p1' | 'p2' | 'r1' | 'r2' | 'r3' | 'ring' | 'edged', TestFeed> = {} as any
  const records: LedgerRecord[] = []
  let newcomer: string

  async function start (name: string, role: Role, init: Partial<LedgerServiceInit>): Promise<IdlegridNode> {
    const bootstrap = role === 'bootstrap' ? [] : [seed.libp2p.getMultiaddrs()[0].toString()]
    const config = resolveConfig({ role, flags: { dataDir: join(dir.path, name), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap, heartbeatSeconds: 60 } })
    // the seed's id is a trust seed, as a bootstrap peer's is (services.ts trustSeeds)
    const trustedPeers = role === 'bootstrap' ? init.trustedPeers : [seed.peerId.toString()]
    const node = await createNode(config, {
      services: {
        ledger: ledgerService({
          dataDir: config.dataDir,
          role,
          summaryIntervalMs: 0,
          syncIntervalMs: 3_600_000,
          ...init,
          trustedPeers
        })
      }
    })
    nodes.push(node)
    return node
  }

  /** A fresh renter that knows only the seed, synced with it until a heads exchange pulls nothing new. */
  async function freshRenter (name: string, trustLists?: TrustAnchors, replicate?: 'all'): Promise<{ node: IdlegridNode, rounds: number }> {
    const node = await start(name, 'renter', { trustLists, replicate })
    await waitFor(() => node.libp2p.getConnections(seed.peerId).length > 0, { timeoutMs: 10_000, what: `${name} to connect to the seed` })
    let rounds = 0
    for (;;) {
      rounds++
      const report = await ledgerOf(node).syncNow({ timeoutMs: 10_000 })
      assert.deepEqual(report.errors, [], `${name}: sync errors`)
      if (report.pulled === 0 || rounds >= 10) return { node, rounds }
    }
  }

  const listFile = async (
    name: string,
    signer: Signer,
    content: Partial<TrustListContent>,
    alter?: (bytes: Uint8Array) => void
  ): Promise<string> => {
    const now = Date.now()
    const bytes = sealTrustList(signer.key as any, signer.peerId, {
      name,
      sequence: 1n,
      issuedAt: now - 1000,
      expiresAt: now + 30 * DAY,
      peers: [feeds.r1.signer.peerId, feeds.r2.signer.peerId],
      ...content
    })
    alter?.(bytes)
    const file = join(dir.path, `${name}.trust`)
    await writeFile(file, bytes)
    return file
  }

  before(async () => {
    dir = await tempDir('idlegrid-cold-start-')
    operator = await newSigner()
    for (const k of ['p1', 'p2', 'r1', 'r2', 'r3', 'ring', 'edged'] as const) feeds[k] = new TestFeed(await newSigner())
    newcomer = (await newSigner()).peerId.toString()
    const at = Date.now() - 1000
    const job = (p: TestFeed, r: TestFeed): void => {
      const j = jobEntries(p, r, at)
      records.push(j.attestation, j.receipt)
    }
    // honest history: the listed renters r1, r2 and an unlisted r3 that also used p2
    for (let i = 0; i < 2; i++) {
      job(feeds.p1, feeds.r1)
      job(feeds.p1, feeds.r2)
      job(feeds.p1, feeds.r3)
      job(feeds.p2, feeds.r2)
      job(feeds.p2, feeds.r3)
    }
    // ring 1: fresh keys receipt made-up jobs of a fresh provider key (two each: a renter's cap)
    // ring 2: the same around a provider that also ran one real job for the listed renter r1
    job(feeds.edged, feeds.r1)
    for (const provider of [feeds.ring, feeds.edged]) {
      for (let k = 0; k < RING_KEYS; k++) {
        const key = new TestFeed(await newSigner())
        job(provider, key); job(provider, key)
      }
    }
    const authors = [...new Set(records.map(r => r.authorId))]
    seed = await start('seed', 'bootstrap', { trustedPeers: authors })
    const outcomes = await ledgerOf(seed).ingest.ingest(records.map(r => r.envelope))
    assert.ok(outcomes.every(o => o.status === 'added'), `the seed stored every entry: ${JSON.stringify(outcomes.map(o => o.status))}`)
  })

  after(async () => {
    await Promise.all(nodes.map(async n => { await n.stop() }))
    await dir?.cleanup()
  })

  it('without a list: every provider counts 0 jobs after syncing from the seed (the authors offline)', async () => {
    // every feed pulled (a bounded renter with no anchor but the seed would pull none of them)
    const { node } = await freshRenter('no-list', undefined, 'all')
    const at = Date.now()
    const view = ledgerOf(node)
    for (const k of ['p1', 'p2', 'ring', 'edged'] as const) {
      const rep = view.reputation(feeds[k].id, at)
      assert.equal(rep.jobs, 0, `${k}: jobs counted without a list`)
      assert.equal(rep.score, view.reputation(newcomer, at).score, `${k} scores as a newcomer`)
    }
    const quarantined = (await view.ingest.stats()).quarantine?.entries ?? 0
    assert.ok(quarantined > 0, 'the offline authors\' entries wait in the quarantine')
    const explain = view.explainReputation(feeds.p1.id, at)
    assert.deepEqual(explain.anchors.lists, [])
    console.log(`      [figures] no list: p1 ${explain.score.toFixed(3)} (0 jobs), ${quarantined} entries quarantined`)
  })

  it('with an adopted list: the honest providers\' jobs count after syncing from the seed; both Sybil rings gain nothing (red team)', async () => {
    const anchors = loadTrustLists([await listFile('ops', operator, {})], [operator.peerId.toString()])
    assert.equal(anchors.lists.length, 1, JSON.stringify(anchors.refused))
    const { node, rounds } = await freshRenter('listed', anchors)
    const at = Date.now()
    const view = ledgerOf(node)
    const fresh = view.reputation(newcomer, at).score
    const p1 = view.explainReputation(feeds.p1.id, at)
    const p2 = view.reputation(feeds.p2.id, at)
    assert.equal(p1.reputation.jobs, 6, 'p1: all six jobs held')
    assert.equal(p2.jobs, 4, 'p2: all four jobs held')
    assert.ok(p1.score > fresh && p2.score > fresh, `honest providers above a newcomer: p1 ${p1.score}, p2 ${p2.score}, newcomer ${fresh}`)
    assert.equal(p1.direct.renters, 2, 'r1 and r2 are seeds through the list')
    assert.ok(p1.anchors.counted.some(c => c.anchor === `list ${operator.peerId.toString()}#1` && c.renters === 2), JSON.stringify(p1.anchors.counted))
    assert.equal(p1.transitive.renters, 1, 'r3 counts through p2, not through p1 itself')
    assert.equal(p1.anchors.lists[0]?.operator, operator.peerId.toString())
    // ring 1: nobody with standing names it: quarantined, 0 jobs, a newcomer's score
    const ring = view.reputation(feeds.ring.id, at)
    assert.equal(ring.jobs, 0)
    assert.equal(ring.score, fresh)
    // ring 2: r1's real job names it, so its whole ring is stored; the ring's keys count 0
    const edged = view.explainReputation(feeds.edged.id, at)
    assert.equal(edged.reputation.jobs, 1 + 2 * RING_KEYS, 'the attack-edged ring is held in full')
    const ringKeys = edged.renters.filter(r => r.renter !== feeds.r1.id)
    assert.equal(ringKeys.length, RING_KEYS)
    assert.ok(ringKeys.every(r => r.weight === 0 && r.part === 'discounted'), JSON.stringify(ringKeys.slice(0, 3)))
    const ringLift = edged.score - fresh
    const bound = edged.direct.renters * maxLiftPerCounterparty()
    assert.ok(ringLift <= bound + 1e-12, `lift ${ringLift} > ${edged.direct.renters} trusted renter(s) × ${maxLiftPerCounterparty()}`)
    // what r1's single receipt alone gives: (α + 1) / (α + β + 1) against α / (α + β)
    assert.ok(Math.abs(edged.score - 6 / 11) < 1e-3, `edged ${edged.score}`)
    console.log(`      [figures] list adopted (${rounds} sync rounds): p1 ${p1.score.toFixed(3)} (${p1.reputation.jobs} jobs), p2 ${p2.score.toFixed(3)}, newcomer ${fresh.toFixed(3)}; ring ${ring.score.toFixed(3)} (${ring.jobs} jobs held); edged ring ${edged.score.toFixed(3)} (evidence counted fully ${edged.evidenceScore.toFixed(3)})`)
    recordAttack({
      issue: '40.4',
      attack: `fresh renter with an operator's list (2 renters) syncs from a seed: ${RING_KEYS} fresh keys × 2 receipts for a fresh provider key, authors offline`,
      got: `ring provider ${ring.score.toFixed(3)} vs newcomer ${fresh.toFixed(3)} (lift ${(ring.score - fresh).toFixed(3)}, ${ring.jobs} jobs held); honest p1 ${p1.score.toFixed(3)}, p2 ${p2.score.toFixed(3)}`,
      limit: 'keys with no paired job with an anchor count 0: lift 0 over a newcomer'
    })
    recordAttack({
      issue: '40.4',
      attack: `the same ring (${RING_KEYS} keys) around a provider that ran one real job for a listed renter`,
      got: `ring provider ${edged.score.toFixed(3)} (lift ${ringLift.toFixed(3)}, all of it the listed renter's one receipt; ring keys' weight 0; counted fully they would give ${edged.evidenceScore.toFixed(3)})`,
      limit: `lift ≤ trusted renters × ${maxLiftPerCounterparty().toFixed(3)}; ring keys add 0`
    })
  })

  it('forged, expired, unaccepted and oversized lists are refused with their reason and change nothing (red team)', async () => {
    const stranger = await newSigner()
    const extra = await Promise.all(Array.from({ length: 300 }, async () => (await newSigner()).peerId))
    const bad = {
      forged: await listFile('forged', operator, {}, bytes => { bytes[bytes.length - 1] ^= 1 }),
      expired: await listFile('expired', operator, { issuedAt: Date.now() - 40 * DAY, expiresAt: Date.now() - DAY }),
      'operator-not-accepted': await listFile('stranger', stranger, {}),
      oversized: await listFile('oversized', operator, { peers: [feeds.r1.signer.peerId, ...extra] })
    }
    const anchors = loadTrustLists(Object.values(bad), [operator.peerId.toString()])
    assert.equal(anchors.lists.length, 0)
    const { node } = await freshRenter('bad-lists', anchors)
    const at = Date.now()
    const view = ledgerOf(node)
    const p1 = view.explainReputation(feeds.p1.id, at)
    assert.equal(p1.reputation.jobs, 0, 'no refused list anchors anything')
    assert.equal(p1.score, view.reputation(newcomer, at).score)
    const expected = { forged: 'bad-signature', expired: 'expired', 'operator-not-accepted': 'operator-not-accepted', oversized: 'oversized' }
    for (const [what, file] of Object.entries(bad)) {
      const refused = p1.anchors.refused.find(r => r.source === file)
      assert.equal(refused?.reason, expected[what as keyof typeof expected], `${what}: ${JSON.stringify(refused)}`)
      recordAttack({
        issue: '40.4',
        attack: `a fresh renter is given a ${what === 'operator-not-accepted' ? 'list signed by a key it does not accept' : `${what} trust list`} naming the honest renters`,
        got: `refused (${refused?.reason ?? 'adopted'}: ${refused?.message.slice(0, 90) ?? ''}); p1 ${p1.reputation.jobs} jobs, score ${p1.score.toFixed(3)} as without a list`,
        limit: 'only unexpired lists with a valid signature by an accepted operator key, ≤ 256 peers, are adopted'
      })
    }
  })
})
