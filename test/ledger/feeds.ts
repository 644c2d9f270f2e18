/**
 * Ledger feeds built in memory with real keys and signatures, as a store would hold them,
 * for reputation and trust tests (reputation is a pure function of entries and `now`).
 */
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { LedgerEntry } from '../../protocols/ledger.js'
import { signTestJob, type Signer, type TestOutcome } from '../../src/ledger/dev.js'
import { sealEntry, type LedgerRecord } from '../../src/ledger/entry.js'

export async function signer (): Promise<Signer> {
  const key = await generateKeyPair('Ed25519')
  return { key, peerId: peerIdFromPrivateKey(key) }
}

export async function signers (n: number): Promise<Signer[]> {
  return await Promise.all(Array.from({ length: n }, signer))
}

export const idOf = (s: Signer): string => s.peerId.toString()

/** Keeps each author's chain so entries are what a store would hold. */
export class Feeds {
  readonly records: LedgerRecord[] = []
  private readonly heads = new Map<string, LedgerRecord>()

  append (author: Signer, kind: LedgerEntry.BodyKind, body: Uint8Array, time: number): LedgerRecord {
    const head = this.heads.get(author.peerId.toString())
    const record = sealEntry(author.key, author.peerId, { seq: (head?.seq ?? 0) + 1, prevHash: head?.hash ?? new Uint8Array(0), time, kind, body })
    this.heads.set(author.peerId.toString(), record)
    this.records.push(record)
    return record
  }

  /** One job: the provider's attestation and the renter's receipt. */
  job (provider: Signer, renter: Signer, time: number, outcome: TestOutcome = 'ok'): void {
    const j = signTestJob({ provider, renter, outcome, at: time, pricePaidMicroUsd: 1_000_000n, durationMs: 3600_000 })
    this.append(provider, LedgerEntry.BodyKind.ATTESTATION, j.attestation, time)
    this.append(renter, LedgerEntry.BodyKind.RECEIPT, j.receipt, time)
  }
}
