/**
 * The renter's verdict on an attempt: the provider's attestation must verify against what the
 * renter knows (award, inputs, itself), its output digest is compared with what arrived, and
 * the renter signs a Receipt saying so, keeps both records beside the outputs and sends the
 * receipt back.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { equals } from 'uint8arrays/equals'
import { JobStatus, Receipt } from '../../../protocols/job.js'
import { toHex } from '../../common/index.js'
import { isRecordError, isStreamError, streamError } from '../errors.js'
import { openAttestation, receiptOutcome, signReceipt } from '../shared/records.js'
import type { RunReport } from './attempt-follow.js'
import { frameKind, type FrameChannel } from '../shared/job-stream.js'
import type { AttemptOutcome, AttemptResult, ReceiptAckState } from './attempt.js'
import type { Award } from '../../../protocols/market.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

const OUTCOME_NAME: Record<Receipt.Outcome, AttemptOutcome> = {
  [Receipt.Outcome.OUTCOME_UNSPECIFIED]: 'failed',
  [Receipt.Outcome.OK]: 'ok',
  [Receipt.Outcome.FAILED]: 'failed',
  [Receipt.Outcome.BAD_OUTPUT]: 'bad_output',
  [Receipt.Outcome.TIMEOUT]: 'timeout',
  [Receipt.Outcome.PREEMPTED]: 'preempted'
}

export interface VerifyContext {
  award: Award
  awardHash: Uint8Array
  provider: PeerId
  inputDigest: Uint8Array
  privateKey: Ed25519PrivateKey
  peerId: PeerId
}

/**
 * Checks the attestation and answers it with a signed receipt, filling in `result` (which
 * already holds what was received). A forged or mismatched attestation ends the attempt
 * `bad_attestation` with an Error frame and no receipt.
 */
export async function verifyAndReceipt (
  ch: FrameChannel,
  report: RunReport,
  result: AttemptResult,
  ctx: VerifyContext
): Promise<void> {
  const { award, provider } = ctx
  let attestation
  try {
    attestation = openAttestation(report.attestation, {
      provider,
      renter: ctx.peerId,
      jobId: award.jobId,
      awardHash: ctx.awardHash,
      inputDigest: ctx.inputDigest
    })
  } catch (err) {
    if (!isRecordError(err)) throw err
    result.outcome = 'bad_attestation'
    result.detail = err.message
    // one that verifies but answers another attempt is not a signature failure
    await ch.fail(streamError(err.reason === 'signature' ? 'BAD_SIGNATURE' : 'BAD_ATTESTATION', err.message))
    return
  }
  result.attestation = attestation
  await writeFile(join(result.dir, 'attestation.bin'), attestation.envelope)
  const match = equals(attestation.message.outputDigest, result.receivedDigest)
  const outcome = receiptOutcome(attestation.message.status, attestation.message.exitCode, match)
  result.endedAt = Date.now()
  const receipt = signReceipt(ctx.privateKey, ctx.peerId, {
    jobId: award.jobId,
    provider,
    attestationHash: attestation.hash,
    outcome,
    // Accepted to attestation, both as received here (protocols/README.md §7 "Verification")
    latencyMs: report.attestationAt - (result.acceptedAt ?? result.startedAt),
    pricePaidMicroUsd: award.clearingPriceMicroUsd,
    receivedOutputDigest: result.receivedDigest
  })
  result.receipt = receipt
  result.verified = match
  await writeFile(join(result.dir, 'receipt.bin'), receipt.envelope)
  result.outcome = OUTCOME_NAME[outcome]
  const status = report.result
  if (!match) result.detail = `outputs received (${toHex(result.receivedDigest).slice(0, 16)}…) do not match the attestation (${toHex(attestation.message.outputDigest).slice(0, 16)}…)`
  else if (status.status !== JobStatus.COMPLETED) result.detail = `job ${String(status.status).toLowerCase()} (exit ${status.exitCode ?? '?'})`
  await ch.send({ receipt: receipt.envelope })
  result.receiptAck = await awaitReceiptAck(ch, receipt.hash)
  await ch.close()
}

/**
 * The provider's answer to our receipt: 'acknowledged' (a ReceiptAck naming it), 'refused' (an
 * Error frame, e.g. BAD_RECEIPT) or 'none' (the stream ended or idled without one: providers
 * before the ack close without a word). The attempt's outcome does not depend on it.
 */
async function awaitReceiptAck (ch: FrameChannel, receiptHash: Uint8Array): Promise<ReceiptAckState> {
  try {
    const frame = await ch.next()
    if (frame == null) return { state: 'none' }
    if (frameKind(frame) !== 'receiptAck') return { state: 'refused', detail: `expected the receipt acknowledgement, got ${frameKind(frame)}` }
    const hash = frame.receiptAck?.receiptHash ?? new Uint8Array(0)
    if (!equals(hash, receiptHash)) return { state: 'refused', detail: 'the acknowledgement names another receipt' }
    return { state: 'acknowledged' }
  } catch (err: any) {
    if (isStreamError(err) && err.remote) return { state: 'refused', detail: err.message }
    return { state: 'none', detail: String(err?.message ?? err) }
  }
}
