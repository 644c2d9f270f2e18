/**
 * ledger.json: one store fed entries in file order (chains, duplicates, equivocation, fraud
 * proofs as entry bodies); fraud-proofs.json: proofs judged on their own; sync.json: sync
 * protocol messages.
 */

import { DOMAIN, SIGNING_PREFIX } from '../../../protocols/ids.js'
import { FraudProof, LedgerEntry, SyncRequest, SyncResponse } from '../../../protocols/ledger.js'
import { accept, envelopeMeaning, keyEntry, NOW, party, reject, seal, tamper, type Party } from './build.js'
import { VECTOR_FORMAT, type Vector, type VectorCheck, type VectorFile, type VectorStage } from './format.js'
import { attestation, entry, receipt, sha256 } from './messages.js'
import { Writer } from './writer.js'
import { encodeCoSigned, encodeStatement, signStatement } from '../../../src/ledger/index.js'

type Outcome = 'accept' | [reason: string, stage: VectorStage]

function envelopeVector (check: VectorCheck, payloadType: string, decoder: { decode: (b: Uint8Array) => unknown }) {
  return (name: string, bytes: Uint8Array, outcome: Outcome, note?: string): Vector => {
    const init = { name, type: 'SignedEnvelope', payloadType, check, bytes, decoded: envelopeMeaning(bytes, decoder), ...(note == null ? {} : { note }) }
    return outcome === 'accept' ? accept(init) : reject({ ...init, stage: outcome[1] }, outcome[0])
  }
}

function proof (builder: Party, p: Partial<FraudProof>): Uint8Array {
  return seal(
    builder,
    DOMAIN.fraudProof,
    FraudProof.encode({
      kind: FraudProof.Kind.EQUIVOCATION,
      accused: new Uint8Array(0),
      first: new Uint8Array(0),
      second: new Uint8Array(0),
      evidence: [],
      createdAt: BigInt(NOW - 5_000),
      ...p
    })
  )
}

export async function makeLedger (): Promise<VectorFile> {
  const [alice, bob, carol] = await Promise.all([party('alice'), party('bob'), party('carol')])
  const v = envelopeVector({ kind: 'ledger-feed' }, 'LedgerEntry', LedgerEntry)
  const att = attestation(bob, alice, sha256('award'))
  const b1 = entry(bob, { seq: 1, time: NOW - 50_000 })
  const b2 = entry(bob, {
    seq: 2,
    prev: b1.hash,
    time: NOW - 40_000,
    kind: LedgerEntry.BodyKind.ATTESTATION,
    body: att.envelope
  })
  const b2x = entry(bob, { seq: 2, prev: b1.hash, time: NOW - 39_000 })
  const a1 = entry(alice, {
    seq: 1,
    time: NOW - 30_000,
    kind: LedgerEntry.BodyKind.RECEIPT,
    body: receipt(alice, bob, att.hash)
  })
  const equivocation = proof(carol, { accused: bob.id, first: b2.envelope, second: b2x.envelope })
  const badOutput = proof(carol, {
    kind: FraudProof.Kind.BAD_OUTPUT,
    accused: bob.id,
    first: b2.envelope,
    second: a1.envelope
  })
  // a minute of bob's lease for alice, co-signed by both; then the same statement with carol's signature for alice's
  const usage = encodeStatement({
    leaseId: new Uint8Array(16).fill(0x17),
    provider: bob.id,
    renter: alice.id,
    intervalStart: NOW - 90_000,
    intervalEnd: NOW - 30_000,
    requests: 120,
    gpuMs: 60_000,
    bytesIn: 4096,
    bytesOut: 65536,
    priceMicroUsdPerGpuHour: 1_800_000
  })
  const a2 = entry(alice, {
    seq: 2,
    prev: a1.hash,
    time: NOW - 20_000,
    kind: LedgerEntry.BodyKind.USAGE,
    body: encodeCoSigned(usage, signStatement(bob.key, usage), signStatement(alice.key, usage))
  })
  const forgedUsage = encodeCoSigned(usage, signStatement(bob.key, usage), signStatement(carol.key, usage))
  // ledger sync 4: alice's feed goes on in chain 2 (hashed whole, signature included)
  const a3 = entry(alice, { seq: 3, prev: a2.hash, time: NOW - 15_000, chain: 2 })
  const a4 = entry(alice, {
    seq: 4,
    prev: a3.hash,
    time: NOW - 14_000,
    chain: 2,
    kind: LedgerEntry.BodyKind.RECEIPT,
    body: tamper(receipt(alice, bob, att.hash), { signature: new Uint8Array(64).fill(7) })
  })
  const vectors = [
    v('bob-1', b1.envelope, 'accept', 'seq 1: empty prev_hash; body a heartbeat summary'),
    v('bob-2-attestation', b2.envelope, 'accept', 'prev_hash = message hash of bob-1; body bob\'s attestation envelope'),
    v('bob-2-again', b2.envelope, ['duplicate', 'rule'], 'the same entry again: a duplicate, nothing changes'),
    v('bob-3-wrong-prev-hash', entry(bob, { seq: 3, prev: b1.hash, time: NOW - 30_000 }).envelope, ['ERR_LEDGER_CHAIN', 'rule'], 'prev_hash names seq 1, not seq 2'),
    v('bob-3-dated-before-bob-2', entry(bob, { seq: 3, prev: b2.hash, time: NOW - 41_000 }).envelope, ['ERR_LEDGER_TIME_ORDER', 'rule']),
    v('bob-3-from-the-future', entry(bob, { seq: 3, prev: b2.hash, time: NOW + 31_000 }).envelope, ['ERR_LEDGER_FUTURE', 'rule']),
    v('bob-3-bad-signature', tamper(entry(bob, { seq: 3, prev: b2.hash, time: NOW - 20_000 }).envelope, { payload: entry(bob, { seq: 3, prev: b2.hash, time: NOW - 19_000 }).payload }), ['ERR_LEDGER_SIGNATURE', 'signature']),
    v('bob-3-attestation-of-another', entry(bob, { seq: 3, prev: b2.hash, time: NOW - 20_000, kind: LedgerEntry.BodyKind.ATTESTATION, body: attestation(carol, alice, sha256('award')).envelope }).envelope, ['ERR_LEDGER_BODY', 'rule'], 'the body is carol\'s attestation, not the author\'s'),
    v('alice-1-receipt', a1.envelope, 'accept'),
    v('alice-2-usage', a2.envelope, 'accept', 'body a CoSignedUsage of bob\'s lease for alice: amount = 60 000 GPU-ms × 1.8 USD/GPU-h = 30 000 µUSD; both signatures over the statement bytes, domain "usage"'),
    v('bob-3-usage-forged-renter-signature', entry(bob, { seq: 3, prev: b2.hash, time: NOW - 10_000, kind: LedgerEntry.BodyKind.USAGE, body: forgedUsage }).envelope, ['ERR_LEDGER_USAGE', 'rule'], 'the renter signature is carol\'s, not alice\'s: bob cannot sign for his renter'),
    v('chain2-alice-3', a3.envelope, 'accept', 'chain = 2 after chain-1 entries: prev_hash is the message hash of alice-2 (chain 1); this entry\'s own hash is sha256 of its whole envelope'),
    v('chain2-alice-4-message-hash-as-prev', entry(alice, { seq: 4, prev: entry(alice, { seq: 3, prev: a2.hash, time: NOW - 15_000 }).hash, time: NOW - 14_000, chain: 2 }).envelope, ['ERR_LEDGER_CHAIN', 'rule'], 'prev_hash names alice-3 by its message hash: a chain-2 entry goes by sha256 of its envelope'),
    v('chain2-alice-4-receipt', a4.envelope, 'accept', 'prev_hash = sha256(alice-3 envelope bytes); the receipt body\'s own signature is 64 bytes of 0x07: in a chain-2 entry it is not checked (the entry\'s signature covers it)'),
    v('chain2-alice-5-chain1-after-chain2', entry(alice, { seq: 5, prev: a4.hash, time: NOW - 13_000 }).envelope, ['ERR_LEDGER_CHAIN', 'rule'], 'chain 1 after a chain-2 entry: a feed\'s chain never goes back'),
    v('chain2-alice-5-unknown-chain', entry(alice, { seq: 5, prev: a4.hash, time: NOW - 13_000, chain: 3 }).envelope, ['ERR_LEDGER_MALFORMED', 'rule'], 'chain 3 is not defined (a rule of the ledger, not of the wire: the message decodes)'),
    v('bob-2-conflicting', b2x.envelope, ['equivocation', 'rule'], 'a second valid entry at bob\'s seq 2: an equivocation; the receiver proves it and slashes bob'),
    v('carol-1-equivocation-proof', entry(carol, { seq: 1, time: NOW - 1_000, kind: LedgerEntry.BodyKind.FRAUD_PROOF, body: equivocation }).envelope, 'accept'),
    v('carol-2-bad-output-proof', entry(carol, { seq: 2, prev: entry(carol, { seq: 1, time: NOW - 1_000, kind: LedgerEntry.BodyKind.FRAUD_PROOF, body: equivocation }).hash, time: NOW, kind: LedgerEntry.BodyKind.FRAUD_PROOF, body: badOutput }).envelope, ['ERR_LEDGER_FRAUD_PROOF', 'rule'], 'BAD_OUTPUT proofs never slash since ledger protocol 2')
  ]
  return file('ledger entries ingested in this order by one node\'s store (ledger protocol 4)', { alice: keyEntry(alice), bob: keyEntry(bob), carol: keyEntry(carol) }, vectors)
}

export async function makeFraudProofs (): Promise<VectorFile> {
  const [alice, bob, carol] = await Promise.all([party('alice'), party('bob'), party('carol')])
  const v = envelopeVector({ kind: 'fraud-proof', builder: carol.peerId.toString(), entryTime: NOW }, 'FraudProof', FraudProof)
  const b1 = entry(bob, { seq: 1, time: NOW - 50_000 })
  const b1x = entry(bob, { seq: 1, time: NOW - 49_000 })
  const a1 = entry(alice, { seq: 1, time: NOW - 50_000 })
  const vectors = [
    v('equivocation', proof(carol, { accused: bob.id, first: b1.envelope, second: b1x.envelope }), 'accept'),
    v('bad-output', proof(carol, { kind: FraudProof.Kind.BAD_OUTPUT, accused: bob.id, first: b1.envelope, second: b1x.envelope }), ['ERR_LEDGER_FRAUD_PROOF', 'rule'], 'BAD_OUTPUT: refused whatever it carries (ledger protocol 2)'),
    v('same-entry-twice', proof(carol, { accused: bob.id, first: b1.envelope, second: b1.envelope }), ['ERR_LEDGER_FRAUD_PROOF', 'rule']),
    v('entries-of-two-authors', proof(carol, { accused: bob.id, first: b1.envelope, second: a1.envelope }), ['ERR_LEDGER_FRAUD_PROOF', 'rule']),
    v('with-evidence', proof(carol, { accused: bob.id, first: b1.envelope, second: b1x.envelope, evidence: [sha256('x')] }), ['ERR_LEDGER_FRAUD_PROOF', 'rule']),
    v('created-before-its-entries', proof(carol, { accused: bob.id, first: b1.envelope, second: b1x.envelope, createdAt: BigInt(NOW - 80_000) }), ['ERR_LEDGER_FRAUD_PROOF', 'rule']),
    v('built-by-another', proof(alice, { accused: bob.id, first: b1.envelope, second: b1x.envelope }), ['ERR_LEDGER_FRAUD_PROOF', 'signer'], 'signed by alice, carried by carol\'s entry'),
    v('embedded-entry-forged', proof(carol, { accused: bob.id, first: b1.envelope, second: tamper(b1x.envelope, { payload: entry(bob, { seq: 1, time: NOW - 48_000 }).payload }) }), ['ERR_LEDGER_FRAUD_PROOF', 'rule'], 'the second entry\'s signature does not verify')
  ]
  return file('fraud proofs, each carried by carol\'s entry dated `now`', { alice: keyEntry(alice), bob: keyEntry(bob), carol: keyEntry(carol) }, vectors)
}

export async function makeSync (): Promise<VectorFile> {
  const bob = await party('bob')
  const b1 = entry(bob, { seq: 1, time: NOW - 50_000 })
  const req = (name: string, bytes: Uint8Array, outcome: Outcome, note?: string): Vector => plain(name, 'SyncRequest', { kind: 'sync-request' }, bytes, outcome, SyncRequest, note)
  const res = (name: string, bytes: Uint8Array, outcome: Outcome, note?: string): Vector => plain(name, 'SyncResponse', { kind: 'sync-response' }, bytes, outcome, SyncResponse, note)
  const vectors = [
    req('heads-empty', SyncRequest.encode({ heads: { ownAuthor: new Uint8Array(0), ownSeq: 0n, ownHash: new Uint8Array(0), afterAuthor: new Uint8Array(0), limit: 0 } }), 'accept', 'SyncRequest{heads:{}}: the empty Heads is sent present (bytes 0a 00)'),
    req('heads-with-hint', SyncRequest.encode({ heads: { ownAuthor: bob.id, ownSeq: 1n, ownHash: b1.hash, afterAuthor: new Uint8Array(0), limit: 1 } }), 'accept'),
    req('range', SyncRequest.encode({ range: { author: bob.id, fromSeq: 1n, limit: 1024 } }), 'accept', 'at most 1024 entries asked (0 would mean 256)'),
    req('empty', new Uint8Array(0), ['ERR_LEDGER_SYNC', 'decode'], 'neither heads nor range'),
    req('ranges', SyncRequest.encode({ ranges: { ranges: [{ author: bob.id, fromSeq: 1n, limit: 1 }, { author: bob.id, fromSeq: 5n, limit: 3 }] } }), 'accept', 'several ranges in one request (at most 64, their limits together at most 1024), asked only of a responder whose heads page said answers_ranges'),
    req('ranges-over-limit', new Writer().bytesField(3, rangesOver(65, bob.id)).bytes(), ['malformed', 'decode'], '65 ranges in one request (limit 64)'),
    req('oversized', SyncRequest.encode({ range: { author: new Uint8Array(4200), fromSeq: 1n, limit: 1 } }), ['oversized', 'size'], 'over the 4096-byte bound (256 before ranges requests, which no request of a heads or one range reaches)'),
    res('heads', SyncResponse.encode({ heads: { heads: [{ author: bob.id, seq: 1n, hash: b1.hash }], more: false, answersRanges: false } }), 'accept'),
    res('entries', SyncResponse.encode({ entries: { entries: [b1.envelope], more: false } }), 'accept'),
    res('heads-answers-ranges', SyncResponse.encode({ heads: { heads: [{ author: bob.id, seq: 1n, hash: b1.hash }], more: false, answersRanges: true } }), 'accept', 'the responder answers ranges requests (field 11; absent from responders from before them)'),
    res('ranges', SyncResponse.encode({ ranges: { ranges: [{ entries: [b1.envelope], more: false }, { entries: [], more: true }] } }), 'accept', 'one Entries per range asked, in order: the second got nothing of the response\'s bounds, and says more'),
    res('ranges-over-limit', new Writer().bytesField(3, repeated(65, new Writer().bytesField(1, Uint8Array.of(1)).bytes())).bytes(), ['malformed', 'decode'], '65 ranges in one response (limit 64)'),
    res('ranges-entries-over-limit', new Writer().bytesField(3, new Writer().bytesField(1, entriesOver(1025)).bytes()).bytes(), ['malformed', 'decode'], 'a range of 1025 entries in a ranges response (limit 1024)'),
    res('entries-at-limit', new Writer().bytesField(2, entriesOver(1024)).bytes(), 'accept', '1024 entries in one response (the limit; a decoder of a node from before ranges of 1,024 refuses more than 256, which it never asks for)'),
    res('entries-over-limit', new Writer().bytesField(2, entriesOver(1025)).bytes(), ['malformed', 'decode'], '1025 entries in one response (limit 1024)')
  ]
  return file('ledger sync messages (/idlegrid/ledger/sync/4.0.0), length prefix removed', { bob: keyEntry(bob) }, vectors)
}

/** `n` copies of the message `bytes` as field 1 (a repeated message field). */
function repeated (n: number, bytes: Uint8Array): Uint8Array {
  const w = new Writer()
  for (let i = 0; i < n; i++) w.bytesField(1, bytes)
  return w.bytes()
}

/** A SyncRequest.Ranges of `n` ranges of `author` from seq 1, limit 1. */
function rangesOver (n: number, author: Uint8Array): Uint8Array {
  return repeated(n, SyncRequest.Range.encode({ author, fromSeq: 1n, limit: 1 }))
}

function entriesOver (n: number): Uint8Array {
  const w = new Writer()
  for (let i = 0; i < n; i++) w.bytesField(1, Uint8Array.of(i & 0xff))
  return w.bytes()
}

function plain (
  name: string,
  type: string,
  check: VectorCheck,
  bytes: Uint8Array,
  outcome: Outcome,
  decoder: { decode: (b: Uint8Array) => unknown },
  note?: string
): Vector {
  const init = { name, type, check, bytes, ...(note == null ? {} : { note }) }
  return outcome === 'accept' ? accept(init, decoder) : reject({ ...init, stage: outcome[1] }, outcome[0], outcome[1] === 'decode' ? undefined : decoder)
}

function file (description: string, keys: VectorFile['keys'], vectors: Vector[]): VectorFile {
  return { format: VECTOR_FORMAT, description, now: NOW, signingPrefix: SIGNING_PREFIX, keys, vectors }
}
