/**
 * Fixtures of the flood specs: keys, feeds signed entry by entry, and the attacker's junk (a
 * valid ~27 KiB equivocation-proof entry from a throwaway key, as in issue 12 attack 4).
 */
import { randomBytes } from 'node:crypto'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { DOMAIN } from '../../protocols/ids.js'
import { FraudProof, HeartbeatSummary, LedgerEntry } from '../../protocols/ledger.js'
import { sealEnvelope } from '../../src/identity/index.js'
import { signTestJob, type Signer } from '../../src/ledger/dev.js'
import { sealEntry, type LedgerRecord } from '../../src/ledger/entries/entry.js'

export async function newSigner (): Promise<Signer> {
  const key = await generateKeyPair('Ed25519')
  return { key, peerId: peerIdFromPrivateKey(key) }
}

/** One author's feed, signed entry after entry. */
export class TestFeed {
  readonly signer: Signer
  private head?: LedgerRecord

  constructor (signer: Signer) {
    this.signer = signer
  }

  get id (): string {
    return this.signer.peerId.toString()
  }

  entry (kind: LedgerEntry.BodyKind, body: Uint8Array, time = Date.now()): LedgerRecord {
    const record = sealEntry(this.signer.key, this.signer.peerId, {
      seq: (this.head?.seq ?? 0) + 1,
      prevHash: this.head?.hash ?? new Uint8Array(0),
      time,
      kind,
      body
    })
    this.head = record
    return record
  }

  summary (time = Date.now()): LedgerRecord {
    return this.entry(LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, summaryBody(time), time)
  }
}

export function summaryBody (now = Date.now()): Uint8Array {
  return HeartbeatSummary.encode({
    periodStart: BigInt(now - 60_000),
    periodEnd: BigInt(now),
    heartbeatsSent: 60,
    intervalMs: 1000,
    availableMs: 60_000n,
    upMs: 60_000n,
    slotsTotal: 1,
    busyPpm: 0
  })
}

/** `n` heartbeat summaries of `signer`'s feed from seq 1, a millisecond apart, ending a minute ago. */
export function summaryFeed (signer: Signer, n: number): LedgerRecord[] {
  const out: LedgerRecord[] = []
  const start = Date.now() - 60_000
  for (let seq = 1; seq <= n; seq++) {
    const time = start + seq
    out.push(sealEntry(signer.key, signer.peerId, {
      seq,
      prevHash: out.at(-1)?.hash ?? new Uint8Array(0),
      time,
      kind: LedgerEntry.BodyKind.HEARTBEAT_SUMMARY,
      body: summaryBody(time - 1_000)
    }))
  }
  return out
}

/**
 * A job between two feeds: the provider's attestation entry (naming the renter) and the renter's
 * receipt entry (naming the provider).
 */
export function jobEntries (
  provider: TestFeed,
  renter: TestFeed,
  time = Date.now()
): { attestation: LedgerRecord, receipt: LedgerRecord } {
  const job = signTestJob({ provider: provider.signer, renter: renter.signer, at: time })
  return {
    attestation: provider.entry(LedgerEntry.BodyKind.ATTESTATION, job.attestation, time),
    receipt: renter.entry(LedgerEntry.BodyKind.RECEIPT, job.receipt, time)
  }
}

/**
 * The attack's junk: a throwaway key's first entry, a valid equivocation proof against
 * another throwaway key whose two conflicting entries carry 13 KiB bodies each (~27 KiB).
 */
export async function junkProofEntry (): Promise<LedgerRecord> {
  const [author, accused] = await Promise.all([newSigner(), newSigner()])
  const conflicting = [0, 1].map(() =>
    sealEntry(accused.key, accused.peerId, {
      seq: 1,
      prevHash: new Uint8Array(0),
      time: Date.now(),
      kind: LedgerEntry.BodyKind.FRAUD_PROOF,
      body: new Uint8Array(randomBytes(13 * 1024))
    })
  )
  const proof = FraudProof.encode({
    kind: FraudProof.Kind.EQUIVOCATION,
    accused: accused.peerId.toMultihash().bytes,
    first: conflicting[0].envelope,
    second: conflicting[1].envelope,
    evidence: [],
    createdAt: BigInt(Date.now())
  })
  return sealEntry(author.key, author.peerId, {
    seq: 1,
    prevHash: new Uint8Array(0),
    time: Date.now(),
    kind: LedgerEntry.BodyKind.FRAUD_PROOF,
    body: sealEnvelope(author.key, author.peerId, DOMAIN.fraudProof, proof)
  })
}
