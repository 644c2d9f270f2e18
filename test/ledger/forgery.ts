/**
 * The attacker's tools for the ledger red-team specs: what the open code of protocol 1 let
 * anyone sign. Nothing here is accepted by a node any more; the specs show that.
 */
import { DOMAIN } from '../../protocols/ids.js'
import { FraudProof } from '../../protocols/ledger.js'
import { sealEnvelope } from '../../src/identity/index.js'
import type { LedgerRecord } from '../../src/ledger/entries/entry.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

export interface BadOutputEvidence {
  /** the accused provider's attestation entry */
  attestation: LedgerRecord
  /** the renter's BAD_OUTPUT receipt entry for it */
  receipt: LedgerRecord
  /** the "re-run"'s attestation entry (a throwaway key) */
  rerunAttestation: LedgerRecord
  /** the renter's OK receipt entry for the re-run */
  rerunReceipt: LedgerRecord
}

/** A protocol-1 BAD_OUTPUT fraud proof, signed by `key` (the accusing renter). */
export function buildBadOutputProof (
  key: Ed25519PrivateKey,
  peerId: PeerId,
  evidence: BadOutputEvidence,
  now = Date.now()
): Uint8Array {
  const proof = FraudProof.encode({
    kind: FraudProof.Kind.BAD_OUTPUT,
    accused: evidence.attestation.author,
    first: evidence.attestation.envelope,
    second: evidence.receipt.envelope,
    evidence: [evidence.rerunAttestation.envelope, evidence.rerunReceipt.envelope],
    createdAt: BigInt(now)
  })
  return sealEnvelope(key, peerId, DOMAIN.fraudProof, proof)
}

/** A fraud proof with any fields, signed by `key`: for the field-by-field rejection tests. */
export function signRawProof (key: Ed25519PrivateKey, peerId: PeerId, proof: Partial<FraudProof> & Pick<FraudProof, 'kind'>): Uint8Array {
  return sealEnvelope(key, peerId, DOMAIN.fraudProof, FraudProof.encode({
    accused: new Uint8Array(0),
    first: new Uint8Array(0),
    second: new Uint8Array(0),
    evidence: [],
    createdAt: BigInt(Date.now()),
    ...proof
  }))
}
