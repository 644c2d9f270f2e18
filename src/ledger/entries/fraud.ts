/**
 * Fraud proofs: evidence any node re-checks by itself before slashing (protocols/README.md §7).
 *
 * Only one kind slashes: EQUIVOCATION, two entries both validly signed by the accused with
 * the same seq and different hashes. Nobody but the accused can sign them, so nobody can
 * fabricate the proof. Their bodies do not matter: the author signed two histories.
 *
 * BAD_OUTPUT proofs (a renter's BAD_OUTPUT receipt backed by a "re-run" elsewhere) are
 * refused since protocol v2: a renter and a throwaway key it controls could sign every part of
 * one, so it proved nothing. A bad output is one renter's word, counted through its receipt
 * and the per-counterparty cap (reputation/reputation.ts), never a slash.
 *
 * A proof carries only what it needs: no evidence, `accused` equal to the signer of both
 * entries, both entries ledger-entry envelopes of one author and seq with different hashes, and
 * a created_at no earlier than those entries and no later than the entry that carries it.
 */

import { equals } from 'uint8arrays/equals'
import { decodeBounded, envelopeMaxBytes, LIMITS, MAX_BYTES, MAX_CLOCK_SKEW_MS } from '../../../protocols/codec.js'
import { DOMAIN } from '../../../protocols/ids.js'
import { isEnvelopeError, openEnvelopeAsync, sealEnvelope, type OpenedEnvelope } from '../../identity/index.js'
import { FraudProof, openEntry, parseAuthor, type LedgerRecord } from './entry.js'
import { isEntryError, LedgerError } from '../errors.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

export interface VerifiedFraudProof {
  kind: 'equivocation'
  /** the slashed author's peer id */
  accused: string
  proof: FraudProof
}

export interface VerifyFraudProofOptions {
  /** the peer id that must have signed the proof (the carrying entry's author) */
  builder?: string
  /**
   * the carrying entry's time, unix ms: created_at may not pass it by more than the skew bound
   * (default: no such check, for a proof looked at on its own)
   */
  entryTime?: number
  /** the skew bound, ms (default MAX_CLOCK_SKEW_MS) */
  maxSkewMs?: number
}

/** Builds and signs (as `signer`) an equivocation proof from two conflicting entries of one author. */
export function buildEquivocationProof (
  signer: { privateKey: Ed25519PrivateKey, peerId: PeerId },
  first: LedgerRecord,
  second: LedgerRecord,
  now = Date.now()
): Uint8Array {
  // never earlier than the entries it embeds (their times may be ahead of our clock by the skew)
  const createdAt = Math.max(now, first.time, second.time)
  const proof = FraudProof.encode({
    kind: FraudProof.Kind.EQUIVOCATION,
    accused: first.author,
    first: first.envelope,
    second: second.envelope,
    evidence: [],
    createdAt: BigInt(createdAt)
  })
  return sealEnvelope(signer.privateKey, signer.peerId, DOMAIN.fraudProof, proof)
}

/**
 * Opens a fraud-proof envelope and re-checks its evidence.
 * Throws LedgerError ERR_LEDGER_FRAUD_PROOF; returns who is slashed.
 */
export async function verifyFraudProof (
  bytes: Uint8Array,
  opts: VerifyFraudProofOptions = {}
): Promise<VerifiedFraudProof> {
  let opened: OpenedEnvelope
  try {
    opened = await openEnvelopeAsync(bytes, {
      domain: DOMAIN.fraudProof,
      maxBytes: envelopeMaxBytes(MAX_BYTES.fraudProof)
    })
  } catch (err) {
    if (isEnvelopeError(err)) throw new LedgerError('ERR_LEDGER_FRAUD_PROOF', `fraud-proof envelope: ${err.message}`)
    throw err
  }
  if (opts.builder != null && opened.signer.toString() !== opts.builder) throw new LedgerError('ERR_LEDGER_FRAUD_PROOF', 'fraud proof signed by someone other than the entry author')
  let proof: FraudProof
  try {
    proof = decodeBounded(FraudProof, opened.payload, 'fraud proof', MAX_BYTES.fraudProof, LIMITS.fraudProof)
  } catch (err) {
    throw new LedgerError('ERR_LEDGER_FRAUD_PROOF', err instanceof Error ? err.message : String(err))
  }
  if (proof.kind === FraudProof.Kind.BAD_OUTPUT) {
    throw new LedgerError('ERR_LEDGER_FRAUD_PROOF', 'BAD_OUTPUT fraud proofs are not accepted (protocol v2): a bad output is one renter\'s word, counted by its receipt, never a slash')
  }
  if (proof.kind !== FraudProof.Kind.EQUIVOCATION) throw new LedgerError('ERR_LEDGER_FRAUD_PROOF', `unknown fraud proof kind ${String(proof.kind)}`)
  if (proof.evidence.length !== 0) throw new LedgerError('ERR_LEDGER_FRAUD_PROOF', 'an equivocation proof carries no evidence beyond its two entries')
  const accused = parseAuthor(proof.accused)
  if (accused == null) throw new LedgerError('ERR_LEDGER_FRAUD_PROOF', 'accused is not an Ed25519 peer id')
  const [first, second] = await Promise.all([embedded(proof.first, 'first'), embedded(proof.second, 'second')])
  if (first.authorId !== accused.id || second.authorId !== accused.id) throw new LedgerError('ERR_LEDGER_FRAUD_PROOF', 'equivocating entries are not both signed by the accused')
  if (first.seq !== second.seq) throw new LedgerError('ERR_LEDGER_FRAUD_PROOF', 'equivocating entries have different seqs')
  if (equals(first.hash, second.hash)) throw new LedgerError('ERR_LEDGER_FRAUD_PROOF', 'equivocating entries are the same entry')
  checkCreatedAt(Number(proof.createdAt), first, second, opts)
  return { kind: 'equivocation', accused: accused.id, proof }
}

/** created_at lies between the embedded entries (less the skew) and the carrying entry (plus the skew). */
function checkCreatedAt (
  createdAt: number,
  first: LedgerRecord,
  second: LedgerRecord,
  opts: VerifyFraudProofOptions
): void {
  const skew = opts.maxSkewMs ?? MAX_CLOCK_SKEW_MS
  if (!Number.isSafeInteger(createdAt) || createdAt <= 0) throw new LedgerError('ERR_LEDGER_FRAUD_PROOF', 'fraud proof has no created_at')
  const latest = Math.max(first.time, second.time)
  if (createdAt < latest - skew) throw new LedgerError('ERR_LEDGER_FRAUD_PROOF', `fraud proof created ${latest - createdAt} ms before the entries it embeds (bound ${skew} ms)`)
  if (opts.entryTime != null && createdAt > opts.entryTime + skew) {
    throw new LedgerError('ERR_LEDGER_FRAUD_PROOF', `fraud proof created ${createdAt - opts.entryTime} ms after the entry that carries it (bound ${skew} ms)`)
  }
}

async function embedded (bytes: Uint8Array, what: string): Promise<LedgerRecord> {
  try {
    return await openEntry(bytes)
  } catch (err) {
    if (isEntryError(err)) throw new LedgerError('ERR_LEDGER_FRAUD_PROOF', `${what} entry: ${err.message}`)
    throw err
  }
}
