/**
 * When a renter's receipt counts for reputation (protocols/README.md §7, "Receipt rules").
 * A receipt is the renter's word about the provider's attestation; it may only say what the
 * attestation and the renter's own received outputs allow, else reputation ignores it:
 *
 *   BAD_OUTPUT  only with a received output digest that differs from the attested one
 *   otherwise   the outputs matched, so the outcome is the attestation's own (exactly what
 *               an honest renter signs, src/exec/shared/records.ts receiptOutcome): OK only for
 *               COMPLETED with exit code 0, FAILED for another exit code or FAILED, TIMEOUT
 *               for TIMEOUT, PREEMPTED only for PREEMPTED
 *   time        the receipt entry is not dated before the attestation entry it answers, less
 *               the clock-skew bound
 *
 * Pure functions of the two facts, so every node decides the same.
 */

import { MAX_CLOCK_SKEW_MS } from '../../../protocols/codec.js'
import { JobStatus, Receipt } from '../../../protocols/job.js'

/** What reputation needs of an attestation to judge a receipt for it. */
export interface AttestedRun {
  status: JobStatus
  exitCode: number
  /** the attested output digest, hex */
  outputDigest: string
  /** time of the (earliest) ledger entry carrying the attestation */
  entryTime: number
}

/** What reputation needs of a receipt to judge it. */
export interface ReceiptClaim {
  outcome: Receipt.Outcome
  /** the digest of the outputs the renter received, hex ('' when it says none) */
  receivedOutputDigest: string
  /** time of the ledger entry carrying the receipt */
  time: number
}

/** The outcome an honest renter signs for a run whose outputs it received as attested. */
export function attestedOutcome (status: JobStatus, exitCode: number): Receipt.Outcome {
  switch (status) {
    case JobStatus.COMPLETED: return exitCode === 0 ? Receipt.Outcome.OK : Receipt.Outcome.FAILED
    case JobStatus.TIMEOUT: return Receipt.Outcome.TIMEOUT
    case JobStatus.PREEMPTED: return Receipt.Outcome.PREEMPTED
    default: return Receipt.Outcome.FAILED
  }
}

export type ReceiptVerdict = 'counts' | 'outcome-contradicts-attestation' | 'bad-output-without-differing-digest' | 'dated-before-attestation'

/** Whether `receipt` may count for `attestation` (the pairing by hash, renter and job is the caller's). */
export function judgeReceipt (
  attestation: AttestedRun,
  receipt: ReceiptClaim,
  maxSkewMs = MAX_CLOCK_SKEW_MS
): ReceiptVerdict {
  if (receipt.time < attestation.entryTime - maxSkewMs) return 'dated-before-attestation'
  if (receipt.outcome === Receipt.Outcome.BAD_OUTPUT) {
    const differs =
      receipt.receivedOutputDigest.length > 0 && receipt.receivedOutputDigest !== attestation.outputDigest
    return differs ? 'counts' : 'bad-output-without-differing-digest'
  }
  return receipt.outcome === attestedOutcome(attestation.status, attestation.exitCode) ? 'counts' : 'outcome-contradicts-attestation'
}
