/**
 * Retention (protocols/README.md §7 "Retention", issue 40 item 3): a node drops the entries of
 * other feeds older than the horizon (224 days), keeping the newest of them as the feed's base;
 * a fresh node pulls such a feed from its base, and takes a range that starts later than it
 * asked only at an entry older than the horizon, so a holder cannot hide recent entries.
 */
import * as assert from 'node:assert/strict'
import { join } from 'node:path'
import { LedgerEntry } from '../../protocols/ledger.js'
import { resolveConfig } from '../../src/config/index.js'
import { RETENTION_MS } from '../../src/ledger/entries/retention.js'
import { LedgerError } from '../../src/ledger/errors.js'
import { LedgerIngest, type IngestOutcome } from '../../src/ledger/ingest/ingest.js'
import { ledgerService } from '../../src/ledger/service/ledger-node.js'
import type { LedgerService, LedgerServiceInit } from '../../src/ledger/service/ledger-service.js'
import { RetentionPass } from '../../src/ledger/service/retention.js'
import type { Signer } from '../../src/ledger/dev.js'
import { createNode, type IdlegridNode } from '../../src/node/index.js'
import { isCoded } from '../../src/common/index.js'
import { tempDir, waitFor } from '../utils/index.js'
import { recordAttack } from '../utils/redteam.js'
import { Feeds, idOf, newSigner } from './feeds.js'
import { summaryBody } from './flood-fixtures.js'
import type { LedgerRecord } from '../../src/ledger/entries/entry.js'

const DAY = 24 * 3600_000
/** Jobs 1–10 of each feed are 300 days old, 11–15 a day old: the base is entry 10. */
const OLD_JOBS = 10
const NEW_JOBS = 5

interface TwoFeeds { provider: Signer, renter: Signer, p: LedgerRecord[], r: LedgerRecord[] }

async function twoFeeds (now = Date.now()): Promise<TwoFeeds> {
  const provider = await newSigner()
  const renter = await newSigner()
  const feeds = new Feeds()
  for (let i = 0; i < OLD_JOBS; i++) feeds.job(provider, renter, now - 300 * DAY + i * 60_000)
  for (let i = 0; i < NEW_JOBS; i++) feeds.job(provider, renter, now - DAY + i * 60_000)
  const of = (s: Signer): LedgerRecord[] => feeds.records.filter(r => r.authorId === idOf(s))
  return { provider, renter, p: of(provider), r: of(renter) }
}

const envelopes = (records: LedgerRecord[]): Uint8Array[] => records.map(r => r.envelope)
const statuses = (outcomes: IngestOutcome[]): string[] => [...new Set(outcomes.map(o => o.status))]

async function openLedger (path: string): Promise<LedgerIngest> {
  const me = await newSigner()
  return await LedgerIngest.open(path, { privateKey: me.key, peerId: me.peerId })
}

describe('ledger: retention (entries older than the horizon are dropped; a feed may start at its base)', function () {
  this.timeout(60_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  const nodes: IdlegridNode[] = []

  before(async () => { dir = await tempDir('idlegrid-retention-') })
  after(async () => {
    await Promise.all(nodes.map(async n => { await n.stop() }))
    await dir.cleanup()
  })

  it('a pass drops what is older than the horizon, keeps the newest of it as the base, and never our own feed; the base survives a restart', async () => {
    const path = join(dir.path, 'pass')
    const { provider, renter, p, r } = await twoFeeds()
    let ledger = await openLedger(path)
    assert.deepEqual(statuses(await ledger.ingest(envelopes([...p, ...r]))), ['added'])
    // our own feed: entries appended while the clock said 300 days ago
    const me = await newSigner()
    await ledger.close()
    let clock = Date.now() - 300 * DAY
    ledger = await LedgerIngest.open(path, { privateKey: me.key, peerId: me.peerId, now: () => clock })
    for (let i = 0; i < 3; i++) await ledger.append(LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, summaryBody(clock - 1000))
    clock = Date.now()

    const report = await new RetentionPass({ ledger: () => ledger, selfId: idOf(me) }).run()
    assert.equal(report.dropped, 2 * (OLD_JOBS - 1))
    assert.equal(report.feeds, 2)
    for (const [signer, feed] of [[provider, p], [renter, r]] as const) {
      const head = ledger.store.head(idOf(signer))
      assert.equal(head?.base, OLD_JOBS)
      assert.equal(head?.seq, OLD_JOBS + NEW_JOBS)
      assert.equal(head?.bytes, feed.slice(OLD_JOBS - 1).reduce((sum, e) => sum + e.envelope.byteLength, 0))
      assert.equal(await ledger.store.get(signer.peerId.toMultihash().bytes, 3), undefined)
      assert.equal(await ledger.store.getByHash(feed[2].hash), undefined, 'the hash index drops the entry too')
      assert.equal((await ledger.store.getByHash(feed[OLD_JOBS - 1].hash))?.seq, OLD_JOBS, 'the base itself is kept')
      const served = await ledger.store.range(signer.peerId.toMultihash().bytes, 1, 256)
      assert.deepEqual(served.entries.map(e => Buffer.from(e).toString('hex')), envelopes(feed.slice(OLD_JOBS - 1)).map(e => Buffer.from(e).toString('hex')))
    }
    assert.equal(ledger.store.head(idOf(me))?.base, 1, 'our own feed keeps every entry')
    assert.equal((await ledger.stats()).entries, 2 * (NEW_JOBS + 1) + 3)

    // a second pass finds nothing more to drop; a restart reads the bases back
    assert.equal((await new RetentionPass({ ledger: () => ledger, selfId: idOf(me) }).run()).dropped, 0)
    await ledger.close()
    ledger = await LedgerIngest.open(path, { privateKey: me.key, peerId: me.peerId })
    assert.equal(ledger.store.head(idOf(provider))?.base, OLD_JOBS)
    assert.equal((await ledger.stats()).entries, 2 * (NEW_JOBS + 1) + 3)
    // an entry below the base, arriving again, is not taken back
    assert.deepEqual(statuses(await ledger.ingest(envelopes(p.slice(0, 3)))), ['pruned'])
    await ledger.close()
  })

  it('a range that starts at its holder\'s base, older than the horizon, starts the feed there; a node that held an older part drops it', async () => {
    const { provider, p } = await twoFeeds()
    const fresh = await openLedger(join(dir.path, 'fresh'))
    const range = { author: provider.peerId.toMultihash().bytes, fromSeq: 1 }
    assert.deepEqual(statuses(await fresh.ingest(envelopes(p.slice(OLD_JOBS - 1)), { range })), ['added'])
    assert.equal(fresh.store.head(idOf(provider))?.base, OLD_JOBS)
    assert.equal((await fresh.stats()).entries, NEW_JOBS + 1)
    await fresh.close()

    const behind = await openLedger(join(dir.path, 'behind'))
    assert.deepEqual(statuses(await behind.ingest(envelopes(p.slice(0, 4)))), ['added'])
    assert.deepEqual(statuses(await behind.ingest(envelopes(p.slice(OLD_JOBS - 1)), { range: { ...range, fromSeq: 5 } })), ['added'])
    assert.equal(behind.store.head(idOf(provider))?.base, OLD_JOBS)
    // what it held (seqs 1–4) goes in the queue after the write
    await waitFor(async () => await behind.store.get(range.author, 2) == null, { timeoutMs: 5_000, what: 'the entries below the new base to go' })
    assert.equal((await behind.stats()).entries, NEW_JOBS + 1)
    await behind.close()
  })

  it('red team: a range that starts later than asked at an entry younger than the horizon is refused whole (a holder cannot hide recent entries)', async () => {
    const { provider, p } = await twoFeeds()
    const ledger = await openLedger(join(dir.path, 'hiding'))
    const range = { author: provider.peerId.toMultihash().bytes, fromSeq: 1 }
    // entries 12–15 are a day old: whatever came before them is recent too
    const outcomes = await ledger.ingest(envelopes(p.slice(OLD_JOBS + 1)), { range })
    assert.deepEqual(statuses(outcomes), ['rejected'])
    const error = (outcomes[0] as { error: unknown }).error
    assert.ok(isCoded(error, LedgerError, 'ERR_LEDGER_CHAIN'))
    assert.match((error as Error).message, /younger than the retention horizon/)
    assert.equal(ledger.store.head(idOf(provider)), undefined)
    // and a start one minute inside the horizon: refused too
    const edge = await twoFeeds(Date.now() + 300 * DAY - RETENTION_MS + 60_000)
    const late = await ledger.ingest(envelopes(edge.p.slice(1, OLD_JOBS)), {
      range: { author: edge.provider.peerId.toMultihash().bytes, fromSeq: 1 }
    })
    assert.deepEqual(statuses(late), ['rejected'])
    recordAttack({
      issue: '40.3',
      attack: 'a holder serves a feed from a later seq than asked, at a recent entry, to hide the entries before it',
      got: `${statuses(outcomes).join(', ')} for all ${outcomes.length} entries; nothing of the feed stored`,
      limit: `a range may start later than asked only at an entry at least ${RETENTION_MS / DAY} days old (the retention horizon)`
    })
    await ledger.close()
  })

  it('a feed in the quarantine may start at a base too, and moves to the store from there once its author has standing', async () => {
    const { provider, p } = await twoFeeds()
    const me = await newSigner()
    const ledger = await LedgerIngest.open(join(dir.path, 'quarantine'), { privateKey: me.key, peerId: me.peerId, admission: {} })
    const range = { author: provider.peerId.toMultihash().bytes, fromSeq: 1 }
    assert.deepEqual(statuses(await ledger.ingest(envelopes(p.slice(OLD_JOBS - 1)), { range })), ['quarantined'])
    assert.equal(ledger.admission?.quarantine.seq(idOf(provider)), OLD_JOBS + NEW_JOBS)
    await ledger.grantConnected(idOf(provider))
    assert.equal(ledger.store.head(idOf(provider))?.base, OLD_JOBS)
    assert.equal(ledger.store.head(idOf(provider))?.seq, OLD_JOBS + NEW_JOBS)
    await ledger.close()
  })

  describe('between real nodes', () => {
    const ledgerOf = (node: IdlegridNode): LedgerService =>
      (node.libp2p.services as unknown as { ledger: LedgerService }).ledger

    async function start (
      name: string,
      bootstrap: IdlegridNode | undefined,
      ledger: Partial<LedgerServiceInit>
    ): Promise<IdlegridNode> {
      const config = resolveConfig({ role: 'bootstrap', flags: { dataDir: join(dir.path, name), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: bootstrap == null ? [] : [bootstrap.libp2p.getMultiaddrs()[0].toString()], heartbeatSeconds: 60 } })
      const node = await createNode(config, { services: { ledger: ledgerService({ dataDir: config.dataDir, role: 'renter', summaryIntervalMs: 0, syncIntervalMs: 3_600_000, ...ledger }) } })
      nodes.push(node)
      return node
    }

    it('a fresh node syncs a pruned feed from its base and computes the holder\'s reputation; a holder that cut a feed at a recent entry gets it refused', async () => {
      const { provider, renter, p, r } = await twoFeeds()
      const authors = [idOf(provider), idOf(renter)]
      const holder = await start('holder', undefined, { trustedPeers: authors })
      assert.deepEqual(statuses(await ledgerOf(holder).ingest.ingest(envelopes([...p, ...r]))), ['added'])
      assert.equal((await ledgerOf(holder).applyRetention()).dropped, 2 * (OLD_JOBS - 1))

      const fresh = await start('fresh', holder, { trustedPeers: authors })
      const held = (node: IdlegridNode, s: Signer): number | undefined => ledgerOf(node).store.head(idOf(s))?.seq
      await waitFor(() => held(fresh, provider) === OLD_JOBS + NEW_JOBS && held(fresh, renter) === OLD_JOBS + NEW_JOBS, { timeoutMs: 20_000, what: 'the fresh node to pull both feeds from their bases' })
      assert.equal(ledgerOf(fresh).store.head(idOf(provider))?.base, OLD_JOBS)
      const status = await ledgerOf(fresh).status()
      assert.equal(status.entries, 2 * (NEW_JOBS + 1))
      assert.equal(status.heads.find(h => h.author === idOf(provider))?.base, OLD_JOBS, 'ledger status shows where the feed starts')
      const now = Date.now()
      const seen = (node: IdlegridNode): { jobs: number, evidenceScore: number } => {
        const { jobs, evidenceScore } = ledgerOf(node).reputation(idOf(provider), now)
        return { jobs, evidenceScore }
      }
      assert.deepEqual(seen(fresh), seen(holder))
      assert.equal(seen(fresh).jobs, NEW_JOBS + 1)

      // a liar cut the provider's feed at entry 13, a day old, to hide 10–12
      const liar = await start('liar', undefined, { trustedPeers: authors, retain: 'all' })
      assert.deepEqual(statuses(await ledgerOf(liar).ingest.ingest(envelopes([...p, ...r]))), ['added'])
      await ledgerOf(liar).ingest.dropBelow(idOf(provider), OLD_JOBS + 3)
      const victim = await start('victim', liar, { trustedPeers: authors })
      await waitFor(() => held(victim, renter) === OLD_JOBS + NEW_JOBS, { timeoutMs: 20_000, what: 'the victim to pull the renter\'s whole feed' })
      const report = await ledgerOf(victim).syncNow({ timeoutMs: 10_000 })
      assert.equal(held(victim, provider), undefined, 'the cut feed is not taken')
      assert.ok(report.errors.some(e => /younger than the retention horizon/.test(e)), report.errors.join('; '))
      recordAttack({
        issue: '40.3',
        attack: 'a holder drops a feed\'s recent entries and serves it from a recent base (real nodes)',
        got: `the victim holds ${held(victim, provider) ?? 'nothing'} of the cut feed; its sync ended with: ${report.errors[0]?.split(': ').slice(-1)[0] ?? 'no error'}`,
        limit: 'a range may start later than asked only at an entry older than the retention horizon'
      })
    })
  })
})
