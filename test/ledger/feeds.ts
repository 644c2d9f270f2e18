/**
 * Ledger feeds built in memory with real keys and signatures, as a store would hold them, for
 * reputation, trust and proof specs (reputation is a pure function of entries and `now`).
 */
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { DOMAIN } from '../../protocols/ids.js'
import { Receipt } from '../../protocols/job.js'
import { LedgerEntry } from '../../protocols/ledger.js'
import { sealEnvelope } from '../../src/identity/index.js'
import { signTestJob, type Signer, type TestJob, type TestOutcome } from '../../src/ledger/dev.js'
import { sealEntry, type LedgerRecord } from '../../src/ledger/entries/entry.js'

export async function newSigner (): Promise<Signer> {
  const key = await generateKeyPair('Ed25519')
  return { key, peerId: peerIdFromPrivateKey(key) }
}

export async function signers (n: number): Promise<Signer[]> {
  return await Promise.all(Array.from({ length: n }, newSigner))
}

export const idOf = (s: Signer): string => s.peerId.toString()

/** Keeps each author's chain, so each appended record is what a store would hold. */
export class Feeds {
  readonly records: LedgerRecord[] = []
  private readonly heads = new Map<string, LedgerRecord>()

  append (author: Signer, kind: LedgerEntry.BodyKind, body: Uint8Array, time: number): LedgerRecord {
    const head = this.heads.get(author.peerId.toString())
    const record = sealEntry(author.key, author.peerId, {
      seq: (head?.seq ?? 0) + 1,
      prevHash: head?.hash ?? new Uint8Array(0),
      time,
      kind,
      body
    })
    this.heads.set(author.peerId.toString(), record)
    this.records.push(record)
    return record
  }

  attestation (provider: Signer, job: TestJob, time: number): LedgerRecord {
    return this.append(provider, LedgerEntry.BodyKind.ATTESTATION, job.attestation, time)
  }

  receipt (renter: Signer, body: Uint8Array, time: number): LedgerRecord {
    return this.append(renter, LedgerEntry.BodyKind.RECEIPT, body, time)
  }

  /** One job: the provider's attestation and the renter's receipt. */
  job (provider: Signer, renter: Signer, time: number, outcome: TestOutcome = 'ok'): void {
    const j = signTestJob({ provider, renter, outcome, at: time, pricePaidMicroUsd: 1_000_000n, durationMs: 3600_000 })
    this.attestation(provider, j, time)
    this.receipt(renter, j.receipt, time)
  }
}

/** A receipt by `renter` for `job`'s attestation saying whatever it likes. */
export function signReceipt (
  renter: Signer,
  provider: Signer,
  job: TestJob,
  outcome: Receipt.Outcome,
  receivedOutputDigest: Uint8Array,
  createdAt = Date.now()
): Uint8Array {
  return sealEnvelope(renter.key, renter.peerId, DOMAIN.receipt, Receipt.encode({
    jobId: job.jobId,
    provider: provider.peerId.toMultihash().bytes,
    renter: renter.peerId.toMultihash().bytes,
    attestationHash: job.attestationHash,
    outcome,
    latencyMs: 1000n,
    pricePaidMicroUsd: 1_000_000n,
    createdAt: BigInt(createdAt),
    receivedOutputDigest
  }))
}
