/**
 * The signed execution records: the provider's Attestation (what ran, on what, with what
 * result) and the renter's Receipt (its verdict), as identity's Signed<T>: the decoded
 * message with the exact envelope bytes that were signed, which is what the ledger stores
 * and re-verifies.
 */
import { decodeBounded, MAX_BYTES, envelopeMaxBytes } from '../../../protocols/codec.js'
import { DOMAIN } from '../../../protocols/ids.js'
import { Attestation, JobStatus, Receipt } from '../../../protocols/job.js'
import { equals } from 'uint8arrays/equals'
import { openSigned, sealSigned, sha256, type Signed } from '../../identity/index.js'
import { isRecordError, recordError } from '../errors.js'
import type { TelemetrySummary } from '../provider/telemetry.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

export interface AttestationFields {
  jobId: Uint8Array
  renter: PeerId
  inputDigest: Uint8Array
  outputDigest: Uint8Array
  startedAt: number
  endedAt: number
  status: JobStatus
  exitCode: number
  /** every GPU the job ran on, the first of them first (at least one) */
  gpus: ReadonlyArray<{ uuid: string, driverVersion?: string, model: string }>
  telemetry: TelemetrySummary
  awardHash: Uint8Array
  preemptible: boolean
}

export function signAttestation (key: Ed25519PrivateKey, provider: PeerId, f: AttestationFields): Signed<Attestation> {
  const fingerprints = f.gpus.map(g => ({ uuidHash: sha256(g.uuid), driverVersion: g.driverVersion ?? '', model: g.model }))
  if (fingerprints.length === 0) throw recordError('malformed', 'an attestation names at least one GPU')
  const message: Attestation = {
    jobId: f.jobId,
    renter: f.renter.toMultihash().bytes,
    provider: provider.toMultihash().bytes,
    inputDigest: f.inputDigest,
    outputDigest: f.outputDigest,
    startedAt: BigInt(f.startedAt),
    endedAt: BigInt(f.endedAt),
    status: f.status,
    exitCode: f.exitCode,
    // `gpu` is the first, for readers from before `gpus`; `gpus` lists them all when there are several
    gpu: fingerprints[0],
    telemetry: { ...f.telemetry },
    awardHash: f.awardHash,
    preemptible: f.preemptible,
    gpus: fingerprints.length > 1 ? fingerprints : []
  }
  return sealSigned({ key, peerId: provider }, DOMAIN.attestation, Attestation.encode, message)
}

export interface AttestationExpectation {
  provider: PeerId
  renter: PeerId
  jobId: Uint8Array
  awardHash: Uint8Array
  inputDigest: Uint8Array
}

/** Verifies an attestation envelope from the network against what the renter knows. */
export function openAttestation (bytes: Uint8Array, expect: AttestationExpectation): Signed<Attestation> {
  const signed = openRecord(bytes, 'attestation', expect.provider, (payload) => decodeBounded(Attestation, payload, 'attestation', MAX_BYTES.attestation))
  const value = signed.message
  const check = (ok: boolean, reason: string, what: string): void => { if (!ok) throw recordError(reason, `attestation ${what}`) }
  check(equals(value.provider, expect.provider.toMultihash().bytes), 'provider', 'names another provider than its signer')
  check(equals(value.renter, expect.renter.toMultihash().bytes), 'renter', 'names another renter')
  check(equals(value.jobId, expect.jobId), 'job-id', 'is for another job')
  check(equals(value.awardHash, expect.awardHash), 'award', 'answers another award')
  check(equals(value.inputDigest, expect.inputDigest), 'input-digest', 'names other inputs than those sent')
  check(value.outputDigest.length === 32, 'malformed', 'has no output digest')
  check(value.status !== JobStatus.JOB_STATUS_UNSPECIFIED, 'malformed', 'has no status')
  return signed
}

/** Every GPU an attestation names: its `gpus`, or its one `gpu` (a 1-GPU job, or a provider from before `gpus`). */
export function attestedGpus (a: Pick<Attestation, 'gpu' | 'gpus'>): Attestation.GpuFingerprint[] {
  if (a.gpus.length > 0) return a.gpus
  return a.gpu == null ? [] : [a.gpu]
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

export function signReceipt (key: Ed25519PrivateKey, renter: PeerId, f: ReceiptFields): Signed<Receipt> {
  const message: Receipt = {
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
  return sealSigned({ key, peerId: renter }, DOMAIN.receipt, Receipt.encode, message)
}

/** Verifies a receipt envelope from the renter against the attestation it answers. */
export function openReceipt (
  bytes: Uint8Array,
  expect: { renter: PeerId, provider: PeerId, jobId: Uint8Array, attestationHash: Uint8Array }
): Signed<Receipt> {
  const signed = openRecord(bytes, 'receipt', expect.renter, (payload) => decodeBounded(Receipt, payload, 'receipt', MAX_BYTES.receipt))
  const value = signed.message
  const check = (ok: boolean, reason: string, what: string): void => { if (!ok) throw recordError(reason, `receipt ${what}`) }
  check(equals(value.renter, expect.renter.toMultihash().bytes), 'renter', 'names another renter than its signer')
  check(equals(value.provider, expect.provider.toMultihash().bytes), 'provider', 'names another provider')
  check(equals(value.jobId, expect.jobId), 'job-id', 'is for another job')
  check(equals(value.attestationHash, expect.attestationHash), 'attestation', 'answers another attestation')
  check(value.outcome !== Receipt.Outcome.OUTCOME_UNSPECIFIED, 'malformed', 'has no outcome')
  return signed
}

/**
 * Opens a record's envelope signed by `signer`: ExecError ERR_EXEC_RECORD 'signature' when it does
 * not verify, 'malformed' when its payload does not decode.
 */
function openRecord<T> (bytes: Uint8Array, what: 'attestation' | 'receipt', signer: PeerId, decode: (payload: Uint8Array) => T): Signed<T> {
  const decodeOrMalformed = (payload: Uint8Array): T => {
    try {
      return decode(payload)
    } catch (err: any) {
      throw recordError('malformed', err.message, { cause: err })
    }
  }
  try {
    return openSigned(bytes, {
      domain: DOMAIN[what],
      maxBytes: envelopeMaxBytes(MAX_BYTES[what]),
      signer,
      decode: decodeOrMalformed
    })
  } catch (err: any) {
    if (isRecordError(err)) throw err
    throw recordError('signature', `${what} does not verify: ${String(err?.message ?? err)}`, { cause: err })
  }
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
