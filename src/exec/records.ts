/**
 * The signed execution records: the provider's Attestation (what ran, on what, with what
 * result) and the renter's Receipt (its verdict). Both are kept as the exact envelope bytes
 * that were signed, which is what the ledger stores and re-verifies.
 */
import { decodeBounded, MAX_BYTES, envelopeMaxBytes } from '../../protocols/codec.js'
import { DOMAIN } from '../../protocols/ids.js'
import { Attestation, JobStatus, Receipt } from '../../protocols/job.js'
import { messageHash, openEnvelope, sealEnvelope, sha256 } from '../identity/index.js'
import { bytesEqual } from './digest.js'
import type { TelemetrySummary } from './telemetry.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

export class RecordError extends Error {
  static readonly code = 'ERR_EXEC_RECORD'
  readonly code = RecordError.code
  /** which check failed, e.g. "signature", "job-id", "provider" */
  readonly reason: string

  constructor (reason: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'RecordError'
    this.reason = reason
  }
}

/** A signed record as it travels and as the ledger keeps it. */
export interface SignedRecord<T> {
  /** the SignedEnvelope bytes exactly as signed */
  envelope: Uint8Array
  /** the decoded payload */
  value: T
  /** message hash (protocols/README.md §4): what a receipt or ledger entry points at */
  hash: Uint8Array
}

export interface AttestationFields {
  jobId: Uint8Array
  renter: PeerId
  inputDigest: Uint8Array
  outputDigest: Uint8Array
  startedAt: number
  endedAt: number
  status: JobStatus
  exitCode: number
  gpu: { uuid: string, driverVersion?: string, model: string }
  telemetry: TelemetrySummary
  awardHash: Uint8Array
  preemptible: boolean
}

export function signAttestation (key: Ed25519PrivateKey, provider: PeerId, f: AttestationFields): SignedRecord<Attestation> {
  const value: Attestation = {
    jobId: f.jobId,
    renter: f.renter.toMultihash().bytes,
    provider: provider.toMultihash().bytes,
    inputDigest: f.inputDigest,
    outputDigest: f.outputDigest,
    startedAt: BigInt(f.startedAt),
    endedAt: BigInt(f.endedAt),
    status: f.status,
    exitCode: f.exitCode,
    gpu: { uuidHash: sha256(f.gpu.uuid), driverVersion: f.gpu.driverVersion ?? '', model: f.gpu.model },
    telemetry: { ...f.telemetry },
    awardHash: f.awardHash,
    preemptible: f.preemptible
  }
  const payload = Attestation.encode(value)
  return { envelope: sealEnvelope(key, provider, DOMAIN.attestation, payload), value, hash: messageHash(DOMAIN.attestation, payload) }
}

export interface AttestationExpectation {
  provider: PeerId
  renter: PeerId
  jobId: Uint8Array
  awardHash: Uint8Array
  inputDigest: Uint8Array
}

/** Verifies an attestation envelope from the network against what the renter knows. */
export function openAttestation (bytes: Uint8Array, expect: AttestationExpectation): SignedRecord<Attestation> {
  let opened
  try {
    opened = openEnvelope(bytes, { domain: DOMAIN.attestation, maxBytes: envelopeMaxBytes(MAX_BYTES.attestation), signer: expect.provider })
  } catch (err: any) {
    throw new RecordError('signature', `attestation does not verify: ${String(err?.message ?? err)}`, { cause: err })
  }
  let value: Attestation
  try {
    value = decodeBounded(Attestation, opened.payload, 'attestation', MAX_BYTES.attestation)
  } catch (err: any) {
    throw new RecordError('malformed', err.message, { cause: err })
  }
  const check = (ok: boolean, reason: string, what: string): void => { if (!ok) throw new RecordError(reason, `attestation ${what}`) }
  check(bytesEqual(value.provider, expect.provider.toMultihash().bytes), 'provider', 'names another provider than its signer')
  check(bytesEqual(value.renter, expect.renter.toMultihash().bytes), 'renter', 'names another renter')
  check(bytesEqual(value.jobId, expect.jobId), 'job-id', 'is for another job')
  check(bytesEqual(value.awardHash, expect.awardHash), 'award', 'answers another award')
  check(bytesEqual(value.inputDigest, expect.inputDigest), 'input-digest', 'names other inputs than those sent')
  check(value.outputDigest.length === 32, 'malformed', 'has no output digest')
  check(value.status !== JobStatus.JOB_STATUS_UNSPECIFIED, 'malformed', 'has no status')
  return { envelope: bytes, value, hash: messageHash(DOMAIN.attestation, opened.payload) }
}

export interface ReceiptFields {
  jobId: Uint8Array
  provider: PeerId
  attestationHash: Uint8Array
  outcome: Receipt.Outcome
  latencyMs: number
  pricePaidMicroUsd: bigint
  receivedOutputDigest: Uint8Array
  createdAt?: number
}

export function signReceipt (key: Ed25519PrivateKey, renter: PeerId, f: ReceiptFields): SignedRecord<Receipt> {
  const value: Receipt = {
    jobId: f.jobId,
    provider: f.provider.toMultihash().bytes,
    renter: renter.toMultihash().bytes,
    attestationHash: f.attestationHash,
    outcome: f.outcome,
    latencyMs: BigInt(Math.max(0, Math.round(f.latencyMs))),
    pricePaidMicroUsd: f.pricePaidMicroUsd,
    createdAt: BigInt(f.createdAt ?? Date.now()),
    receivedOutputDigest: f.receivedOutputDigest
  }
  const payload = Receipt.encode(value)
  return { envelope: sealEnvelope(key, renter, DOMAIN.receipt, payload), value, hash: messageHash(DOMAIN.receipt, payload) }
}

/** Verifies a receipt envelope from the renter against the attestation it answers. */
export function openReceipt (bytes: Uint8Array, expect: { renter: PeerId, provider: PeerId, jobId: Uint8Array, attestationHash: Uint8Array }): SignedRecord<Receipt> {
  let opened
  try {
    opened = openEnvelope(bytes, { domain: DOMAIN.receipt, maxBytes: envelopeMaxBytes(MAX_BYTES.receipt), signer: expect.renter })
  } catch (err: any) {
    throw new RecordError('signature', `receipt does not verify: ${String(err?.message ?? err)}`, { cause: err })
  }
  let value: Receipt
  try {
    value = decodeBounded(Receipt, opened.payload, 'receipt', MAX_BYTES.receipt)
  } catch (err: any) {
    throw new RecordError('malformed', err.message, { cause: err })
  }
  const check = (ok: boolean, reason: string, what: string): void => { if (!ok) throw new RecordError(reason, `receipt ${what}`) }
  check(bytesEqual(value.renter, expect.renter.toMultihash().bytes), 'renter', 'names another renter than its signer')
  check(bytesEqual(value.provider, expect.provider.toMultihash().bytes), 'provider', 'names another provider')
  check(bytesEqual(value.jobId, expect.jobId), 'job-id', 'is for another job')
  check(bytesEqual(value.attestationHash, expect.attestationHash), 'attestation', 'answers another attestation')
  check(value.outcome !== Receipt.Outcome.OUTCOME_UNSPECIFIED, 'malformed', 'has no outcome')
  return { envelope: bytes, value, hash: messageHash(DOMAIN.receipt, opened.payload) }
}

/** The receipt outcome for an attestation whose outputs did (or did not) match. */
export function receiptOutcome (status: JobStatus, exitCode: number, outputsMatch: boolean): Receipt.Outcome {
  if (!outputsMatch) return Receipt.Outcome.BAD_OUTPUT
  switch (status) {
    case JobStatus.COMPLETED: return exitCode === 0 ? Receipt.Outcome.OK : Receipt.Outcome.FAILED
    case JobStatus.TIMEOUT: return Receipt.Outcome.TIMEOUT
    case JobStatus.PREEMPTED: return Receipt.Outcome.PREEMPTED
    default: return Receipt.Outcome.FAILED
  }
}
