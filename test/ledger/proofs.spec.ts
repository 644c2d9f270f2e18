import * as assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { Level } from 'level'
import { MAX_CLOCK_SKEW_MS } from '../../protocols/codec.js'
import { FraudProof, HeartbeatSummary, LedgerEntry } from '../../protocols/ledger.js'
import { Receipt } from '../../protocols/job.js'
import { sha256 } from '../../src/identity/index.js'
import { signTestJob, type Signer, type TestJob, type TestOutcome } from '../../src/ledger/dev.js'
import { sealEntry, type LedgerRecord } from '../../src/ledger/entries/entry.js'
import { LedgerError } from '../../src/ledger/errors.js'
import { buildEquivocationProof, verifyFraudProof } from '../../src/ledger/entries/fraud.js'
import { collectEvidence } from '../../src/ledger/reputation/evidence.js'
import { computeReputation, DEFAULT_REPUTATION, maxDropPerCounterparty } from '../../src/ledger/reputation/reputation.js'
import { LedgerIngest } from '../../src/ledger/ingest/ingest.js'
import { entryKey, hashKey, hashValue, headKey, headValue, slashedKey } from '../../src/ledger/store/keys.js'
import { tempDir } from '../utils/index.js'
import { Feeds, newSigner, signReceipt } from './feeds.js'
import { signRawProof } from './forgery.js'
import { isCoded } from '../../src/common/index.js'

// Issue 12 items 1 and 2 at the level of one store and of reputation's facts: every rejection
// with its typed error, every receipt rule with a case that counts and one that does not.

const NOW = 1_800_000_000_000
const DAY = 24 * 3600_000

function summaryBody (start: number): Uint8Array {
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

function entryOf (
  signer: Signer,
  seq: number,
  prevHash: Uint8Array,
  time: number,
  kind = LedgerEntry.BodyKind.HEARTBEAT_SUMMARY,
  body = summaryBody(time - 120_000)
): LedgerRecord {
  return sealEntry(signer.key, signer.peerId, { seq, prevHash, time, kind, body })
}

async function rejection (ledger: LedgerIngest, envelope: Uint8Array): Promise<Error> {
  const [outcome] = await ledger.ingest([envelope])
  assert.equal(outcome.status, 'rejected')
  return outcome.status === 'rejected' ? outcome.error : new Error('not rejected')
}

describe('ledger v2: fraud proofs, feed time order and receipt rules', function () {
  let dir: { path: string, cleanup: () => Promise<void> }
  let alice: Signer
  let bob: Signer
  let carol: Signer

  before(async () => {
    dir = await tempDir('idlegrid-ledger-proofs-')
    ;[alice, bob, carol] = await Promise.all([newSigner(), newSigner(), newSigner()])
  })
  after(async () => { await dir.cleanup() })

  describe('fraud proofs: equivocation only, carrying only what it needs', () => {
    let one: LedgerRecord
    let twoA: LedgerRecord
    let twoB: LedgerRecord
    let ledger: LedgerIngest
    before(async () => {
      const t = Date.now() - 10_000
      one = entryOf(bob, 1, new Uint8Array(0), t)
      twoA = entryOf(bob, 2, one.hash, t + 1, LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, summaryBody(t - 200_000))
      twoB = entryOf(bob, 2, one.hash, t + 2, LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, summaryBody(t - 300_000))
      ledger = await LedgerIngest.open(join(dir.path, 'proofs'), { privateKey: alice.key, peerId: alice.peerId })
    })
    after(async () => { await ledger.close() })

    it('a proof of two entries signed by the accused at one seq verifies, and in a carol entry slashes bob', async () => {
      const proof = buildEquivocationProof({ privateKey: carol.key, peerId: carol.peerId }, twoA, twoB)
      const verified = await verifyFraudProof(proof, { builder: carol.peerId.toString(), entryTime: Date.now() })
      assert.equal(verified.kind, 'equivocation')
      assert.equal(verified.accused, bob.peerId.toString())
      const other = await LedgerIngest.open(join(dir.path, 'proofs-ok'), { privateKey: alice.key, peerId: alice.peerId })
      const [outcome] = await other.ingest([
        entryOf(carol, 1, new Uint8Array(0), Date.now(), LedgerEntry.BodyKind.FRAUD_PROOF, proof).envelope
      ])
      assert.equal(outcome.status, 'added')
      assert.ok(other.store.isSlashed(bob.peerId.toString()))
      await other.close()
    })

    it('every malformed proof is a LedgerError ERR_LEDGER_FRAUD_PROOF, in verifyFraudProof and as an entry; nobody is slashed', async () => {
      const accused = bob.peerId.toMultihash().bytes
      const job = signTestJob({ provider: bob, renter: carol })
      const base = { accused, first: twoA.envelope, second: twoB.envelope, createdAt: BigInt(Date.now()) }
      const cases: Array<[string, Uint8Array, RegExp]> = [
        ['a BAD_OUTPUT proof', signRawProof(carol.key, carol.peerId, { ...base, kind: FraudProof.Kind.BAD_OUTPUT }), /BAD_OUTPUT/],
        ['an unspecified kind', signRawProof(carol.key, carol.peerId, { ...base, kind: FraudProof.Kind.KIND_UNSPECIFIED }), /unknown fraud proof kind/],
        ['evidence on an equivocation', signRawProof(carol.key, carol.peerId, { ...base, kind: FraudProof.Kind.EQUIVOCATION, evidence: [one.envelope] }), /no evidence/],
        ['accused other than the signer', signRawProof(carol.key, carol.peerId, { ...base, kind: FraudProof.Kind.EQUIVOCATION, accused: carol.peerId.toMultihash().bytes }), /not both signed by the accused/],
        ['accused not a peer id', signRawProof(carol.key, carol.peerId, { ...base, kind: FraudProof.Kind.EQUIVOCATION, accused: new Uint8Array(randomBytes(34)) }), /not an Ed25519 peer id/],
        ['first not a ledger entry (an attestation)', signRawProof(carol.key, carol.peerId, { ...base, kind: FraudProof.Kind.EQUIVOCATION, first: job.attestation }), /first entry/],
        ['second not an envelope', signRawProof(carol.key, carol.peerId, { ...base, kind: FraudProof.Kind.EQUIVOCATION, second: new Uint8Array(randomBytes(64)) }), /second entry/],
        ['the same entry twice', signRawProof(carol.key, carol.peerId, { ...base, kind: FraudProof.Kind.EQUIVOCATION, second: twoA.envelope }), /same entry/],
        ['different seqs', signRawProof(carol.key, carol.peerId, { ...base, kind: FraudProof.Kind.EQUIVOCATION, first: one.envelope }), /different seqs/],
        ['no created_at', signRawProof(carol.key, carol.peerId, { ...base, kind: FraudProof.Kind.EQUIVOCATION, createdAt: 0n }), /no created_at/],
        ['created before its entries', signRawProof(carol.key, carol.peerId, { ...base, kind: FraudProof.Kind.EQUIVOCATION, createdAt: BigInt(twoB.time - MAX_CLOCK_SKEW_MS - 1) }), /before the entries/]
      ]
      for (const [what, proof, message] of cases) {
        await assert.rejects(verifyFraudProof(proof), (err: Error) => isCoded(err, LedgerError, 'ERR_LEDGER_FRAUD_PROOF') && message.test(err.message), what)
        const error = await rejection(
          ledger,
          entryOf(carol, 1, new Uint8Array(0), Date.now(), LedgerEntry.BodyKind.FRAUD_PROOF, proof).envelope
        )
        assert.ok(isCoded(error, LedgerError, 'ERR_LEDGER_FRAUD_PROOF'), `${what}: ${error.name}`)
        assert.equal((error as LedgerError).code, 'ERR_LEDGER_FRAUD_PROOF')
      }
      assert.equal(ledger.store.isSlashed(bob.peerId.toString()), false)
      assert.equal(ledger.store.head(carol.peerId.toString()), undefined, 'no proof entry was stored')
    })

    it('created_at past the carrying entry\'s time by more than the skew, or a proof signed by another key than the entry\'s, is rejected', async () => {
      const now = Date.now()
      const late = buildEquivocationProof({ privateKey: carol.key, peerId: carol.peerId }, twoA, twoB, now)
      const early = entryOf(
        carol,
        1,
        new Uint8Array(0),
        now - MAX_CLOCK_SKEW_MS - 1000,
        LedgerEntry.BodyKind.FRAUD_PROOF,
        late
      )
      assert.match((await rejection(ledger, early.envelope)).message, /after the entry that carries it/)
      const byAlice = buildEquivocationProof({ privateKey: alice.key, peerId: alice.peerId }, twoA, twoB, now)
      assert.ok(isCoded(await rejection(ledger, entryOf(carol, 1, new Uint8Array(0), now, LedgerEntry.BodyKind.FRAUD_PROOF, byAlice).envelope), LedgerError, 'ERR_LEDGER_FRAUD_PROOF'))
      // within the bound it is fine
      const ok = entryOf(
        carol,
        1,
        new Uint8Array(0),
        now - MAX_CLOCK_SKEW_MS + 1000,
        LedgerEntry.BodyKind.FRAUD_PROOF,
        late
      )
      assert.equal((await ledger.ingest([ok.envelope]))[0].status, 'added')
      assert.ok(ledger.store.isSlashed(bob.peerId.toString()))
    })
  })

  describe('a store written by protocol 1', () => {
    it('a slash recorded for a BAD_OUTPUT proof entry does not survive opening it; an equivocation slash does', async () => {
      const path = join(dir.path, 'v1-store')
      const t = Date.now() - 10_000
      const one = entryOf(bob, 1, new Uint8Array(0), t)
      const oldProof = entryOf(
        carol,
        1,
        new Uint8Array(0),
        t,
        LedgerEntry.BodyKind.FRAUD_PROOF,
        signRawProof(carol.key, carol.peerId, {
          kind: FraudProof.Kind.BAD_OUTPUT,
          accused: bob.peerId.toMultihash().bytes,
          first: one.envelope,
          second: one.envelope
        })
      )
      const equivocation = entryOf(
        carol,
        2,
        oldProof.hash,
        t,
        LedgerEntry.BodyKind.FRAUD_PROOF,
        buildEquivocationProof(
          { privateKey: carol.key, peerId: carol.peerId },
          entryOf(alice, 1, new Uint8Array(0), t),
          entryOf(alice, 1, new Uint8Array(0), t + 1),
          t
        )
      )
      // what protocol 1 wrote: both entries, carol's head, and a slash for each accused
      const db = new Level<Uint8Array, Uint8Array>(path, { keyEncoding: 'view', valueEncoding: 'view' })
      await db.batch([
        ...[oldProof, equivocation].flatMap(r => [
          { type: 'put' as const, key: entryKey(r.author, r.seq), value: r.envelope },
          { type: 'put' as const, key: hashKey(r.hash), value: hashValue(r.author, r.seq) }
        ]),
        { type: 'put', key: headKey(carol.peerId.toMultihash().bytes), value: headValue({ seq: 2, hash: equivocation.hash, bytes: 0, base: 1 }) },
        { type: 'put', key: slashedKey(bob.peerId.toMultihash().bytes), value: oldProof.hash },
        { type: 'put', key: slashedKey(alice.peerId.toMultihash().bytes), value: equivocation.hash }
      ])
      await db.close()
      const ledger = await LedgerIngest.open(path, { privateKey: alice.key, peerId: alice.peerId })
      assert.equal(ledger.store.isSlashed(bob.peerId.toString()), false)
      assert.equal(ledger.store.isSlashed(alice.peerId.toString()), true)
      await ledger.close()
    })
  })

  describe('feed time order', () => {
    it('an entry dated before its predecessor is rejected (LedgerError ERR_LEDGER_TIME_ORDER); the same time is fine', async () => {
      const ledger = await LedgerIngest.open(join(dir.path, 'order'), { privateKey: alice.key, peerId: alice.peerId })
      const t = Date.now() - 5000
      const one = entryOf(bob, 1, new Uint8Array(0), t)
      assert.equal((await ledger.ingest([one.envelope]))[0].status, 'added')
      const back = await rejection(ledger, entryOf(bob, 2, one.hash, t - 1).envelope)
      assert.ok(isCoded(back, LedgerError, 'ERR_LEDGER_TIME_ORDER'), back.name)
      assert.equal(back.code, 'ERR_LEDGER_TIME_ORDER')
      assert.equal((await ledger.ingest([entryOf(bob, 2, one.hash, t).envelope]))[0].status, 'added')
      await ledger.close()
    })

    it('a pending entry dated before its predecessor is dropped when the gap fills, and rejected when sent again', async () => {
      const ledger = await LedgerIngest.open(join(dir.path, 'order-pending'), { privateKey: alice.key, peerId: alice.peerId })
      const t = Date.now() - 5000
      const one = entryOf(carol, 1, new Uint8Array(0), t)
      const two = entryOf(carol, 2, one.hash, t + 10)
      const three = entryOf(carol, 3, two.hash, t)
      assert.equal((await ledger.ingest([three.envelope]))[0].status, 'pending')
      assert.deepEqual((await ledger.ingest([one.envelope, two.envelope])).map(o => o.status), ['added', 'added'])
      assert.equal(ledger.store.head(carol.peerId.toString())?.seq, 2)
      assert.equal((await ledger.stats()).pending, 0)
      assert.ok(isCoded(await rejection(ledger, three.envelope), LedgerError, 'ERR_LEDGER_TIME_ORDER'))
      await ledger.close()
    })

    it('our own feed does not go back when the clock does (within the skew bound)', async () => {
      let clock = Date.now()
      const ledger = await LedgerIngest.open(join(dir.path, 'order-own'), { privateKey: alice.key, peerId: alice.peerId, now: () => clock })
      const first = await ledger.append(LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, summaryBody(clock - 120_000))
      clock -= 10_000
      const second = await ledger.append(LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, summaryBody(clock - 120_000))
      assert.equal(second.time, first.time)
      await ledger.close()
    })
  })

  describe('receipt bodies', () => {
    it('a BAD_OUTPUT receipt without the received digest, or any receipt with a digest not of 32 bytes, is rejected at append (LedgerError ERR_LEDGER_BODY)', async () => {
      const ledger = await LedgerIngest.open(join(dir.path, 'receipt-body'), { privateKey: alice.key, peerId: alice.peerId })
      const job = signTestJob({ provider: bob, renter: alice })
      await assert.rejects(ledger.append(LedgerEntry.BodyKind.RECEIPT, signReceipt(alice, bob, job, Receipt.Outcome.BAD_OUTPUT, new Uint8Array(0))), (err: unknown) => isCoded(err, LedgerError, 'ERR_LEDGER_BODY'))
      await assert.rejects(ledger.append(LedgerEntry.BodyKind.RECEIPT, signReceipt(alice, bob, job, Receipt.Outcome.OK, new Uint8Array(5))), (err: unknown) => isCoded(err, LedgerError, 'ERR_LEDGER_BODY'))
      assert.equal(ledger.store.head(alice.peerId.toString()), undefined)
      await ledger.append(LedgerEntry.BodyKind.RECEIPT, signReceipt(alice, bob, job, Receipt.Outcome.BAD_OUTPUT, sha256('what I got')))
      await ledger.close()
    })
  })

  describe('receipt rules in reputation', () => {
    const provider = (): Signer => bob
    const renter = (): Signer => carol
    // signTestJob attests sha256(job id) as the output digest
    const attested = (job: TestJob): Uint8Array => sha256(job.jobId)

    /** one attested run and one receipt for it: does the receipt count? */
    function counts (status: TestOutcome, outcome: Receipt.Outcome, received?: Uint8Array, receiptTime = NOW): boolean {
      const feeds = new Feeds()
      const job = signTestJob({ provider: provider(), renter: renter(), outcome: status, at: NOW })
      feeds.attestation(provider(), job, NOW)
      feeds.receipt(renter(), signReceipt(renter(), provider(), job, outcome, received ?? attested(job)), receiptTime)
      return computeReputation(collectEvidence(feeds.records), provider().peerId.toString(), NOW).jobs === 1
    }

    it('an outcome counts only when the attestation implies it: PREEMPTED only for PREEMPTED, OK only for COMPLETED', () => {
      const O = Receipt.Outcome
      const table: Array<[TestOutcome, Receipt.Outcome, boolean]> = [
        ['ok', O.OK, true], ['ok', O.PREEMPTED, false], ['ok', O.FAILED, false], ['ok', O.TIMEOUT, false],
        ['failed', O.FAILED, true], ['failed', O.OK, false],
        ['preempted', O.PREEMPTED, true], ['preempted', O.OK, false],
        ['timeout', O.TIMEOUT, true], ['timeout', O.PREEMPTED, false]
      ]
      for (const [status, outcome, expected] of table) assert.equal(counts(status, outcome), expected, `${status} attested, receipt ${O[outcome]}`)
    })

    it('BAD_OUTPUT counts only with a received digest other than the attested one', () => {
      assert.equal(counts('ok', Receipt.Outcome.BAD_OUTPUT), false, 'the attested digest itself')
      assert.equal(counts('ok', Receipt.Outcome.BAD_OUTPUT, sha256('something else')), true)
    })

    it('a receipt dated before the attestation entry by more than the skew bound is ignored', () => {
      assert.equal(counts('ok', Receipt.Outcome.OK, undefined, NOW - MAX_CLOCK_SKEW_MS - 1), false)
      assert.equal(counts('ok', Receipt.Outcome.OK, undefined, NOW - MAX_CLOCK_SKEW_MS + 1000), true)
    })

    it('one receipt per attestation: the first in the renter\'s feed, whatever time a later one claims; an ignored one does not block', () => {
      const job = signTestJob({ provider: bob, renter: carol, at: NOW })
      const run = (outcomes: Array<[Receipt.Outcome, Uint8Array, number]>): { ok: number, failed: number } => {
        const feeds = new Feeds()
        feeds.attestation(bob, job, NOW - DAY)
        for (const [outcome, digest, time] of outcomes) {
          feeds.receipt(carol, signReceipt(carol, bob, job, outcome, digest), time)
        }
        const forward = computeReputation(collectEvidence(feeds.records), bob.peerId.toString(), NOW)
        const backward = computeReputation(collectEvidence([...feeds.records].reverse()), bob.peerId.toString(), NOW)
        assert.deepEqual(backward, forward, 'the order entries arrive in changes nothing')
        return { ok: forward.ok, failed: forward.failed }
      }
      const matching = sha256(job.jobId)
      // the later BAD_OUTPUT claims an earlier time (outside a store, which would refuse it): the OK stays
      assert.deepEqual(run([[Receipt.Outcome.OK, matching, NOW - DAY + 2000], [Receipt.Outcome.BAD_OUTPUT, sha256('y'), NOW - DAY + 1000]]), { ok: 1, failed: 0 })
      assert.deepEqual(run([[Receipt.Outcome.BAD_OUTPUT, sha256('y'), NOW - DAY + 1000], [Receipt.Outcome.OK, matching, NOW - DAY + 2000]]), { ok: 0, failed: 1 })
      // an inconsistent PREEMPTED first is ignored, the OK after it counts
      assert.deepEqual(
        run([
          [Receipt.Outcome.PREEMPTED, matching, NOW - DAY],
          [Receipt.Outcome.OK, matching, NOW - DAY]
        ]),
        { ok: 1, failed: 0 }
      )
    })

    it('every entry added twice changes nothing, and a receipt signed by another renter than the attestation names does not count', async () => {
      const feeds = new Feeds()
      const job = signTestJob({ provider: bob, renter: carol, at: NOW })
      feeds.attestation(bob, job, NOW)
      feeds.receipt(carol, job.receipt, NOW)
      const bad = signTestJob({ provider: bob, renter: carol, at: NOW, outcome: 'bad-output' })
      feeds.attestation(bob, bad, NOW)
      feeds.receipt(carol, signReceipt(carol, bob, bad, Receipt.Outcome.BAD_OUTPUT, sha256('not what was attested')), NOW)
      const once = computeReputation(collectEvidence(feeds.records), bob.peerId.toString(), NOW)
      assert.deepEqual({ ok: once.ok, failed: once.failed }, { ok: 1, failed: 1 })
      assert.deepEqual(
        computeReputation(
          collectEvidence([...feeds.records, ...[...feeds.records].reverse()]),
          bob.peerId.toString(),
          NOW
        ),
        once
      )
      // the same receipt's words from someone the attestation does not name
      const stranger = await newSigner()
      const other = signTestJob({ provider: bob, renter: carol, at: NOW })
      feeds.attestation(bob, other, NOW)
      feeds.receipt(stranger, signReceipt(stranger, bob, other, Receipt.Outcome.OK, sha256(other.jobId)), NOW)
      assert.equal(computeReputation(collectEvidence(feeds.records), bob.peerId.toString(), NOW).jobs, 2)
    })

    it('BAD_OUTPUT receipts lower a provider by at most one renter\'s capped share; a BAD_OUTPUT proof entry left by protocol 1 slashes nobody', async () => {
      const feeds = new Feeds()
      const honest = await Promise.all(Array.from({ length: 5 }, newSigner))
      for (const r of honest) {
        const job = signTestJob({ provider: bob, renter: r, at: NOW })
        feeds.attestation(bob, job, NOW)
        feeds.receipt(r, job.receipt, NOW)
      }
      const before = computeReputation(collectEvidence(feeds.records), bob.peerId.toString(), NOW).score
      for (let i = 0; i < 20; i++) {
        const job = signTestJob({ provider: bob, renter: carol, at: NOW, outcome: 'bad-output' })
        feeds.attestation(bob, job, NOW)
        feeds.receipt(carol, job.receipt, NOW)
      }
      const rep = computeReputation(collectEvidence(feeds.records), bob.peerId.toString(), NOW)
      assert.equal(rep.failed, 20)
      assert.ok(before - rep.score > 0, 'the receipts do count')
      assert.ok(before - rep.score <= maxDropPerCounterparty() + 1e-12, `drop ${before - rep.score} > ${maxDropPerCounterparty()}`)
      const carolsShare = rep.counterparties.find(c => c.renter === carol.peerId.toString())
      assert.equal(carolsShare?.cappedFailures, DEFAULT_REPUTATION.counterpartyCap * DEFAULT_REPUTATION.breakPenalty)
      // a stored protocol-1 proof entry (not verifiable today) read back from an old store
      const one = entryOf(bob, 1, new Uint8Array(0), NOW)
      const proof = signRawProof(carol.key, carol.peerId, {
        kind: FraudProof.Kind.BAD_OUTPUT,
        accused: bob.peerId.toMultihash().bytes,
        first: one.envelope,
        second: one.envelope
      })
      feeds.append(carol, LedgerEntry.BodyKind.FRAUD_PROOF, proof, NOW)
      const after = computeReputation(collectEvidence(feeds.records), bob.peerId.toString(), NOW)
      assert.equal(after.slashed, false)
      assert.equal(after.score, rep.score)
    })
  })
})
