import * as assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { equals } from 'uint8arrays/equals'
import { SignedEnvelope } from '../../protocols/envelope.js'
import { DOMAIN } from '../../protocols/ids.js'
import { HeartbeatSummary, LedgerEntry } from '../../protocols/ledger.js'
import { sealEnvelope, sha256 } from '../../src/identity/index.js'
import { signTestJob, type Signer } from '../../src/ledger/dev.js'
import { openEntry, sealEntry, type LedgerRecord } from '../../src/ledger/entries/entry.js'
import { LedgerError, type LedgerErrorCode } from '../../src/ledger/errors.js'
import { buildEquivocationProof, verifyFraudProof } from '../../src/ledger/entries/fraud.js'
import { PROOF_BUDGET } from '../../src/ledger/ingest/quota.js'
import { LedgerIngest } from '../../src/ledger/ingest/ingest.js'
import { tempDir } from '../utils/index.js'
import { buildBadOutputProof } from './forgery.js'
import { isCoded } from '../../src/common/index.js'

async function newSigner (): Promise<Signer> {
  const key = await generateKeyPair('Ed25519')
  return { key, peerId: peerIdFromPrivateKey(key) }
}

async function openLedger (path: string, signer: Signer, now?: () => number): Promise<LedgerIngest> {
  return await LedgerIngest.open(path, { privateKey: signer.key, peerId: signer.peerId, now })
}

/** an entry of `signer`'s feed with any fields, signed properly */
function entryOf (
  signer: Signer,
  fields: {
    seq: number
    prevHash?: Uint8Array
    time?: number
    kind?: LedgerEntry.BodyKind
    body?: Uint8Array
    chain?: 1 | 2
  }
): LedgerRecord {
  return sealEntry(signer.key, signer.peerId, {
    chain: fields.chain,
    seq: fields.seq,
    prevHash: fields.prevHash ?? new Uint8Array(0),
    time: fields.time ?? Date.now(),
    kind: fields.kind ?? LedgerEntry.BodyKind.HEARTBEAT_SUMMARY,
    body: fields.body ?? summaryBody()
  })
}

function summaryBody (start = Date.now() - 60_000): Uint8Array {
  return HeartbeatSummary.encode({
    periodStart: BigInt(start),
    periodEnd: BigInt(start + 60_000),
    heartbeatsSent: 6,
    intervalMs: 10_000,
    availableMs: 60_000n,
    upMs: 60_000n,
    slotsTotal: 1,
    busyPpm: 0
  })
}

async function expectRejected (ledger: LedgerIngest, envelope: Uint8Array, code: LedgerErrorCode): Promise<void> {
  const [outcome] = await ledger.ingest([envelope])
  assert.equal(outcome.status, 'rejected')
  if (outcome.status !== 'rejected') return
  assert.ok(isCoded(outcome.error, LedgerError, code), `expected a LedgerError ${code}, got ${outcome.error.name} ${outcome.error.code}: ${outcome.error.message}`)
  assert.equal(outcome.error.name, 'LedgerError')
  assert.equal(outcome.error.code, code)
}

/** appends `n` summary entries to `store` and returns the records */
async function appendSummaries (ledger: LedgerIngest, n: number): Promise<LedgerRecord[]> {
  const out: LedgerRecord[] = []
  for (let i = 0; i < n; i++) {
    out.push(await ledger.append(LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, summaryBody(Date.now() - 120_000 + i)))
  }
  return out
}

describe('ledger store', function () {
  let dir: { path: string, cleanup: () => Promise<void> }
  let alice: Signer
  let bob: Signer
  let carol: Signer

  before(async () => {
    dir = await tempDir('idlegrid-ledger-store-')
    alice = await newSigner()
    bob = await newSigner()
    carol = await newSigner()
  })
  after(async () => { await dir.cleanup() })

  describe('own feed', () => {
    it('appends a hash-chained feed, and a reopened store has the same head and every entry', async () => {
      const path = join(dir.path, 'own')
      let ledger = await openLedger(path, alice)
      const appended = await appendSummaries(ledger, 5)
      const job = signTestJob({ provider: alice, renter: bob })
      appended.push(await ledger.append(LedgerEntry.BodyKind.ATTESTATION, job.attestation))
      assert.deepEqual(appended.map(r => r.seq), [1, 2, 3, 4, 5, 6])
      assert.equal(appended[0].prevHash.length, 0)
      for (let i = 1; i < appended.length; i++) assert.ok(equals(appended[i].prevHash, appended[i - 1].hash))
      await ledger.close()

      ledger = await openLedger(path, alice)
      const head = ledger.store.head(alice.peerId.toString())
      assert.equal(head?.seq, 6)
      assert.ok(equals(head.hash, appended[5].hash))
      const { entries, more } = await ledger.store.range(alice.peerId.toMultihash().bytes, 1, 256)
      assert.equal(more, false)
      assert.deepEqual(entries.map(e => Buffer.from(e).toString('hex')), appended.map(r => Buffer.from(r.envelope).toString('hex')))
      const byHash = await ledger.store.getByHash(appended[2].hash)
      assert.equal(byHash?.seq, 3)
      const stats = await ledger.stats()
      assert.equal(stats.entries, 6)
      assert.equal(stats.authors, 1)
      assert.ok(stats.diskBytes > 0)
      await ledger.close()
    })

    it('refuses to append a body its author did not sign (an attestation of another provider)', async () => {
      const ledger = await openLedger(join(dir.path, 'own-bad'), alice)
      const job = signTestJob({ provider: bob, renter: carol })
      await assert.rejects(ledger.append(LedgerEntry.BodyKind.ATTESTATION, job.attestation), (err: unknown) => isCoded(err, LedgerError, 'ERR_LEDGER_BODY'))
      assert.equal(ledger.store.head(alice.peerId.toString()), undefined, 'nothing was written')
      await ledger.close()
    })

    it('range respects limit and byte bound, and says when there is more', async () => {
      const ledger = await openLedger(join(dir.path, 'range'), alice)
      await appendSummaries(ledger, 10)
      const author = alice.peerId.toMultihash().bytes
      const a = await ledger.store.range(author, 3, 4)
      assert.equal(a.entries.length, 4)
      assert.equal(a.more, true)
      const b = await ledger.store.range(author, 1, 256, 1)
      assert.equal(b.entries.length, 1, 'at least one entry even over the byte bound')
      const c = await ledger.store.range(author, 9, 256)
      assert.equal(c.entries.length, 2)
      assert.equal(c.more, false)
      assert.deepEqual((await ledger.store.range(author, 11, 5)).entries, [])
      await ledger.close()
    })
  })

  describe('ingesting other authors', () => {
    it('adds a feed in order, holds out-of-order entries pending until the gap fills, and ignores duplicates', async () => {
      const source = await openLedger(join(dir.path, 'src-1'), bob)
      const feed = await appendSummaries(source, 6)
      await source.close()
      const ledger = await openLedger(join(dir.path, 'dst-1'), alice)
      const added: number[] = []
      ledger.store.onAdded(r => { if (r.authorId === bob.peerId.toString()) added.push(r.seq) })
      const first = await ledger.ingest([feed[0].envelope, feed[1].envelope])
      assert.deepEqual(first.map(o => o.status), ['added', 'added'])
      const ahead = await ledger.ingest([feed[4].envelope, feed[3].envelope])
      assert.deepEqual(ahead.map(o => o.status), ['pending', 'pending'])
      assert.equal(ledger.store.head(bob.peerId.toString())?.seq, 2)
      const fill = await ledger.ingest([feed[2].envelope])
      assert.deepEqual(fill.map(o => o.status), ['added'])
      assert.equal(ledger.store.head(bob.peerId.toString())?.seq, 5, 'the pending entries attached behind the gap')
      const again = await ledger.ingest([feed[0].envelope, feed[4].envelope, feed[5].envelope])
      assert.deepEqual(again.map(o => o.status), ['duplicate', 'duplicate', 'added'])
      assert.deepEqual(added, [1, 2, 3, 4, 5, 6])
      await ledger.close()
    })

    it('accepts an attestation and a receipt whose inner envelopes are signed by their authors', async () => {
      const job = signTestJob({ provider: bob, renter: carol })
      const att = entryOf(bob, { seq: 1, kind: LedgerEntry.BodyKind.ATTESTATION, body: job.attestation })
      const rec = entryOf(carol, { seq: 1, kind: LedgerEntry.BodyKind.RECEIPT, body: job.receipt })
      const ledger = await openLedger(join(dir.path, 'dst-job'), alice)
      const outcomes = await ledger.ingest([att.envelope, rec.envelope])
      assert.deepEqual(outcomes.map(o => o.status), ['added', 'added'])
      await ledger.close()
    })
  })

  describe('rejections (typed errors)', () => {
    let ledger: LedgerIngest
    let bobFirst: LedgerRecord
    // taken when these tests start, not when the file loads: the suite may run for minutes
    // before them, and entries made below carry times from the real clock
    let now = 0
    before(async () => {
      now = Date.now()
      ledger = await openLedger(join(dir.path, 'rejections'), alice, () => now)
    })
    after(async () => { await ledger.close() })

    it('a bad signature: LedgerError ERR_LEDGER_SIGNATURE', async () => {
      const good = entryOf(bob, { seq: 1 })
      const env = SignedEnvelope.decode(good.envelope)
      const sig = Uint8Array.from(env.signature)
      sig[5] ^= 1
      await expectRejected(ledger, SignedEnvelope.encode({ ...env, signature: sig }), 'ERR_LEDGER_SIGNATURE')
    })

    it('a forged author (entry naming bob, signed by carol): LedgerError ERR_LEDGER_SIGNATURE', async () => {
      const payload = LedgerEntry.encode({
        author: bob.peerId.toMultihash().bytes,
        seq: 1n,
        prevHash: new Uint8Array(0),
        time: BigInt(now),
        kind: LedgerEntry.BodyKind.HEARTBEAT_SUMMARY,
        body: summaryBody(now - 60_000)
      })
      await expectRejected(ledger, sealEnvelope(carol.key, carol.peerId, DOMAIN.ledgerEntry, payload), 'ERR_LEDGER_SIGNATURE')
    })

    it('a broken chain (prev_hash not the held head, or seq 1 with a prev_hash): LedgerError ERR_LEDGER_CHAIN', async () => {
      bobFirst = entryOf(bob, { seq: 1, time: now })
      assert.equal((await ledger.ingest([bobFirst.envelope]))[0].status, 'added')
      await expectRejected(ledger, entryOf(bob, { seq: 2, prevHash: sha256('not the head'), time: now }).envelope, 'ERR_LEDGER_CHAIN')
      await expectRejected(ledger, entryOf(carol, { seq: 1, prevHash: sha256('x'), time: now }).envelope, 'ERR_LEDGER_CHAIN')
      await expectRejected(ledger, entryOf(carol, { seq: 0, time: now }).envelope, 'ERR_LEDGER_CHAIN')
    })

    it('a time beyond the skew bound: LedgerError ERR_LEDGER_FUTURE (within the bound is fine)', async () => {
      await expectRejected(ledger, entryOf(carol, { seq: 1, time: now + 31_000, body: summaryBody(now - 60_000) }).envelope, 'ERR_LEDGER_FUTURE')
      const [ok] = await ledger.ingest([
        entryOf(carol, { seq: 1, time: now + 29_000, body: summaryBody(now - 60_000) }).envelope
      ])
      assert.equal(ok.status, 'added')
    })

    it('an oversized body: LedgerError ERR_LEDGER_BODY_SIZE', async () => {
      const dave = await newSigner()
      await expectRejected(ledger, entryOf(dave, { seq: 1, time: now, kind: LedgerEntry.BodyKind.ATTESTATION, body: new Uint8Array(6 * 1024 + 1) }).envelope, 'ERR_LEDGER_BODY_SIZE')
    })

    it('a body whose inner envelope is not the author\'s, or does not verify: LedgerError ERR_LEDGER_BODY', async () => {
      const dave = await newSigner()
      const job = signTestJob({ provider: bob, renter: carol })
      // dave puts bob's attestation in dave's feed
      await expectRejected(ledger, entryOf(dave, { seq: 1, time: now, kind: LedgerEntry.BodyKind.ATTESTATION, body: job.attestation }).envelope, 'ERR_LEDGER_BODY')
      // a receipt body under the attestation kind
      await expectRejected(ledger, entryOf(await newSigner(), { seq: 1, time: now, kind: LedgerEntry.BodyKind.ATTESTATION, body: job.receipt }).envelope, 'ERR_LEDGER_BODY')
      // a tampered receipt signature
      const env = SignedEnvelope.decode(job.receipt)
      const sig = Uint8Array.from(env.signature); sig[0] ^= 1
      const tampered = SignedEnvelope.encode({ ...env, signature: sig })
      // in a chain-1 entry (written before ledger sync 4) the body's own signature is checked
      await expectRejected(ledger, entryOf(dave, { seq: 1, time: now, kind: LedgerEntry.BodyKind.RECEIPT, body: tampered, chain: 1 }).envelope, 'ERR_LEDGER_BODY')
      // the body's signature is checked beside its message: a bad one is the reason given even
      // when the message is wrong too (here it also names another renter than its author)
      const [both] = await ledger.ingest([
        entryOf(dave, { seq: 1, time: now, kind: LedgerEntry.BodyKind.RECEIPT, body: tampered, chain: 1 }).envelope
      ])
      assert.ok(both.status === 'rejected' && /receipt body: signature by .* does not verify/.test(both.error.message), `got ${both.status === 'rejected' ? both.error.message : both.status}`)
      const [named] = await ledger.ingest([
        entryOf(dave, { seq: 1, time: now, kind: LedgerEntry.BodyKind.RECEIPT, body: job.receipt }).envelope
      ])
      assert.ok(named.status === 'rejected' && /receipt body signed by .*, not by the entry's author/.test(named.error.message), `got ${named.status === 'rejected' ? named.error.message : named.status}`)
      // an inconsistent heartbeat summary
      const bad = HeartbeatSummary.encode({
        periodStart: BigInt(now - 1000),
        periodEnd: BigInt(now),
        heartbeatsSent: 1,
        intervalMs: 1000,
        availableMs: 1000n,
        upMs: 5000n,
        slotsTotal: 1,
        busyPpm: 0
      })
      await expectRejected(ledger, entryOf(dave, { seq: 1, time: now, body: bad }).envelope, 'ERR_LEDGER_BODY')
    })

    it('bytes that are not an entry envelope: LedgerError ERR_LEDGER_MALFORMED', async () => {
      await expectRejected(ledger, Uint8Array.of(1, 2, 3, 4), 'ERR_LEDGER_MALFORMED')
      const hb = sealEnvelope(bob.key, bob.peerId, DOMAIN.heartbeat, entryOf(bob, { seq: 1 }).payload)
      await expectRejected(ledger, hb, 'ERR_LEDGER_MALFORMED')
      await expectRejected(ledger, new Uint8Array(40 * 1024), 'ERR_LEDGER_MALFORMED')
    })

    it('a replayed entry is a duplicate and changes nothing', async () => {
      const head = ledger.store.head(bob.peerId.toString())
      const again = await ledger.ingest([bobFirst.envelope, bobFirst.envelope])
      assert.deepEqual(again.map(o => o.status), ['duplicate', 'duplicate'])
      assert.deepEqual(ledger.store.head(bob.peerId.toString()), head)
    })
  })

  describe('equivocation and fraud proofs', () => {
    it('a second entry at a held seq builds a fraud proof in our feed and slashes the author; another store verifies the proof and slashes too', async () => {
      const ledger = await openLedger(join(dir.path, 'equiv-a'), alice)
      const one = entryOf(bob, { seq: 1 })
      const twoA = entryOf(bob, { seq: 2, prevHash: one.hash, body: summaryBody(Date.now() - 61_000) })
      const twoB = entryOf(bob, { seq: 2, prevHash: one.hash, body: summaryBody(Date.now() - 62_000) })
      assert.deepEqual((await ledger.ingest([one.envelope, twoA.envelope])).map(o => o.status), ['added', 'added'])
      const [outcome] = await ledger.ingest([twoB.envelope])
      assert.equal(outcome.status, 'equivocation')
      if (outcome.status !== 'equivocation') return
      assert.ok(outcome.proof != null, 'a proof was built')
      assert.equal(outcome.proof.authorId, alice.peerId.toString())
      assert.equal(outcome.proof.kind, LedgerEntry.BodyKind.FRAUD_PROOF)
      assert.ok(ledger.store.isSlashed(bob.peerId.toString()))
      assert.equal(ledger.store.head(alice.peerId.toString())?.seq, 1, 'the proof is our feed\'s entry 1')
      // once slashed, a further conflict builds no second proof
      const twoC = entryOf(bob, { seq: 2, prevHash: one.hash, body: summaryBody(Date.now() - 63_000) })
      const [again] = await ledger.ingest([twoC.envelope])
      assert.equal(again.status, 'equivocation')
      assert.equal(again.status === 'equivocation' ? again.proof : 'x', undefined)

      const other = await openLedger(join(dir.path, 'equiv-b'), carol)
      const [viaProof] = await other.ingest([outcome.proof.envelope])
      assert.equal(viaProof.status, 'added')
      assert.ok(other.store.isSlashed(bob.peerId.toString()), 'the proof alone slashes bob')
      assert.deepEqual(other.store.slashedAuthors().map(s => s.accused), [bob.peerId.toString()])
      await ledger.close()
      await other.close()
      const reopened = await openLedger(join(dir.path, 'equiv-b'), carol)
      assert.ok(reopened.store.isSlashed(bob.peerId.toString()), 'slashing survives a restart')
      await reopened.close()
    })

    it('two conflicting entries both ahead of the head prove equivocation too', async () => {
      const ledger = await openLedger(join(dir.path, 'equiv-pending'), alice)
      const a = entryOf(bob, { seq: 5, prevHash: sha256('a') })
      const b = entryOf(bob, { seq: 5, prevHash: sha256('b') })
      assert.deepEqual((await ledger.ingest([a.envelope, b.envelope])).map(o => o.status), ['pending', 'equivocation'])
      assert.ok(ledger.store.isSlashed(bob.peerId.toString()))
      await ledger.close()
    })

    /**
     * Conflicting pairs of `signer`'s entries at seqs `from`..`from + n - 1` (ahead of any head:
     * prev hashes made up).
     */
    function conflictingPairs (signer: Signer, from: number, n: number): Uint8Array[] {
      const out: Uint8Array[] = []
      for (let seq = from; seq < from + n; seq++) {
        for (const side of ['a', 'b']) out.push(entryOf(signer, { seq, prevHash: sha256(`${side}${seq}`) }).envelope)
      }
      return out
    }

    it('red team 36.1: one batch of 64 equivocating pairs (pending and at held seqs) builds exactly one proof; later batches and a restart build none', async () => {
      const path = join(dir.path, 'equiv-one-proof')
      const ledger = await openLedger(path, alice)
      const accused = await newSigner()
      const one = entryOf(accused, { seq: 1 })
      const two = entryOf(accused, { seq: 2, prevHash: one.hash })
      const otherTwo = entryOf(accused, { seq: 2, prevHash: one.hash, body: summaryBody(Date.now() - 90_000) })
      // a held seq's conflict, then 63 pairs ahead of the head, all in one batch
      const outcomes = await ledger.ingest([
        one.envelope,
        two.envelope,
        otherTwo.envelope,
        ...conflictingPairs(accused, 4, 63)
      ])
      const proofs = outcomes.filter(o => o.status === 'equivocation' && o.proof != null)
      assert.equal(outcomes.filter(o => o.status === 'equivocation').length, 64, 'every pair is reported')
      assert.equal(proofs.length, 1, `${proofs.length} proofs built`)
      assert.equal(ledger.store.head(alice.peerId.toString())?.seq, 1, 'our feed holds one proof')
      assert.ok(ledger.store.isSlashed(accused.peerId.toString()))
      // another batch: none
      const more = await ledger.ingest(conflictingPairs(accused, 100, 8))
      assert.equal(more.filter(o => o.status === 'equivocation' && o.proof != null).length, 0)
      await ledger.close()
      // after a restart (the slashed set is read back): none
      const reopened = await openLedger(path, alice)
      assert.ok(reopened.store.isSlashed(accused.peerId.toString()))
      const after = await reopened.ingest(conflictingPairs(accused, 200, 8))
      assert.equal(after.filter(o => o.status === 'equivocation').length, 8)
      assert.equal(after.filter(o => o.status === 'equivocation' && o.proof != null).length, 0)
      assert.equal(reopened.store.head(alice.peerId.toString())?.seq, 1)
      await reopened.close()
    })

    it('red team 36.1: the proofs we write into our own feed are bounded (PROOF_BUDGET); over it the equivocation is reported, not slashed, until the budget refills; our own entries are never refused', async () => {
      let clock = Date.now()
      const ledger = await LedgerIngest.open(join(dir.path, 'equiv-budget'), { privateKey: alice.key, peerId: alice.peerId, now: () => clock })
      try {
        const accused = await Promise.all(Array.from({ length: 8 }, newSigner))
        const outcomes = await ledger.ingest(accused.flatMap(a => conflictingPairs(a, 2, 1)))
        const reported = outcomes.filter(o => o.status === 'equivocation')
        assert.equal(reported.length, 8, 'every equivocation is reported')
        assert.equal(reported.filter(o => o.proof != null).length, PROOF_BUDGET.proofs)
        const own = ledger.store.head(alice.peerId.toString())
        assert.equal(own?.seq, PROOF_BUDGET.proofs)
        assert.ok((own?.bytes ?? 0) <= PROOF_BUDGET.bytes, `our feed holds ${own?.bytes} bytes of proofs`)
        // a slash is always backed by a stored proof: the others are not slashed here (yet)
        assert.deepEqual(
          accused.map(a => ledger.store.isSlashed(a.peerId.toString())),
          accused.map((_, i) => i < PROOF_BUDGET.proofs)
        )
        // our own entries are never refused for it
        await ledger.append(LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, summaryBody(clock - 60_000))
        // once our clock has moved a window, the conflict offered again is proven
        clock += PROOF_BUDGET.windowMs
        const last = accused[PROOF_BUDGET.proofs] as Signer
        const again = await ledger.ingest([entryOf(last, { seq: 2, prevHash: sha256('c2'), time: clock })].map(r => r.envelope))
        assert.equal(again[0]?.status, 'equivocation')
        assert.ok(again[0]?.status === 'equivocation' && again[0].proof != null, 'a proof once the budget refilled')
        assert.ok(ledger.store.isSlashed(last.peerId.toString()))
      } finally {
        await ledger.close()
      }
    })

    it('red team 36.1: entries held pending count against their author\'s quota: over it they are refused (LedgerError ERR_LEDGER_QUOTA), not held; once stored they are not counted twice', async () => {
      let clock = Date.now()
      const author = await newSigner()
      const id = author.peerId.toString()
      const ledger = await LedgerIngest.open(join(dir.path, 'pending-quota'), { privateKey: alice.key, peerId: alice.peerId, now: () => clock, admission: { trustedPeers: [id], quotas: { trusted: { entriesPerMinute: 1, burst: 5 } } } })
      try {
        const feed: LedgerRecord[] = []
        for (let seq = 1; seq <= 10; seq++) {
          feed.push(
            entryOf(author, {
              seq,
              prevHash: feed[seq - 2]?.hash,
              time: clock + seq,
              body: summaryBody(clock - 60_000)
            })
          )
        }
        // seqs 3..8 ahead of the head: five held (the burst), the sixth refused
        const ahead = await ledger.ingest(feed.slice(2, 8).map(r => r.envelope))
        assert.deepEqual(ahead.map(o => o.status), ['pending', 'pending', 'pending', 'pending', 'pending', 'rejected'])
        const refused = ahead[5]
        assert.ok(refused?.status === 'rejected' && isCoded(refused.error, LedgerError, 'ERR_LEDGER_QUOTA'), JSON.stringify(refused))
        assert.equal((await ledger.stats()).pending, 5)
        // they spent the author's rate: seq 1 waits for the clock
        assert.equal((await ledger.ingest([feed[0].envelope]))[0]?.status, 'rejected')
        clock += 2 * 60_000
        // seqs 1 and 2 spend the two refilled tokens; the five pending are given back as they are stored
        assert.deepEqual((await ledger.ingest([feed[0].envelope, feed[1].envelope])).map(o => o.status), ['added', 'added'])
        assert.equal(ledger.store.head(id)?.seq, 7, 'the pending entries were stored, each charged once')
        assert.equal((await ledger.stats()).pending, 0)
      } finally {
        await ledger.close()
      }
    })

    it('red team 36.1: entries held pending count against their author\'s byte quota', async () => {
      const author = await newSigner()
      const id = author.peerId.toString()
      const size = entryOf(author, { seq: 3 }).envelope.byteLength
      const ledger = await LedgerIngest.open(join(dir.path, 'pending-bytes'), { privateKey: alice.key, peerId: alice.peerId, admission: { trustedPeers: [id], quotas: { trusted: { bytes: 3 * size + size / 2 } } } })
      try {
        const outcomes = await ledger.ingest(
          [3, 4, 5, 6].map(seq => entryOf(author, { seq, prevHash: sha256(String(seq)) }).envelope)
        )
        assert.deepEqual(outcomes.map(o => o.status), ['pending', 'pending', 'pending', 'rejected'])
        assert.ok(outcomes[3]?.status === 'rejected' && /byte quota/.test(outcomes[3].error.message))
        assert.equal((await ledger.stats()).pending, 3)
      } finally {
        await ledger.close()
      }
    })

    it('forged fraud proofs are rejected: same entry twice, different seqs, entries of someone else, a tampered entry', async () => {
      const ledger = await openLedger(join(dir.path, 'equiv-forged'), alice)
      const one = entryOf(bob, { seq: 1 })
      const two = entryOf(bob, { seq: 2, prevHash: one.hash })
      const carolOne = entryOf(carol, { seq: 1 })
      const env = SignedEnvelope.decode(two.envelope)
      const sig = Uint8Array.from(env.signature); sig[9] ^= 4
      const tamperedTwo = { ...two, envelope: SignedEnvelope.encode({ ...env, signature: sig }) }
      const cases: Array<[string, LedgerRecord, LedgerRecord]> = [
        ['same entry', one, one],
        ['different seqs', one, two],
        ['someone else', one, carolOne],
        ['tampered', two, tamperedTwo]
      ]
      let seq = 0
      let prev = new Uint8Array(0)
      for (const [what, first, second] of cases) {
        const proof = buildEquivocationProof({ privateKey: carol.key, peerId: carol.peerId }, first, second)
        await assert.rejects(verifyFraudProof(proof), (err: unknown) => isCoded(err, LedgerError, 'ERR_LEDGER_FRAUD_PROOF'), what)
        const entry = entryOf(carol, {
          seq: ++seq,
          prevHash: prev,
          kind: LedgerEntry.BodyKind.FRAUD_PROOF,
          body: proof
        })
        await expectRejected(ledger, entry.envelope, 'ERR_LEDGER_FRAUD_PROOF')
        seq = 0
        prev = new Uint8Array(0)
      }
      assert.equal(ledger.store.isSlashed(bob.peerId.toString()), false)
      await ledger.close()
    })

    it('a BAD_OUTPUT proof, even with a complete re-run on another key, is rejected (LedgerError ERR_LEDGER_FRAUD_PROOF) and slashes nobody', async () => {
      const renter = carol
      const accused = bob
      const rerunKey = await newSigner()
      const input = sha256('inputs')
      const bad = signTestJob({ provider: accused, renter, outcome: 'bad-output', inputDigest: input, outputDigest: sha256('wrong') })
      const rerun = signTestJob({ provider: rerunKey, renter, outcome: 'ok', inputDigest: input, outputDigest: sha256('right') })
      const badAtt = entryOf(accused, { seq: 1, kind: LedgerEntry.BodyKind.ATTESTATION, body: bad.attestation })
      const badRec = entryOf(renter, { seq: 1, kind: LedgerEntry.BodyKind.RECEIPT, body: bad.receipt })
      const reAtt = entryOf(rerunKey, { seq: 1, kind: LedgerEntry.BodyKind.ATTESTATION, body: rerun.attestation })
      const reRec = entryOf(renter, {
        seq: 2,
        prevHash: badRec.hash,
        kind: LedgerEntry.BodyKind.RECEIPT,
        body: rerun.receipt
      })
      const proof = buildBadOutputProof(renter.key, renter.peerId, {
        attestation: badAtt,
        receipt: badRec,
        rerunAttestation: reAtt,
        rerunReceipt: reRec
      })
      await assert.rejects(verifyFraudProof(proof, { builder: renter.peerId.toString() }), (err: Error) => isCoded(err, LedgerError, 'ERR_LEDGER_FRAUD_PROOF') && /BAD_OUTPUT/.test(err.message))

      const ledger = await openLedger(join(dir.path, 'bad-output'), alice)
      const entry = entryOf(renter, {
        seq: 3,
        prevHash: reRec.hash,
        kind: LedgerEntry.BodyKind.FRAUD_PROOF,
        body: proof
      })
      assert.deepEqual((await ledger.ingest([badAtt.envelope, badRec.envelope, reAtt.envelope, reRec.envelope])).map(o => o.status), ['added', 'added', 'added', 'added'])
      await expectRejected(ledger, entry.envelope, 'ERR_LEDGER_FRAUD_PROOF')
      assert.equal(ledger.store.isSlashed(accused.peerId.toString()), false)
      assert.equal(ledger.store.head(renter.peerId.toString())?.seq, 2, 'the proof entry was not stored')
      await ledger.close()
    })
  })

  describe('crash safety', function () {
    this.timeout(120_000)

    it('a process SIGKILLed while appending leaves an intact chain holding every acknowledged entry', async () => {
      const path = join(dir.path, 'crash')
      const ledgerModule = fileURLToPath(new URL('../../src/ledger/ingest/ingest.js', import.meta.url))
      const cryptoModule = fileURLToPath(new URL('../../../node_modules/@libp2p/crypto/dist/src/keys/index.js', import.meta.url))
      const peerIdModule = fileURLToPath(new URL('../../../node_modules/@libp2p/peer-id/dist/src/index.js', import.meta.url))
      const seed = Buffer.from(alice.key.raw).toString('hex')
      // the child appends in a loop and prints each seq once append() resolved
      const script = `
        import { LedgerIngest } from ${JSON.stringify(ledgerModule)}
        import { privateKeyFromRaw } from ${JSON.stringify(cryptoModule)}
        import { peerIdFromPrivateKey } from ${JSON.stringify(peerIdModule)}
        const key = privateKeyFromRaw(Buffer.from(${JSON.stringify(seed)}, 'hex'))
        const store = await LedgerIngest.open(${JSON.stringify(path)}, { privateKey: key, peerId: peerIdFromPrivateKey(key) })
        for (let i = 0; i < 100_000; i++) {
          const now = Date.now()
          const body = (await import(${JSON.stringify(fileURLToPath(new URL('../../protocols/ledger.js', import.meta.url)))})).HeartbeatSummary.encode({ periodStart: BigInt(now - 1000), periodEnd: BigInt(now), heartbeatsSent: 1, intervalMs: 1000, availableMs: 1000n, upMs: 1000n, slotsTotal: 1, busyPpm: 0 })
          const record = await store.append('HEARTBEAT_SUMMARY', body)
          process.stdout.write(record.seq + '\\n')
        }
      `
      let totalAcked = 0
      for (let round = 0; round < 3; round++) {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] })
        let acked = 0
        let stderr = ''
        child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
        const killAt = 20 + round * 15 + Math.floor(Math.random() * 10)
        await new Promise<void>((resolve, reject) => {
          child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
            for (const line of chunk.split('\n').filter(Boolean)) acked = Math.max(acked, Number(line))
            if (acked >= killAt && child.exitCode == null && child.signalCode == null) child.kill('SIGKILL')
          })
          child.once('exit', (code, signal) => { signal === 'SIGKILL' ? resolve() : reject(new Error(`child exited ${String(code)}: ${stderr}`)) })
        })
        assert.ok(acked > totalAcked, `round ${round}: the child made progress (${acked})`)
        totalAcked = acked
        // reopen and walk the chain: every acknowledged entry is there, each verifies and links to the last
        const ledger = await openLedger(path, alice)
        const head = ledger.store.head(alice.peerId.toString())
        assert.ok(head != null && head.seq >= acked, `head ${String(head?.seq)} holds every acknowledged entry (${acked})`)
        const { entries } = await ledger.store.range(alice.peerId.toMultihash().bytes, 1, 10_000)
        assert.equal(entries.length, head.seq)
        let prev: Uint8Array = new Uint8Array(0)
        for (const [i, envelope] of entries.entries()) {
          const record = await openEntry(envelope)
          assert.equal(record.seq, i + 1)
          assert.ok(equals(record.prevHash, prev), `entry ${i + 1} links to entry ${i}`)
          prev = record.hash
        }
        assert.ok(equals(prev, head.hash))
        await ledger.close()
      }
    })
  })
})
