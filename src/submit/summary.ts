/** What a job came to, as runJob returns it and as `submit --json` prints it. */
import type { AttemptOutcome } from '../exec/index.js'

export interface JobSummary {
  jobId: string
  /** the provider of the last attempt ('' when no award was had) */
  provider: string
  /** the last attempt's outcome, or 'no_award' */
  status: AttemptOutcome | 'no_award'
  outputDir: string
  attempts: number
  /** the last attempt's inputs: bytes sent, and bytes the provider's input cache already held (not sent) */
  inputs?: { sentBytes: number, cachedBytes: number }
  /** gpus: how many GPUs the attestation names (a multi-GPU job run by a provider from before `gpus` shows 1) */
  attestation?: { status: string, outputDigest: string, verified: boolean, gpus: number, envelope: Uint8Array }
  receipt?: { outcome: string, envelope: Uint8Array }
  history: Array<{ attempt: number, provider: string, outcome: AttemptOutcome, detail?: string, dir: string }>
  detail?: string
  /** ms from the first award to the first log line of the last attempt */
  firstLogMs?: number
  /** ms from the submit to the first bid of its first auction (absent when no bid came) */
  firstBidMs?: number
  /** what became of the job's receipts in the renter's ledger (absent when no receipt was signed) */
  ledger?: ReceiptLedger
}

/**
 * A receipt is the evidence its provider is paid and rated by: it counts once it is in the
 * renter's ledger feed and a peer holding that feed confirmed it (ledger flush).
 */
export interface ReceiptLedger {
  /** receipts signed for this job (one per attempt that got that far) */
  signed: number
  /** of them, written to the renter's feed */
  recorded: number
  /** the renter's feed seq of the last receipt written (0: none written) */
  seq: number
  /** why a receipt was not written */
  error?: string
  /** a peer holding the renter's feed confirmed it up to `seq` (false when nothing was written) */
  acknowledged: boolean
  /** the renter's feed up to this seq is held by the peers in `by` */
  acknowledgedSeq: number
  by: string[]
  /** when not acknowledged: why */
  note?: string
}

/** The summary as plain JSON (what `submit --json` prints). */
export function summaryJson (s: JobSummary): Record<string, unknown> {
  return {
    jobId: s.jobId,
    provider: s.provider,
    status: s.status,
    outputDir: s.outputDir,
    attempts: s.attempts,
    ...(s.inputs != null ? { inputs: s.inputs } : {}),
    attestation:
      s.attestation == null
        ? null
        : {
            status: s.attestation.status,
            outputDigest: s.attestation.outputDigest,
            verified: s.attestation.verified,
            gpus: s.attestation.gpus
          },
    receipt: s.receipt == null ? null : { outcome: s.receipt.outcome },
    history: s.history,
    ...(s.detail != null ? { detail: s.detail } : {}),
    ...(s.firstLogMs != null ? { firstLogMs: s.firstLogMs } : {}),
    ...(s.firstBidMs != null ? { firstBidMs: s.firstBidMs } : {}),
    ...(s.ledger != null ? { ledger: s.ledger } : {})
  }
}
