/**
 * The renter side of /idlegrid/job/1.0.0, and the loop that never loses a job: ship the job
 * to the awarded provider, show progress, save and verify its outputs, sign the receipt; when
 * the provider rejects, vanishes, stalls, preempts or returns outputs that do not match its
 * attestation, get a new award elsewhere (excluding it) and try again, a bounded number of
 * times, passing a preempted attempt's outputs along as a checkpoint.
 */
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, open, rename, rm, writeFile, appendFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { peerIdFromMultihash } from '@libp2p/peer-id'
import * as Digest from 'multiformats/hashes/digest'
import { PROTOCOL } from '../../protocols/ids.js'
import { JobFrame, JobStatus, Receipt, type Attestation, type FileEntry } from '../../protocols/job.js'
import { openAward } from '../market/index.js'
import { checkRelativePath, fileSetDigest, hashFile, sortEntries, toHex, bytesEqual } from './digest.js'
import { JobRejectedError, JobStreamError } from './errors.js'
import { FileSink } from './file-sink.js'
import { CHUNK_BYTES, FrameChannel, frameKind } from './job-stream.js'
import { RecordError, openAttestation, receiptOutcome, signReceipt, type SignedRecord } from './records.js'
import type { Ed25519PrivateKey, Libp2p, PeerId } from '@libp2p/interface'

const MiB = 1024 * 1024

export const RENTER_DEFAULTS = {
  /** dialing the provider and opening the stream */
  dialMs: 15_000,
  /** from InputEnd to Accepted/Rejected (the provider may wait for a bronze job to stop) */
  acceptMs: 60_000,
  /** longest silence while the job runs; the provider sends Progress every few seconds */
  idleMs: 30_000,
  maxOutputBytes: 4 * 1024 * MiB,
  maxAttempts: 3,
  /** log lines kept in memory per attempt for the summary (the file has them all) */
  tailLines: 20
} as const

/** An award the renter got from the market (already accepted by the winner). */
export interface AwardedJob {
  /** the Award SignedEnvelope bytes */
  award: Uint8Array
  /** the JobRequest SignedEnvelope bytes it answers */
  jobRequest: Uint8Array
}

export interface JobRuntime {
  /** docker image; none for the process runner */
  image?: string
  command: string[]
  env?: Record<string, string>
  timeoutMs: number
}

export interface JobInput {
  /** relative path inside the job's inputs/ */
  path: string
  /** local file to send */
  file: string
}

export interface JobPayload {
  runtime: JobRuntime
  inputs: JobInput[]
}

export type AttemptOutcome = 'ok' | 'failed' | 'timeout' | 'preempted' | 'bad_output' | 'bad_attestation' | 'rejected' | 'lost'

export type JobEvent =
  | { type: 'attempt', attempt: number, provider: string, priceMicroUsd: number }
  | { type: 'sending', attempt: number, sentBytes: number, totalBytes: number }
  | { type: 'accepted', attempt: number, provider: string }
  | { type: 'log', attempt: number, stream: 'stdout' | 'stderr', line: string }
  | { type: 'progress', attempt: number, elapsedMs: number }
  | { type: 'receiving', attempt: number, path: string, receivedBytes: number }
  | { type: 'attempt-ended', attempt: number, provider: string, outcome: AttemptOutcome, detail?: string }

export interface AttemptResult {
  attempt: number
  provider: string
  outcome: AttemptOutcome
  detail?: string
  /** where this attempt's outputs, log and records are */
  dir: string
  outputs: FileEntry[]
  receivedDigest: Uint8Array
  attestation?: SignedRecord<Attestation>
  receipt?: SignedRecord<Receipt>
  /** the attestation verified and its output digest equals what was received */
  verified: boolean
  priceMicroUsd: bigint
  startedAt: number
  acceptedAt?: number
  firstLogAt?: number
  endedAt: number
}

export interface AttemptOptions {
  libp2p: Pick<Libp2p, 'dialProtocol'>
  privateKey: Ed25519PrivateKey
  peerId: PeerId
  /** this attempt's directory: outputs/ and log.txt go there */
  dir: string
  attempt?: number
  dialMs?: number
  acceptMs?: number
  idleMs?: number
  maxOutputBytes?: number
  onEvent?: (event: JobEvent) => void
  signal?: AbortSignal
}

function peerFromBytes (bytes: Uint8Array): PeerId {
  return peerIdFromMultihash(Digest.decode(bytes))
}

/** The manifest of the payload's inputs, sorted by path, with sizes and sha256. */
export async function inputManifest (inputs: readonly JobInput[]): Promise<Array<FileEntry & { file: string }>> {
  const seen = new Set<string>()
  const out: Array<FileEntry & { file: string }> = []
  for (const input of inputs) {
    checkRelativePath(input.path)
    if (seen.has(input.path)) throw new JobStreamError('PROTOCOL', `input ${input.path} listed twice`)
    seen.add(input.path)
    out.push({ path: input.path, file: input.file, ...(await hashFile(input.file)) })
  }
  return sortEntries(out)
}

/** One attempt: ship the job to the award's winner, collect its outputs, verify, sign the receipt. */
export async function runAttempt (awarded: AwardedJob, payload: JobPayload, opts: AttemptOptions): Promise<AttemptResult> {
  const attempt = opts.attempt ?? 1
  const emit = (event: JobEvent): void => { try { opts.onEvent?.(event) } catch {} }
  const startedAt = Date.now()
  const { message: award, hash: awardHash } = openAward(awarded.award)
  const provider = peerFromBytes(award.winner)
  const outDir = join(opts.dir, 'outputs')
  await mkdir(outDir, { recursive: true })
  const logFile = join(opts.dir, 'log.txt')
  const result: AttemptResult = { attempt, provider: provider.toString(), outcome: 'lost', dir: opts.dir, outputs: [], receivedDigest: fileSetDigest([]), verified: false, priceMicroUsd: award.clearingPriceMicroUsd, startedAt, endedAt: startedAt }
  emit({ type: 'attempt', attempt, provider: result.provider, priceMicroUsd: Number(award.clearingPriceMicroUsd) })
  const manifest = await inputManifest(payload.inputs)
  const inputDigest = fileSetDigest(manifest)
  let ch: FrameChannel | undefined
  const logLines: string[] = []
  const flushLog = async (): Promise<void> => {
    if (logLines.length > 0) await appendFile(logFile, logLines.splice(0).join(''))
  }
  const received: FileEntry[] = []
  try {
    const stream = await opts.libp2p.dialProtocol(provider, PROTOCOL.job, { signal: AbortSignal.any([AbortSignal.timeout(opts.dialMs ?? RENTER_DEFAULTS.dialMs), ...(opts.signal != null ? [opts.signal] : [])]) })
    ch = new FrameChannel(stream, { idleMs: opts.idleMs ?? RENTER_DEFAULTS.idleMs })
    opts.signal?.addEventListener('abort', () => { void ch?.fail(new JobStreamError('CANCELLED', 'renter cancelled')) }, { once: true })
    const env = Object.entries(payload.runtime.env ?? {}).map(([key, value]) => ({ key, value }))
    await ch.send({
      start: {
        award: awarded.award,
        jobRequest: awarded.jobRequest,
        runtime: { image: payload.runtime.image ?? '', command: payload.runtime.command, env, timeoutMs: BigInt(payload.runtime.timeoutMs) },
        inputs: manifest.map(({ path, size, sha256 }) => ({ path, size, sha256 }))
      }
    })
    const totalBytes = manifest.reduce((sum, f) => sum + Number(f.size), 0)
    let sentBytes = 0
    let lastReport = 0
    for (const file of manifest) {
      let offset = 0n
      for await (const piece of createReadStream(file.file, { highWaterMark: CHUNK_BYTES })) {
        const data = piece as Buffer
        await ch.send({ inputChunk: { path: file.path, offset, data } })
        offset += BigInt(data.byteLength)
        sentBytes += data.byteLength
        if (Date.now() - lastReport > 500) { lastReport = Date.now(); emit({ type: 'sending', attempt, sentBytes, totalBytes }) }
      }
    }
    await ch.send({ inputEnd: {} })
    emit({ type: 'sending', attempt, sentBytes, totalBytes })

    const answer = await ch.next(opts.acceptMs ?? RENTER_DEFAULTS.acceptMs)
    if (answer == null) throw new JobStreamError('CANCELLED', 'provider closed the stream before accepting')
    const kind = frameKind(answer)
    if (kind === 'rejected') {
      const r = answer.rejected as JobFrame.Rejected
      throw new JobRejectedError(String(r.code), r.reason.slice(0, 512))
    }
    if (kind !== 'accepted') throw new JobStreamError('PROTOCOL', `expected Accepted, got ${kind}`)
    result.acceptedAt = Date.now()
    emit({ type: 'accepted', attempt, provider: result.provider })

    const maxOutputBytes = opts.maxOutputBytes ?? RENTER_DEFAULTS.maxOutputBytes
    let totalOut = 0
    let current: { path: string, handle: FileSink, hash: ReturnType<typeof createHash>, size: bigint } | undefined
    const closeCurrent = async (): Promise<void> => {
      if (current == null) return
      await current.handle.close()
      received.push({ path: current.path, size: current.size, sha256: new Uint8Array(current.hash.digest()) })
      current = undefined
    }
    let status: JobFrame.Result | undefined
    let attestationBytes: Uint8Array | undefined
    try {
      while (attestationBytes == null) {
        const frame = await ch.next()
        if (frame == null) throw new JobStreamError('CANCELLED', 'provider closed the stream before its attestation')
        const k = frameKind(frame)
        if (k === 'log') {
          const log = frame.log as JobFrame.Log
          const stream = log.stream === JobFrame.Log.Stream.STDERR ? 'stderr' : 'stdout'
          result.firstLogAt ??= Date.now()
          logLines.push(`${stream === 'stderr' ? 'E ' : '  '}${log.line}\n`)
          if (logLines.length >= 256) await flushLog()
          emit({ type: 'log', attempt, stream, line: log.line })
        } else if (k === 'progress') {
          emit({ type: 'progress', attempt, elapsedMs: Number(frame.progress?.elapsedMs ?? 0n) })
        } else if (k === 'outputChunk') {
          if (status != null) throw new JobStreamError('PROTOCOL', 'output chunk after Result')
          const chunk = frame.outputChunk as JobFrame.OutputChunk
          totalOut += chunk.data.byteLength
          if (totalOut > maxOutputBytes) throw new JobStreamError('OUTPUT_TOO_LARGE', `outputs exceed ${maxOutputBytes} bytes`)
          if (current?.path !== chunk.path) {
            await closeCurrent()
            try { checkRelativePath(chunk.path) } catch (err: any) { throw new JobStreamError('PROTOCOL', err.message) }
            if (received.some(f => f.path === chunk.path || f.path.startsWith(chunk.path + '/') || chunk.path.startsWith(f.path + '/'))) throw new JobStreamError('PROTOCOL', `output ${chunk.path} sent twice`)
            if (chunk.offset !== 0n) throw new JobStreamError('PROTOCOL', `output ${chunk.path} does not start at offset 0`)
            const path = join(outDir, chunk.path)
            await mkdir(dirname(path), { recursive: true })
            current = { path: chunk.path, handle: new FileSink(await open(path, 'wx')), hash: createHash('sha256'), size: 0n }
          }
          if (chunk.offset !== current.size) throw new JobStreamError('PROTOCOL', `output ${chunk.path} chunk at ${chunk.offset}, expected ${current.size}`)
          await current.handle.write(chunk.data)
          current.hash.update(chunk.data)
          current.size += BigInt(chunk.data.byteLength)
          emit({ type: 'receiving', attempt, path: chunk.path, receivedBytes: totalOut })
        } else if (k === 'result') {
          await closeCurrent()
          status = frame.result as JobFrame.Result
        } else if (k === 'attestation') {
          if (status == null) throw new JobStreamError('PROTOCOL', 'attestation before Result')
          attestationBytes = frame.attestation as Uint8Array
        } else {
          throw new JobStreamError('PROTOCOL', `unexpected ${k} frame while the job runs`)
        }
      }
    } finally {
      await current?.handle.close().catch(() => {})
      await flushLog().catch(() => {})
    }
    result.outputs = sortEntries(received)
    result.receivedDigest = fileSetDigest(received)
    let attestation: SignedRecord<Attestation>
    try {
      attestation = openAttestation(attestationBytes, { provider, renter: opts.peerId, jobId: award.jobId, awardHash, inputDigest })
    } catch (err) {
      if (err instanceof RecordError) {
        result.outcome = 'bad_attestation'
        result.detail = err.message
        await ch.fail(new JobStreamError('BAD_SIGNATURE', err.message))
        return result
      }
      throw err
    }
    result.attestation = attestation
    await writeFile(join(opts.dir, 'attestation.bin'), attestation.envelope)
    const match = bytesEqual(attestation.value.outputDigest, result.receivedDigest)
    const outcome = receiptOutcome(attestation.value.status, attestation.value.exitCode, match)
    result.endedAt = Date.now()
    const receipt = signReceipt(opts.privateKey, opts.peerId, {
      jobId: award.jobId,
      provider,
      attestationHash: attestation.hash,
      outcome,
      latencyMs: result.endedAt - (result.acceptedAt ?? startedAt),
      pricePaidMicroUsd: award.clearingPriceMicroUsd,
      receivedOutputDigest: result.receivedDigest
    })
    result.receipt = receipt
    result.verified = match
    await writeFile(join(opts.dir, 'receipt.bin'), receipt.envelope)
    result.outcome = OUTCOME_NAME[outcome]
    if (!match) result.detail = `outputs received (${toHex(result.receivedDigest).slice(0, 16)}…) do not match the attestation (${toHex(attestation.value.outputDigest).slice(0, 16)}…)`
    else if (status?.status !== JobStatus.COMPLETED) result.detail = `job ${String(status?.status).toLowerCase()} (exit ${status?.exitCode ?? '?'})`
    await ch.send({ receipt: receipt.envelope })
    await ch.close()
    return result
  } catch (err: any) {
    if (err instanceof JobRejectedError) {
      result.outcome = 'rejected'
      result.detail = `${err.reason}: ${err.message}`
      ch?.abort()
    } else {
      const streamErr = err instanceof JobStreamError ? err : new JobStreamError('CANCELLED', String(err?.message ?? err), { cause: err })
      result.outcome = 'lost'
      result.detail = `${streamErr.code}: ${streamErr.message}`
      await ch?.fail(streamErr)
    }
    result.outputs = sortEntries(received)
    result.receivedDigest = fileSetDigest(received)
    return result
  } finally {
    result.endedAt = Date.now()
    emit({ type: 'attempt-ended', attempt, provider: result.provider, outcome: result.outcome, detail: result.detail })
  }
}

const OUTCOME_NAME: Record<Receipt.Outcome, AttemptOutcome> = {
  [Receipt.Outcome.OUTCOME_UNSPECIFIED]: 'failed',
  [Receipt.Outcome.OK]: 'ok',
  [Receipt.Outcome.FAILED]: 'failed',
  [Receipt.Outcome.BAD_OUTPUT]: 'bad_output',
  [Receipt.Outcome.TIMEOUT]: 'timeout',
  [Receipt.Outcome.PREEMPTED]: 'preempted'
}

/** Outcomes that end the job: the job itself decided (it ran to the end, failed, or hit its limit). */
const FINAL: ReadonlySet<AttemptOutcome> = new Set(['ok', 'failed', 'timeout'])

/** Where the renter gets its next award: the market's auction, excluding providers that let this job down. */
export interface AwardSource {
  /** an award accepted by its winner, or a thrown error when none can be had */
  next(opts: { exclude: readonly string[], attempt: number, signal?: AbortSignal }): Promise<AwardedJob>
}

export interface RunJobOptions extends Omit<AttemptOptions, 'dir' | 'attempt'> {
  awards: AwardSource
  payload: JobPayload
  /** hex job id: the output dir's name */
  jobId: string
  /** default ./idlegrid-out */
  baseDir?: string
  maxAttempts?: number
  /** every receipt this renter signs (one per attempt that got as far), e.g. for the ledger */
  onReceipt?: (receipt: SignedRecord<Receipt>) => void
}

export interface JobSummary {
  jobId: string
  /** the provider of the last attempt ('' when no award was had) */
  provider: string
  /** the last attempt's outcome, or 'no_award' */
  status: AttemptOutcome | 'no_award'
  outputDir: string
  attempts: number
  attestation?: { status: string, outputDigest: string, verified: boolean, envelope: Uint8Array }
  receipt?: { outcome: string, envelope: Uint8Array }
  history: Array<{ attempt: number, provider: string, outcome: AttemptOutcome, detail?: string, dir: string }>
  detail?: string
  /** ms from the first award to the first log line of the last attempt */
  firstLogMs?: number
}

/**
 * Runs the job until one attempt ends on the job's own terms (ok, failed, timeout), or
 * `maxAttempts` are used. The final outputs, attestation and receipt are in
 * `<baseDir>/<jobId>/`; every attempt keeps its own directory under attempts/.
 */
export async function runJob (opts: RunJobOptions): Promise<JobSummary> {
  const jobDir = resolve(opts.baseDir ?? 'idlegrid-out', opts.jobId)
  await mkdir(jobDir, { recursive: true })
  const maxAttempts = Math.max(1, opts.maxAttempts ?? RENTER_DEFAULTS.maxAttempts)
  const exclude: string[] = []
  const history: JobSummary['history'] = []
  let payload = opts.payload
  let last: AttemptResult | undefined
  let noAward: string | undefined
  const firstAwardAt = Date.now()
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    let awarded: AwardedJob
    try {
      awarded = await opts.awards.next({ exclude, attempt, signal: opts.signal })
    } catch (err: any) {
      noAward = String(err?.message ?? err)
      break
    }
    const dir = join(jobDir, 'attempts', String(attempt))
    await rm(dir, { recursive: true, force: true })
    last = await runAttempt(awarded, payload, { ...opts, dir, attempt })
    if (last.receipt != null) opts.onReceipt?.(last.receipt)
    history.push({ attempt, provider: last.provider, outcome: last.outcome, detail: last.detail, dir })
    if (FINAL.has(last.outcome) || opts.signal?.aborted === true) break
    exclude.push(last.provider)
    if (last.outcome === 'preempted' && last.verified && last.outputs.length > 0) payload = withCheckpoint(opts.payload, last)
  }
  const summary: JobSummary = {
    jobId: opts.jobId,
    provider: last?.provider ?? '',
    status: last?.outcome ?? 'no_award',
    outputDir: jobDir,
    attempts: history.length,
    history,
    detail: last == null ? noAward : (FINAL.has(last.outcome) ? last.detail : `${last.detail ?? last.outcome}${noAward != null ? `; no further award: ${noAward}` : ''}`)
  }
  if (last != null) {
    // the last attempt's outputs become the job's; earlier ones stay under attempts/
    await rm(join(jobDir, 'outputs'), { recursive: true, force: true })
    await rename(join(last.dir, 'outputs'), join(jobDir, 'outputs')).catch(async () => { await mkdir(join(jobDir, 'outputs'), { recursive: true }) })
    if (last.attestation != null) {
      summary.attestation = { status: JobStatus[last.attestation.value.status] ?? String(last.attestation.value.status), outputDigest: toHex(last.attestation.value.outputDigest), verified: last.verified, envelope: last.attestation.envelope }
      await writeFile(join(jobDir, 'attestation.bin'), last.attestation.envelope)
    }
    if (last.receipt != null) {
      summary.receipt = { outcome: Receipt.Outcome[last.receipt.value.outcome] ?? String(last.receipt.value.outcome), envelope: last.receipt.envelope }
      await writeFile(join(jobDir, 'receipt.bin'), last.receipt.envelope)
    }
    if (last.firstLogAt != null) summary.firstLogMs = last.firstLogAt - firstAwardAt
  }
  await writeFile(join(jobDir, 'summary.json'), JSON.stringify(summaryJson(summary), null, 2) + '\n')
  return summary
}

/** The summary as plain JSON (what `submit --json` prints). */
export function summaryJson (s: JobSummary): Record<string, unknown> {
  return {
    jobId: s.jobId,
    provider: s.provider,
    status: s.status,
    outputDir: s.outputDir,
    attempts: s.attempts,
    attestation: s.attestation == null ? null : { status: s.attestation.status, outputDigest: s.attestation.outputDigest, verified: s.attestation.verified },
    receipt: s.receipt == null ? null : { outcome: s.receipt.outcome },
    history: s.history,
    ...(s.detail != null ? { detail: s.detail } : {}),
    ...(s.firstLogMs != null ? { firstLogMs: s.firstLogMs } : {})
  }
}

/** The next attempt gets the preempted attempt's outputs as inputs under checkpoint/. */
function withCheckpoint (payload: JobPayload, preempted: AttemptResult): JobPayload {
  const original = payload.inputs.filter(i => !i.path.startsWith('checkpoint/'))
  const checkpoint = preempted.outputs.map(o => ({ path: `checkpoint/${o.path}`, file: join(preempted.dir, 'outputs', o.path) }))
  if (original.length + checkpoint.length > 4096) return payload
  return { ...payload, inputs: [...original, ...checkpoint] }
}
