/**
 * Fraud proofs: evidence any node re-checks by itself before slashing (protocols/README.md §7).
 *
 * EQUIVOCATION: two entries, both validly signed by the accused, with the same seq and
 * different hashes. Their bodies do not matter: the author signed two histories.
 *
 * BAD_OUTPUT: a renter says a provider's outputs were wrong, and backs it with a re-run.
 *   first       the accused's ATTESTATION entry A1: COMPLETED, for renter R
 *   second      R's RECEIPT entry for A1 (attestation_hash = hash(A1), same job and provider)
 *               with outcome BAD_OUTPUT
 *   evidence[0] the ATTESTATION entry A2 of another provider for R: COMPLETED, same input
 *               digest as A1, a different output digest
 *   evidence[1] R's RECEIPT entry for A2 with outcome OK (R received what A2 attests)
 * The claim rests on the renter and the second provider together; it cannot tell which of
 * two disagreeing providers ran a non-deterministic job correctly, which is why the renter's
 * OK for the re-run is required and why only COMPLETED runs with equal inputs count.
 */

import { equals } from 'uint8arrays/equals'
import { decodeBounded, envelopeMaxBytes, LIMITS, MAX_BYTES } from '../../protocols/codec.js'
import { DOMAIN } from '../../protocols/ids.js'
import { JobStatus, Receipt } from '../../protocols/job.js'
import { EnvelopeError, openEnvelopeAsync, sealEnvelope, type OpenedEnvelope } from '../identity/index.js'
import { verifyJobBody } from './body.js'
import { FraudProof, LedgerEntry, openEntry, parseAuthor, type LedgerRecord } from './entry.js'
import { InvalidFraudProofError, LedgerEntryError } from './errors.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

export interface VerifiedFraudProof {
  kind: 'equivocation' | 'bad-output'
  /** the slashed author's peer id */
  accused: string
  proof: FraudProof
}

/** Builds and signs an equivocation proof from two conflicting entries of one author. */
export function buildEquivocationProof (key: Ed25519PrivateKey, peerId: PeerId, first: LedgerRecord, second: LedgerRecord, now = Date.now()): Uint8Array {
  const proof = FraudProof.encode({ kind: FraudProof.Kind.EQUIVOCATION, accused: first.author, first: first.envelope, second: second.envelope, evidence: [], createdAt: BigInt(now) })
  return sealEnvelope(key, peerId, DOMAIN.fraudProof, proof)
}

/**
 * Opens a fraud-proof envelope (signed by `builder` when given) and re-checks its evidence.
 * Throws InvalidFraudProofError; returns who is slashed.
 */
export async function verifyFraudProof (bytes: Uint8Array, builder?: string): Promise<VerifiedFraudProof> {
  let opened: OpenedEnvelope
  try {
    opened = await openEnvelopeAsync(bytes, { domain: DOMAIN.fraudProof, maxBytes: envelopeMaxBytes(MAX_BYTES.fraudProof) })
  } catch (err) {
    if (err instanceof EnvelopeError) throw new InvalidFraudProofError(`fraud-proof envelope: ${err.message}`)
    throw err
  }
  if (builder != null && opened.signer.toString() !== builder) throw new InvalidFraudProofError('fraud proof signed by someone other than the entry author')
  let proof: FraudProof
  try {
    proof = decodeBounded(FraudProof, opened.payload, 'fraud proof', MAX_BYTES.fraudProof, LIMITS.fraudProof)
  } catch (err) {
    throw new InvalidFraudProofError(err instanceof Error ? err.message : String(err))
  }
  const accused = parseAuthor(proof.accused)
  if (accused == null) throw new InvalidFraudProofError('accused is not an Ed25519 peer id')
  if (proof.kind === FraudProof.Kind.EQUIVOCATION) {
    const [first, second] = await Promise.all([embedded(proof.first, 'first'), embedded(proof.second, 'second')])
    if (first.authorId !== accused.id || second.authorId !== accused.id) throw new InvalidFraudProofError('equivocating entries are not both by the accused')
    if (first.seq !== second.seq) throw new InvalidFraudProofError('equivocating entries have different seqs')
    if (equals(first.hash, second.hash)) throw new InvalidFraudProofError('equivocating entries are the same entry')
    return { kind: 'equivocation', accused: accused.id, proof }
  }
  if (proof.kind === FraudProof.Kind.BAD_OUTPUT) {
    await checkBadOutput(proof, accused.id)
    return { kind: 'bad-output', accused: accused.id, proof }
  }
  throw new InvalidFraudProofError(`unknown fraud proof kind ${String(proof.kind)}`)
}

async function embedded (bytes: Uint8Array, what: string): Promise<LedgerRecord> {
  try {
    return await openEntry(bytes)
  } catch (err) {
    if (err instanceof LedgerEntryError) throw new InvalidFraudProofError(`${what} entry: ${err.message}`)
    throw err
  }
}

async function jobBody (record: LedgerRecord, what: string): ReturnType<typeof verifyJobBody> {
  try {
    return await verifyJobBody(record)
  } catch (err) {
    if (err instanceof LedgerEntryError) throw new InvalidFraudProofError(`${what}: ${err.message}`)
    throw err
  }
}

async function checkBadOutput (proof: FraudProof, accused: string): Promise<void> {
  if (proof.evidence.length !== 2) throw new InvalidFraudProofError('a bad-output proof carries the re-run attestation and its receipt')
  const [a1, r1, a2, r2] = await Promise.all([
    embedded(proof.first, 'attestation'), embedded(proof.second, 'receipt'),
    embedded(proof.evidence[0], 're-run attestation'), embedded(proof.evidence[1], 're-run receipt')
  ])
  const kinds = [a1.kind, r1.kind, a2.kind, r2.kind]
  const wanted = [LedgerEntry.BodyKind.ATTESTATION, LedgerEntry.BodyKind.RECEIPT, LedgerEntry.BodyKind.ATTESTATION, LedgerEntry.BodyKind.RECEIPT]
  if (kinds.some((k, i) => k !== wanted[i])) throw new InvalidFraudProofError('bad-output evidence entries are not attestation, receipt, attestation, receipt')
  const [b1, c1, b2, c2] = await Promise.all([jobBody(a1, 'attestation'), jobBody(r1, 'receipt'), jobBody(a2, 're-run attestation'), jobBody(r2, 're-run receipt')])
  if (b1.kind !== 'attestation' || c1.kind !== 'receipt' || b2.kind !== 'attestation' || c2.kind !== 'receipt') throw new InvalidFraudProofError('bad-output evidence bodies are of the wrong kinds')
  const att = b1.attestation.message
  const rec = c1.receipt.message
  const rerun = b2.attestation.message
  const rerunRec = c2.receipt.message
  if (a1.authorId !== accused) throw new InvalidFraudProofError('the attestation is not by the accused')
  if (a2.authorId === accused) throw new InvalidFraudProofError('the re-run ran on the accused provider')
  if (att.status !== JobStatus.COMPLETED || rerun.status !== JobStatus.COMPLETED) throw new InvalidFraudProofError('only completed runs can be compared')
  if (!equals(rec.attestationHash, b1.attestation.hash) || !equals(rec.jobId, att.jobId) || !equals(rec.provider, att.provider)) throw new InvalidFraudProofError('the receipt is not for the accused attestation')
  if (rec.outcome !== Receipt.Outcome.BAD_OUTPUT) throw new InvalidFraudProofError('the receipt does not say BAD_OUTPUT')
  if (!equals(att.renter, r1.author)) throw new InvalidFraudProofError('the receipt is not by the attestation\'s renter')
  if (!equals(rerun.renter, r1.author) || r2.authorId !== r1.authorId) throw new InvalidFraudProofError('the re-run was not for the same renter')
  if (!equals(rerun.inputDigest, att.inputDigest)) throw new InvalidFraudProofError('the re-run had different inputs')
  if (equals(rerun.outputDigest, att.outputDigest)) throw new InvalidFraudProofError('the re-run produced the same output digest')
  if (!equals(rerunRec.attestationHash, b2.attestation.hash) || rerunRec.outcome !== Receipt.Outcome.OK) throw new InvalidFraudProofError('the renter did not receipt the re-run as OK')
}
