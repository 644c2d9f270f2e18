/**
 * Ledger sync 4 (issue 40 item 1): a chain-2 entry's hash is sha256 of its whole envelope, so an
 * entry's signature covers every byte of the feed before it, and a synced range verifies under
 * one signature, its last entry's. Every way to alter, cut or swap a range is refused whole.
 */
import * as assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { SignedEnvelope } from '../../protocols/envelope.js'
import { DOMAIN } from '../../protocols/ids.js'
import { HeartbeatSummary, LedgerEntry } from '../../protocols/ledger.js'
import { sealEnvelope, sha256 } from '../../src/identity/index.js'
import { sealEntry, type LedgerRecord } from '../../src/ledger/entries/entry.js'
import { isEntryError, LedgerError } from '../../src/ledger/errors.js'
import { LedgerIngest, type IngestOutcome } from '../../src/ledger/ingest/ingest.js'
import { signTestJob, type Signer } from '../../src/ledger/dev.js'
import { tempDir } from '../utils/index.js'
import { recordAttack } from '../utils/redteam.js'
import { isCoded } from '../../src/common/index.js'

async function newSigner (): Promise<Signer> {
  const key = await generateKeyPair('Ed25519')
  return { key, peerId: peerIdFromPrivateKey(key) }
}

function summaryBody (end: number): Uint8Array {
  return HeartbeatSummary.encode({
    periodStart: BigInt(end - 60_000),
    periodEnd: BigInt(end),
    heartbeatsSent: 6,
    intervalMs: 10_000,
    availableMs: 60_000n,
    upMs: 60_000n,
    slotsTotal: 1,
    busyPpm: 0
  })
}

/** `n` entries of `signer`'s feed from seq 1, chain 2 unless `chain1` of them come first as chain 1. */
function feed (signer: Signer, n: number, opts: { chain1?: number, now?: number } = {}): LedgerRecord[] {
  const out: LedgerRecord[] = []
  const now = opts.now ?? Date.now() - 10_000
  for (let seq = 1; seq <= n; seq++) {
    const prev = out.at(-1)
    out.push(
      sealEntry(signer.key, signer.peerId, {
        seq,
        prevHash: prev?.hash ?? new Uint8Array(0),
        time: now + seq,
        kind: LedgerEntry.BodyKind.HEARTBEAT_SUMMARY,
        body: summaryBody(now + seq - 1000),
        chain: seq <= (opts.chain1 ?? 0) ? 1 : 2
      })
    )
  }
  return out
}

/** The envelope with its signature's first byte flipped. */
function badSignature (envelope: Uint8Array): Uint8Array {
  const env = SignedEnvelope.decode(envelope)
  const signature = Uint8Array.from(env.signature)
  signature[0] = (signature[0] as number) ^ 1
  return SignedEnvelope.encode({ ...env, signature })
}

function statuses (outcomes: IngestOutcome[]): string[] {
  return [...new Set(outcomes.map(o => o.status === 'rejected' ? `rejected:${o.error.code}` : o.status))]
}

describe('ledger: signed heads, one signature per synced range (issue 40)', function () {
  this.timeout(60_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  let me: Signer
  let alice: Signer
  let ledger: LedgerIngest
  let n = 0

  before(async () => {
    dir = await tempDir('idlegrid-signed-heads-')
    me = await newSigner()
    alice = await newSigner()
  })
  beforeEach(async () => { ledger = await LedgerIngest.open(`${dir.path}/store-${n++}`, { privateKey: me.key, peerId: me.peerId }) })
  afterEach(async () => { await ledger.close() })
  after(async () => { await dir.cleanup() })

  const range = (
    records: LedgerRecord[],
    fromSeq = records[0]?.seq ?? 1,
    author = alice
  ): { range: { author: Uint8Array, fromSeq: number } } => ({
    range: { author: author.peerId.toMultihash().bytes, fromSeq }
  })

  it('every entry this node writes is chain 2, hashed whole: its signature is inside the next entry\'s prev_hash', async () => {
    const a = await ledger.append(LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, summaryBody(Date.now() - 1000))
    const b = await ledger.append(LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, summaryBody(Date.now() - 500))
    assert.equal(a.chain, 2)
    assert.deepEqual(a.hash, sha256(a.envelope))
    assert.deepEqual(b.prevHash, a.hash)
  })

  it('a range of 256 verifies under its last signature: an entry whose own signature is garbage but which a later signed entry covers is taken', async () => {
    const records = feed(alice, 256)
    // the author itself puts garbage in entry 10's signature and goes on chaining: entry 11 on commits to those bytes
    const garbage = badSignature((records[9] as LedgerRecord).envelope)
    const rebuilt: LedgerRecord[] = records.slice(0, 9)
    rebuilt.push({ ...(records[9] as LedgerRecord), envelope: garbage, hash: sha256(garbage) })
    for (let seq = 11; seq <= 256; seq++) {
      const prev = rebuilt.at(-1) as LedgerRecord
      rebuilt.push(
        sealEntry(alice.key, alice.peerId, {
          seq,
          prevHash: prev.hash,
          time: prev.time + 1,
          kind: LedgerEntry.BodyKind.HEARTBEAT_SUMMARY,
          body: summaryBody(prev.time - 1000)
        })
      )
    }
    // one at a time (each its own signature), entry 10 is refused
    const alone = await ledger.ingest(rebuilt.slice(0, 10).map(r => r.envelope))
    assert.equal(alone[9]?.status, 'rejected')
    // as a range, the last signature is the one checked: all 256 are taken
    const other = await LedgerIngest.open(`${dir.path}/store-range-${n++}`, { privateKey: me.key, peerId: me.peerId })
    try {
      const outcomes = await other.ingest(rebuilt.map(r => r.envelope), range(rebuilt))
      assert.deepEqual(statuses(outcomes), ['added'])
      assert.equal(other.store.head(alice.peerId.toString())?.seq, 256)
    } finally {
      await other.close()
    }
  })

  it('red team: an altered entry, altered signature bytes, a cut range, another author\'s head, a replayed old head: each refused whole', async () => {
    const records = feed(alice, 40)
    const envelopes = records.map(r => r.envelope)
    const rows: Array<{ attack: string, outcomes: IngestOutcome[], expect: string }> = []
    // an entry's body altered in the middle (re-encoded payload, old signature)
    const mid = SignedEnvelope.decode(envelopes[19] as Uint8Array)
    const payload = LedgerEntry.decode(mid.payload)
    const altered = SignedEnvelope.encode({
      ...mid,
      payload: LedgerEntry.encode({ ...payload, body: summaryBody(Number(payload.time) - 2000) })
    })
    rows.push({ attack: 'an entry altered mid-range (body changed, its own signature kept)', outcomes: await ledger.ingest(envelopes.map((e, i) => i === 19 ? altered : e), range(records)), expect: 'ERR_LEDGER_CHAIN' })
    // a middle entry's signature bytes altered: its hash changes, the next entry's prev_hash no longer names it
    rows.push({ attack: 'signature bytes of a middle entry altered (the relay keeps the payloads)', outcomes: await ledger.ingest(envelopes.map((e, i) => i === 19 ? badSignature(e) : e), range(records)), expect: 'ERR_LEDGER_CHAIN' })
    // the last entry's signature altered: the range's signed head does not verify
    rows.push({ attack: 'the signed head (last entry) of a range with its signature altered', outcomes: await ledger.ingest(envelopes.map((e, i) => i === 39 ? badSignature(e) : e), range(records)), expect: 'ERR_LEDGER_SIGNATURE' })
    // an entry cut out of the middle: not contiguous
    rows.push({ attack: 'a range with an entry cut out of its middle', outcomes: await ledger.ingest(envelopes.filter((_, i) => i !== 19), range(records)), expect: 'ERR_LEDGER_CHAIN' })
    // another author's entries (signed by them) answering a range asked of alice
    const mallory = await newSigner()
    const theirs = feed(mallory, 40)
    rows.push({ attack: 'a range of another author (its own valid head) answering a request for alice\'s feed', outcomes: await ledger.ingest(theirs.map(r => r.envelope), range(records)), expect: 'ERR_LEDGER_CHAIN' })
    // alice's entries with mallory's signature on the last (an envelope by mallory of alice's payload)
    const last = SignedEnvelope.decode(envelopes[39] as Uint8Array)
    const swapped = sealEnvelope(mallory.key, mallory.peerId, DOMAIN.ledgerEntry, last.payload)
    rows.push({ attack: 'alice\'s range closed by a head mallory signed over alice\'s last payload', outcomes: await ledger.ingest(envelopes.map((e, i) => i === 39 ? swapped : e), range(records)), expect: 'ERR_LEDGER_SIGNATURE' })
    for (const row of rows) {
      assert.deepEqual(statuses(row.outcomes), [`rejected:${row.expect}`], row.attack)
      assert.equal(ledger.store.head(alice.peerId.toString()), undefined, `${row.attack}: nothing of the range is stored`)
    }
    // the honest range after all of that: taken whole
    assert.deepEqual(statuses(await ledger.ingest(envelopes, range(records))), ['added'])
    // a replayed old head: an earlier prefix of the feed changes nothing
    const replay = await ledger.ingest(envelopes.slice(0, 10), range(records))
    assert.deepEqual(statuses(replay), ['duplicate'])
    assert.equal(ledger.store.head(alice.peerId.toString())?.seq, 40)
    rows.push({ attack: 'a replayed old head (an earlier prefix of the feed, validly signed)', outcomes: replay, expect: 'duplicate' })
    for (const row of rows) {
      recordAttack({
        issue: '40.5',
        attack: row.attack,
        got: `${statuses(row.outcomes).join(', ')} for all ${row.outcomes.length} entries`,
        limit: row.expect === 'duplicate' ? 'entries at held seqs with the held hash are duplicates: nothing changes' : 'a range is taken only whole: contiguous, each entry\'s prev_hash naming the one before (signatures included), the last signed by the author'
      })
    }
  })

  it('a cut-short range (a valid prefix) is taken: it is what the author signed up to there, no more', async () => {
    const records = feed(alice, 30)
    assert.deepEqual(statuses(await ledger.ingest(records.slice(0, 12).map(r => r.envelope), range(records))), ['added'])
    assert.equal(ledger.store.head(alice.peerId.toString())?.seq, 12)
    assert.deepEqual(statuses(await ledger.ingest(records.slice(12).map(r => r.envelope), range(records.slice(12)))), ['added'])
  })

  it('a feed written before ledger sync 4 (chain 1) goes on in chain 2; chain 1 after chain 2 is refused', async () => {
    const records = feed(alice, 20, { chain1: 8 })
    assert.deepEqual(records.map(r => r.chain), [...Array(8).fill(1), ...Array(12).fill(2)])
    assert.deepEqual(statuses(await ledger.ingest(records.map(r => r.envelope), range(records))), ['added'])
    const prev = records.at(-1) as LedgerRecord
    const back = sealEntry(alice.key, alice.peerId, {
      seq: 21,
      prevHash: prev.hash,
      time: prev.time + 1,
      kind: LedgerEntry.BodyKind.HEARTBEAT_SUMMARY,
      body: summaryBody(prev.time - 1000),
      chain: 1
    })
    const [outcome] = await ledger.ingest([back.envelope])
    assert.ok(outcome?.status === 'rejected' && isCoded(outcome.error, LedgerError, 'ERR_LEDGER_CHAIN') && /chain 1 after a chain-2 entry/.test(outcome.error.message))
    // in a range too
    const fresh = feed(alice, 3)
    const mixed = [
      fresh[0] as LedgerRecord,
      sealEntry(alice.key, alice.peerId, {
        seq: 2,
        prevHash: (fresh[0] as LedgerRecord).hash,
        time: (fresh[0] as LedgerRecord).time + 1,
        kind: LedgerEntry.BodyKind.HEARTBEAT_SUMMARY,
        body: summaryBody((fresh[0] as LedgerRecord).time - 1000),
        chain: 1
      })
    ]
    const other = await LedgerIngest.open(`${dir.path}/store-mixed-${n++}`, { privateKey: me.key, peerId: me.peerId })
    try {
      assert.deepEqual(statuses(await other.ingest(mixed.map(r => r.envelope), range(mixed))), ['rejected:ERR_LEDGER_CHAIN'])
    } finally {
      await other.close()
    }
  })

  it('a range of another history for held seqs is an equivocation, proven with both entries\' own signatures checked', async () => {
    const first = feed(alice, 5)
    assert.deepEqual(statuses(await ledger.ingest(first.map(r => r.envelope), range(first))), ['added'])
    const second = feed(alice, 5, { now: Date.now() - 5_000 })
    const outcomes = await ledger.ingest(second.map(r => r.envelope), range(second))
    assert.equal(outcomes[0]?.status, 'equivocation')
    assert.ok(outcomes[0]?.status === 'equivocation' && outcomes[0].proof != null, 'a proof was built')
    assert.ok(ledger.store.isSlashed(alice.peerId.toString()))
  })

  it('a range that carries two entries for one seq is checked entry by entry: the equivocation is proven, not lost with the range', async () => {
    const mine = feed(alice, 4)
    const other = feed(alice, 4, { now: Date.now() - 7_000 })
    const pairs = mine.flatMap((r, i) => [r.envelope, (other[i] as LedgerRecord).envelope])
    const outcomes = await ledger.ingest(pairs, range(mine))
    assert.ok(outcomes.some(o => o.status === 'equivocation' && o.proof != null), JSON.stringify(statuses(outcomes)))
    assert.ok(ledger.store.isSlashed(alice.peerId.toString()))
  })

  it('attestation and receipt bodies of chain-2 entries: their own signature is covered, their rules still apply', async () => {
    const provider = await newSigner()
    const renter = await newSigner()
    const job = signTestJob({ provider, renter, at: Date.now() - 5_000 })
    const att = sealEntry(provider.key, provider.peerId, {
      seq: 1,
      prevHash: new Uint8Array(0),
      time: Date.now() - 4_000,
      kind: LedgerEntry.BodyKind.ATTESTATION,
      body: job.attestation
    })
    assert.deepEqual(statuses(await ledger.ingest([att.envelope])), ['added'])
    // the renter's receipt put in the provider's feed: another signer than the author
    const wrong = sealEntry(provider.key, provider.peerId, {
      seq: 2,
      prevHash: att.hash,
      time: Date.now() - 3_000,
      kind: LedgerEntry.BodyKind.RECEIPT,
      body: job.receipt
    })
    const [outcome] = await ledger.ingest([wrong.envelope])
    assert.ok(outcome?.status === 'rejected' && isEntryError(outcome.error) && /not by the entry's author/.test(outcome.error.message))
  })
})
