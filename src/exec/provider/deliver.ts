/**
 * The provider's end of a run (deliverRun): stream the job's outputs back (hashing as it
 * reads), sign the attestation of what ran, and take the renter's receipt for it.
 */
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { join } from 'node:path'
import { JobStatus, Receipt, type Attestation, type FileEntry } from '../../../protocols/job.js'
import { fileSetDigest, listRegularFiles } from '../shared/digest.js'
import { ExecError, isRecordError, streamError } from '../errors.js'
import { CHUNK_BYTES, frameKind, withDeadline, type FrameChannel } from '../shared/job-stream.js'
import { noteFrame } from './slot-run.js'
import { openReceipt, signAttestation } from '../shared/records.js'
import { isCoded } from '../../common/index.js'
import type { VerifiedAward } from '../../market/index.js'
import type { RunOutcome, RunStatus } from '../runners/index.js'
import type { RenterAnswer, SlotRunEnd } from './slot-run.js'
import type { JobRecord } from './job-book.js'
import type { Lease } from './slot-lease.js'
import type { TelemetrySummary } from './telemetry.js'
import type { Signed } from '../../identity/index.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

const STATUS_TO_WIRE: Record<RunStatus, JobStatus> = {
  completed: JobStatus.COMPLETED,
  failed: JobStatus.FAILED,
  timeout: JobStatus.TIMEOUT,
  preempted: JobStatus.PREEMPTED
}

export function statusToWire (status: RunStatus): JobStatus {
  return STATUS_TO_WIRE[status]
}

/**
 * Streams every regular file under the output dir as OutputChunk frames, hashing as it
 * reads; returns the manifest. ExecError ERR_OUTPUT_LIMIT (before anything is sent) past the limits.
 */
export async function sendOutputs (
  ch: FrameChannel,
  dir: string,
  limits: { maxFiles: number, maxBytes: number }
): Promise<FileEntry[]> {
  const files = await listRegularFiles(dir, limits)
  const entries: FileEntry[] = []
  for (const file of files) {
    const hash = createHash('sha256')
    let offset = 0n
    for await (const piece of createReadStream(join(dir, file.path), { highWaterMark: CHUNK_BYTES })) {
      const data = piece as Buffer
      hash.update(data)
      await ch.sendChunk('outputChunk', file.path, offset, data)
      offset += BigInt(data.byteLength)
    }
    // an empty file is one empty chunk, else the renter never learns it exists
    if (offset === 0n) await ch.send({ outputChunk: { path: file.path, offset, data: new Uint8Array(0) } })
    entries.push({ path: file.path, size: offset, sha256: new Uint8Array(hash.digest()) })
  }
  return entries
}

export interface RunFacts {
  inputs: FileEntry[]
  outputs: FileEntry[]
  outcome: RunOutcome
  /** the run's status as attested (failed when its outputs could not be returned) */
  status: RunStatus
  /** every GPU of the run's lease, the first first */
  gpus: ReadonlyArray<{ uuid: string, driverVersion?: string, modelKey: string }>
  telemetry: TelemetrySummary
  preemptible: boolean
}

/** The provider's signed account of the run, for the renter and the provider's ledger. */
export function attestRun (key: Ed25519PrivateKey, me: PeerId, v: VerifiedAward, run: RunFacts): Signed<Attestation> {
  return signAttestation(key, me, {
    jobId: v.award.jobId,
    renter: v.renter,
    inputDigest: fileSetDigest(run.inputs),
    outputDigest: fileSetDigest(run.outputs),
    startedAt: run.outcome.startedAt,
    endedAt: run.outcome.endedAt,
    status: statusToWire(run.status),
    exitCode: run.outcome.exitCode,
    gpus: run.gpus.map(g => ({ uuid: g.uuid, driverVersion: g.driverVersion, model: g.modelKey })),
    telemetry: run.telemetry,
    awardHash: v.awardHash,
    preemptible: run.preemptible
  })
}

/**
 * The renter's receipt for `attestation`: its answer was read since the job started, and the
 * wait is bounded by `idleMs` from now. Undefined when the renter closed the stream without
 * one; ExecError ERR_JOB_STREAM when it sent something else or a receipt that does not verify.
 */
export async function awaitReceipt (
  renterNext: Promise<RenterAnswer>,
  idleMs: number,
  expect: { renter: PeerId, provider: PeerId, jobId: Uint8Array, attestation: Signed<Attestation> }
): Promise<Signed<Receipt> | undefined> {
  const answer = await withDeadline(renterNext, idleMs, () => streamError('IDLE_TIMEOUT', `no receipt within ${idleMs} ms`))
  if ('err' in answer) throw answer.err
  if (answer.frame == null) return undefined
  if (frameKind(answer.frame) !== 'receipt') throw streamError('PROTOCOL', 'expected the receipt')
  try {
    return openReceipt(answer.frame.receipt as Uint8Array, {
      renter: expect.renter,
      provider: expect.provider,
      jobId: expect.jobId,
      attestationHash: expect.attestation.hash
    })
  } catch (err: any) {
    // a receipt that verifies but answers something else is not a signature failure
    const code = isRecordError(err) && err.reason !== 'signature' ? 'BAD_RECEIPT' : 'BAD_SIGNATURE'
    throw streamError(code, err.message, { cause: err })
  }
}

/** An admitted attempt once its inputs are in: what running and delivering it need. */
export interface AdmittedAttempt {
  ch: FrameChannel
  verified: VerifiedAward
  /** the Start's manifest, every file now in the work dir's inputs/ */
  inputs: FileEntry[]
  workDir: string
  lease: Lease
  rec: JobRecord
}

export interface DeliveryContext {
  /** the node key: signs the attestation */
  key: Ed25519PrivateKey
  me: PeerId
  /** the lease's GPUs as the job service knows them (model, driver), the first first */
  gpus: ReadonlyArray<{ uuid: string, driverVersion?: string, modelKey: string }>
  outputLimits: { maxFiles: number, maxBytes: number }
  /** how long the renter's receipt may take */
  idleMs: number
  /** records the attestation in the provider's ledger; never fails the job */
  recordAttestation: (envelope: Uint8Array) => void
  /** keeps the job book's record of the attempt current */
  update: (rec: JobRecord) => void
}

/** Outputs (unless the renter is gone), the attestation (recorded in our ledger), then the receipt. */
export async function deliverRun (attempt: AdmittedAttempt, run: SlotRunEnd, ctx: DeliveryContext): Promise<void> {
  const { ch, verified: v, inputs, lease, rec } = attempt
  const outputDir = join(attempt.workDir, 'outputs')
  const connected = !run.renterGone && !run.sender.broken
  let outputs: FileEntry[] = []
  let status = run.outcome.status
  if (connected) {
    try {
      outputs = await sendOutputs(ch, outputDir, ctx.outputLimits)
    } catch (err) {
      if (!(isCoded(err, ExecError, 'ERR_OUTPUT_LIMIT'))) throw err
      status = 'failed'
      outputs = []
      await ch.send(noteFrame(`${err.message}; no outputs returned`))
    }
  }
  const me = ctx.me
  const attestation = attestRun(ctx.key, me, v, {
    inputs,
    outputs,
    outcome: run.outcome,
    status,
    gpus: ctx.gpus,
    telemetry: run.telemetry,
    preemptible: lease.preemptible
  })
  ctx.recordAttestation(attestation.envelope)
  rec.state = 'done'
  rec.status = status
  ctx.update(rec)
  if (!connected) {
    ch.abort()
    return
  }
  await ch.send({ result: { status: statusToWire(status), exitCode: run.outcome.exitCode, outputs } })
  await ch.send({ attestation: attestation.envelope })
  const receipt = await awaitReceipt(run.renterNext, ctx.idleMs, {
    renter: v.renter,
    provider: me,
    jobId: v.award.jobId,
    attestation
  })
  if (receipt == null) { ch.abort(); return }
  rec.receipt = Receipt.Outcome[receipt.message.outcome] ?? String(receipt.message.outcome)
  ctx.update(rec)
  // the positive answer: we hold this receipt (renters before the ack have closed already)
  await ch.send({ receiptAck: { receiptHash: receipt.hash } }).catch(() => {})
  await ch.close()
}
