import * as assert from 'node:assert/strict'
import { join } from 'node:path'
import { LedgerEntry } from '../../protocols/ledger.js'
import { signTestJob, type Signer } from '../../src/ledger/dev.js'
import { LedgerError } from '../../src/ledger/errors.js'
import { MAX_STANDING_DEPTH } from '../../src/ledger/ingest/standing.js'
import { LedgerIngest, type LedgerIngestOptions } from '../../src/ledger/ingest/ingest.js'
import { tempDir } from '../utils/index.js'
import { jobEntries, newSigner, TestFeed } from './flood-fixtures.js'
import { isCoded } from '../../src/common/index.js'

// Standing, quarantine and quotas at the store (issue 12 item 4), with real LevelDB and real
// signatures. The network parts are in flood-network.spec.ts.

async function openLedger (path: string, self: Signer, admission: LedgerIngestOptions['admission'] = {}, opts: Partial<LedgerIngestOptions> = {}): Promise<LedgerIngest> {
  return await LedgerIngest.open(path, { privateKey: self.key, peerId: self.peerId, admission, ...opts })
}

describe('ledger flood resistance: standing, quarantine, quotas (store)', function () {
  this.timeout(60_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  let n = 0
  const fresh = (): string => join(dir.path, `s${n++}`)
  before(async () => { dir = await tempDir('idlegrid-flood-') })
  after(async () => { await dir.cleanup() })

  it('an entry of an author nobody vouches for is quarantined: not stored, not a head, not announced; our own attestation naming it promotes its feed', async () => {
    const self = await newSigner()
    const ledger = await openLedger(fresh(), self)
    try {
      const added: string[] = []
      ledger.store.onAdded(r => added.push(`${r.authorId}:${r.seq}`))
      const renter = new TestFeed(await newSigner())
      const job = signTestJob({ provider: self, renter: renter.signer })
      const receipt = renter.entry(LedgerEntry.BodyKind.RECEIPT, job.receipt)
      const later = renter.summary()
      const outcomes = await ledger.ingest([receipt.envelope, later.envelope])
      assert.deepEqual(outcomes.map(o => o.status), ['quarantined', 'quarantined'])
      assert.equal(ledger.store.head(renter.id), undefined)
      assert.deepEqual(added, [])
      assert.equal((await ledger.stats()).quarantine?.entries, 2)
      assert.equal((await ledger.store.headsPage(undefined, 100)).heads.length, 0, 'heads answers never list it')

      // our attestation names the renter: its two quarantined entries are stored with it
      await ledger.append(LedgerEntry.BodyKind.ATTESTATION, job.attestation)
      assert.equal(ledger.store.head(renter.id)?.seq, 2)
      assert.deepEqual(added, [`${self.peerId.toString()}:1`, `${renter.id}:1`, `${renter.id}:2`])
      assert.equal((await ledger.stats()).quarantine?.entries, 0)
      // its next entry goes straight in
      assert.equal((await ledger.ingestOne(renter.summary().envelope)).status, 'added')
    } finally {
      await ledger.close()
    }
  })

  it('a quarantined feed written in one burst (its whole quarantine rate) is promoted whole: it is charged anew at its new standing', async () => {
    const self = await newSigner()
    const ledger = await openLedger(fresh(), self)
    try {
      const peer = new TestFeed(await newSigner())
      const t = Date.now()
      const burst = Array.from({ length: 60 }, (_, i) => peer.summary(t - 1000 + i).envelope)
      const outcomes = await ledger.ingest(burst)
      assert.ok(outcomes.every(o => o.status === 'quarantined'))
      assert.equal(ledger.admission?.quarantine.seq(peer.id), 60)
      await ledger.grantConnected(peer.id)
      assert.equal(ledger.store.head(peer.id)?.seq, 60)
    } finally {
      await ledger.close()
    }
  })

  it(`standing reaches ${MAX_STANDING_DEPTH} steps from a trusted peer and no further; rooted standing survives a restart`, async () => {
    const self = await newSigner()
    const [t, p1, r1, p2, r2] = await Promise.all(
      Array.from({ length: 5 }, async () => new TestFeed(await newSigner()))
    )
    const path = fresh()
    let ledger = await openLedger(path, self, { trustedPeers: [t.id] })
    // t (root) receipts p1; p1 attests for r1; r1 receipts p2; p2 attests for r2
    const a = jobEntries(p1, t)
    const b = jobEntries(p1, r1)
    const c = jobEntries(p2, r1)
    const d = jobEntries(p2, r2)
    try {
      const outcomes = await ledger.ingest([
        a.receipt.envelope,
        a.attestation.envelope,
        b.attestation.envelope,
        b.receipt.envelope,
        c.receipt.envelope,
        c.attestation.envelope,
        d.attestation.envelope,
        d.receipt.envelope
      ])
      assert.deepEqual(outcomes.map(o => o.status), ['added', 'added', 'added', 'added', 'added', 'added', 'added', 'quarantined'])
      assert.equal(ledger.admission?.standing.depth(p2.id), 3)
      assert.equal(ledger.admission?.standing.has(r2.id), false, 'depth 4 is beyond the closure')
    } finally {
      await ledger.close()
    }
    ledger = await openLedger(path, self, { trustedPeers: [t.id] })
    try {
      assert.equal(ledger.admission?.standing.depth(r1.id), 2)
      assert.equal((await ledger.ingestOne(r1.summary().envelope)).status, 'added')
    } finally {
      await ledger.close()
    }
  })

  it('the quarantine is bounded in entries and bytes and writes nothing to disk; junk is evicted before feeds others name; honest entries are still stored', async () => {
    const self = await newSigner()
    const trusted = new TestFeed(await newSigner())
    const ledger = await openLedger(fresh(), self, {
      trustedPeers: [trusted.id],
      quarantine: { maxEntries: 50, maxBytes: 64 * 1024 }
    })
    try {
      // two newcomers that name each other (a job), then 300 junk feeds that name nobody
      const provider = new TestFeed(await newSigner())
      const renter = new TestFeed(await newSigner())
      const job = jobEntries(provider, renter)
      await ledger.ingest([job.attestation.envelope, job.receipt.envelope])
      const before = await ledger.stats()
      const junk = await Promise.all(
        Array.from({ length: 300 }, async () => new TestFeed(await newSigner()).summary().envelope)
      )
      const outcomes = await ledger.ingest(junk)
      assert.ok(outcomes.every(o => o.status === 'quarantined'))
      const after = await ledger.stats()
      assert.ok(
        after.quarantine != null && after.quarantine.entries <= 50 && after.quarantine.bytes <= 64 * 1024,
        JSON.stringify(after.quarantine)
      )
      assert.ok(after.quarantine.evicted >= 250)
      assert.equal(after.authors, before.authors)
      assert.equal(after.entries, before.entries)
      assert.equal(ledger.admission?.quarantine.seq(provider.id), 1, 'the newcomers named by each other stayed')
      assert.equal(ledger.admission?.quarantine.seq(renter.id), 1)
      // an honest feed with standing is stored whatever the quarantine holds
      assert.equal((await ledger.ingestOne(trusted.summary().envelope)).status, 'added')
      // a trusted renter's receipt for the newcomer provider promotes it (and, through its attestation, its renter)
      const vouch = jobEntries(provider, trusted)
      await ledger.ingest([vouch.receipt.envelope])
      assert.equal(ledger.store.head(provider.id)?.seq, 1)
      assert.equal(ledger.store.head(renter.id)?.seq, 1)
    } finally {
      await ledger.close()
    }
  })

  it('a connected peer has provisional standing: its quarantined feed is promoted, and it shares one byte budget with what it vouches for', async () => {
    const self = await newSigner()
    const ledger = await openLedger(fresh(), self, { quotas: { provisional: { bytes: 8 * 1024 } } })
    try {
      const peer = new TestFeed(await newSigner())
      const first = peer.summary()
      assert.equal((await ledger.ingestOne(first.envelope)).status, 'quarantined')
      await ledger.grantConnected(peer.id)
      assert.equal(ledger.store.head(peer.id)?.seq, 1)
      // it vouches for throwaway renters; their entries count against its budget
      let rejected: unknown
      for (let i = 0; i < 40 && rejected == null; i++) {
        const renter = new TestFeed(await newSigner())
        const job = jobEntries(peer, renter)
        const [a, r] = await ledger.ingest([job.attestation.envelope, job.receipt.envelope])
        if (a.status === 'rejected') rejected = a.error
        else if (r.status === 'rejected') rejected = r.error
      }
      assert.ok(isCoded(rejected, LedgerError, 'ERR_LEDGER_QUOTA'), String(rejected))
      assert.match((rejected as Error).message, /byte quota/)
      const held = ledger.store
        .allHeads()
        .filter(h => h.authorId !== self.peerId.toString())
        .reduce((sum, h) => sum + h.bytes, 0)
      assert.ok(held <= 8 * 1024, `the tree holds ${held} bytes`)
    } finally {
      await ledger.close()
    }
  })

  it('an author writing faster than its rate (entries per minute by the receiver\'s clock) is refused with LedgerError ERR_LEDGER_QUOTA, however far apart its entries claim to be; once the clock moves it may write again', async () => {
    const self = await newSigner()
    const trusted = new TestFeed(await newSigner())
    let clock = Date.now()
    const ledger = await openLedger(
      fresh(),
      self,
      { trustedPeers: [trusted.id], quotas: { trusted: { entriesPerMinute: 10, burst: 20 } } },
      { now: () => clock }
    )
    try {
      // back-dated: one entry every 6 s of feed time (the rate exactly), all sent now
      const t0 = clock - 10 * 60_000
      const records = Array.from({ length: 30 }, (_, i) => trusted.summary(t0 + i * 6_000))
      const burst = records.map(r => r.envelope)
      const outcomes = await ledger.ingest(burst)
      assert.equal(outcomes.filter(o => o.status === 'added').length, 20, 'the burst, no more: feed times refill nothing')
      const refused = outcomes[20]
      assert.ok(refused.status === 'rejected' && isCoded(refused.error, LedgerError, 'ERR_LEDGER_QUOTA') && /entries per minute/.test(refused.error.message), JSON.stringify(refused))
      assert.equal(ledger.store.head(trusted.id)?.seq, 20)
      // the refused entry again is refused while the clock stands still
      const [again] = await ledger.ingest([burst[20]])
      assert.equal(again.status, 'rejected')
      // a minute later by the receiver's clock: ten more
      clock += 60_000
      const later = await ledger.ingest(burst.slice(20))
      assert.deepEqual(later.map(o => o.status), [...Array(10).fill('added')])
      assert.equal(ledger.store.head(trusted.id)?.seq, 30)
    } finally {
      await ledger.close()
    }
  })
})
