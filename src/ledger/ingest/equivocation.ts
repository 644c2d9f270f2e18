/**
 * What the ingest step does when an author signed two entries for one seq: builds the fraud
 * proof (entries/fraud.ts) into our own feed, one per accused, ever, and only within our proof
 * budget (quota.ts): what others send must not fill our own feed. Over the budget the
 * equivocation is reported but not slashed here: a slash is always backed by a stored proof
 * anyone can re-check; a later offer of the conflict, once the budget refilled, or another
 * node's proof slashes it.
 */

import { MAX_BYTES } from '../../../protocols/codec.js'
import { verifyOpenedAsync } from '../../identity/index.js'
import { decodeStoredBody } from '../entries/body.js'
import { decodeEntryEnvelope, LedgerEntry, sealEntry, type FraudProof, type LedgerRecord } from '../entries/entry.js'
import { buildEquivocationProof } from '../entries/fraud.js'
import { LedgerError } from '../errors.js'
import { ProofBudget, type ProofBudgetLimits } from './quota.js'
import type { Head } from '../store/store.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

export interface EquivocationProverOptions {
  /** our node key: signs the proofs and the entries of our feed that carry them */
  privateKey: Ed25519PrivateKey
  peerId: PeerId
  now: () => number
  budget?: Partial<ProofBudgetLimits>
}

export class EquivocationProver {
  private readonly opts: EquivocationProverOptions
  private readonly budget: ProofBudget

  constructor (opts: EquivocationProverOptions) {
    this.opts = opts
    this.budget = new ProofBudget(opts.now, opts.budget)
  }

  /**
   * The entry of our feed (after `selfHead`) that carries the proof of `held` and `record`,
   * or undefined when the proof budget has no room or the proof would be too large.
   */
  proofEntry (held: LedgerRecord, record: LedgerRecord, selfHead: Head | undefined): LedgerRecord | undefined {
    if (!this.budget.hasRoom()) return undefined
    const { privateKey, peerId, now } = this.opts
    const proofBytes = buildEquivocationProof({ privateKey, peerId }, held, record, now())
    if (proofBytes.byteLength > MAX_BYTES.ledgerFraudProofBody) return undefined
    const proof = sealEntry(privateKey, peerId, {
      seq: (selfHead?.seq ?? 0) + 1,
      prevHash: selfHead?.hash ?? new Uint8Array(0),
      // not below our previous entry, nor below the proof's own created_at
      time: Math.max(now(), selfHead?.time ?? 0, held.time, record.time),
      kind: LedgerEntry.BodyKind.FRAUD_PROOF,
      body: proofBytes
    })
    return this.budget.take(proof.envelope.byteLength) ? proof : undefined
  }
}

export function decodeProof (record: LedgerRecord): FraudProof {
  const body = decodeStoredBody(record)
  if (body.kind !== 'fraud-proof') throw new LedgerError('ERR_LEDGER_MALFORMED', 'not a fraud proof entry')
  return body.proof.message
}

/** Whether an entry's own envelope signature verifies (a stored entry may have come in under a later one's). */
export async function ownSignatureVerifies (record: LedgerRecord): Promise<boolean> {
  try {
    return await verifyOpenedAsync(decodeEntryEnvelope(record.envelope))
  } catch {
    return false
  }
}
