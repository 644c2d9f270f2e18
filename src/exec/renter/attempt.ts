/**
 * The renter side of /idlegrid/job/1.0.0: one attempt ships the job to the award's winner,
 * follows its log and progress, saves its outputs, verifies its attestation and signs the
 * receipt. Each step lives in its own file (attempt-send, attempt-follow, attempt-verify);
 * the job's loop over attempts (failover, checkpoints) is the submit room's.
 */
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { decodeBounded, envelopeMaxBytes, LIMITS, MAX_BYTES } from '../../../protocols/codec.js'
import { SignedEnvelope } from '../../../protocols/envelope.js'
import { PROTOCOL } from '../../../protocols/ids.js'
import { JobRequest } from '../../../protocols/market.js'
import { judgeCacheClaim, openAward, peerIdFromBytes } from '../../market/index.js'
import { AttemptLog, followRun, OutputFiles } from './attempt-follow.js'
import { inputManifest, shipJob } from './attempt-send.js'
import { deadlineGraceMs, renterLimits, runDeadlineMs, type DiskBudget, type RenterLimits } from './attempt-limits.js'
import { verifyAndReceipt } from './attempt-verify.js'
import { fileSetDigest } from '../shared/digest.js'
import { isJobRejected, isRenterLimit, isStreamError, type JobStreamError, renterLimitError, streamError } from '../errors.js'
import { FrameChannel } from '../shared/job-stream.js'
import type { Signed } from '../../identity/index.js'
import type { Attestation, FileEntry, Receipt } from '../../../protocols/job.js'
import type { Ed25519PrivateKey, Libp2p, PeerId } from '@libp2p/interface'

export const RENTER_DEFAULTS = {
  /** dialing the provider and opening the stream */
  dialMs: 15_000,
  /** from InputEnd to Accepted/Rejected (the provider may wait for a bronze job to stop) */
  acceptMs: 60_000,
  /** longest silence while the job runs; the provider sends Progress every few seconds */
  idleMs: 30_000
} as const

export type { RenterLimits } from './attempt-limits.js'

/** An award the renter got from the market (already accepted by the winner). */
export interface AwardedJob {
  /** the Award SignedEnvelope bytes */
  award: Uint8Array
  /** the JobRequest SignedEnvelope bytes it answers */
  jobRequest: Uint8Array
  /**
   * what the winning bid claimed its input cache holds of the job's datasets (Bid.cached_bytes,
   * cached_datasets): checked against the Held frame (job/1.1.0), a shortfall is a `cache-overclaim`
   */
  cacheClaim?: { cachedBytes?: bigint, cachedDatasets: number }
}

export interface JobRuntime {
  /** docker image; none for the process runner */
  image?: string
  command: string[]
  env?: Record<string, string>
  timeoutMs: number
  /** shared memory (/dev/shm) for the job's container, MiB; none: the engine's default */
  shmSizeMiB?: number
}

export interface JobInput {
  /** relative path inside the job's inputs/ */
  path: string
  /** local file to send */
  file: string
  /** a provider's input cache may reuse it for any renter (open data, model weights); default: only for this renter */
  public?: boolean
}

export interface JobPayload {
  runtime: JobRuntime
  inputs: JobInput[]
  /** the inputs' manifest when already made (inputManifest): not hashed again per attempt */
  manifest?: ReadonlyArray<FileEntry & { file: string }>
}

export type AttemptOutcome = 'ok' | 'failed' | 'timeout' | 'preempted' | 'bad_output' | 'bad_attestation' | 'rejected' | 'lost'

export type JobEvent =
  | { type: 'attempt', attempt: number, provider: string, priceMicroUsd: number }
  /** totalBytes: what goes over the stream; cachedBytes: what the provider's input cache already held (not sent) */
  | { type: 'sending', attempt: number, sentBytes: number, totalBytes: number, cachedBytes?: number }
  /**
   * the provider's Held frame bore out less of the job's named datasets than its bid claimed
   * (market's judgeCacheClaim); the job goes on, the renter's market books the provider
   */
  | { type: 'cache-overclaim', attempt: number, provider: string, claimedBytes: number, heldBytes: number, claimedDatasets: number, heldDatasets: number }
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
  /** input bytes sent to the provider, and those its input cache already held (not sent) */
  inputs: { sentBytes: number, cachedBytes: number }
  receivedDigest: Uint8Array
  attestation?: Signed<Attestation>
  receipt?: Signed<Receipt>
  /** what the provider answered to our receipt (set once one was sent) */
  receiptAck?: ReceiptAckState
  /** the attestation verified and its output digest equals what was received */
  verified: boolean
  priceMicroUsd: bigint
  startedAt: number
  acceptedAt?: number
  firstLogAt?: number
  endedAt: number
}

/** The provider's answer to the receipt: a ReceiptAck naming it, an Error frame or the like, or nothing. */
export interface ReceiptAckState {
  state: 'acknowledged' | 'refused' | 'none'
  detail?: string
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
  /** the renter's limits on what the provider sends (RENTER_LIMITS where unset) */
  limits?: Partial<RenterLimits>
  /** bytes of log and outputs this attempt may still write, shared with the job's other attempts */
  disk?: DiskBudget
  onEvent?: (event: JobEvent) => void
  signal?: AbortSignal
}

/** One attempt: ship the job to the award's winner, collect its outputs, verify, sign the receipt. */
export async function runAttempt (
  awarded: AwardedJob,
  payload: JobPayload,
  opts: AttemptOptions
): Promise<AttemptResult> {
  const attempt = opts.attempt ?? 1
  const inputs = { sentBytes: 0, cachedBytes: 0 }
  const emit = (event: JobEvent): void => {
    if (event.type === 'sending') { inputs.sentBytes = event.sentBytes; inputs.cachedBytes = event.cachedBytes ?? 0 }
    try { opts.onEvent?.(event) } catch {}
  }
  const startedAt = Date.now()
  const { message: award, hash: awardHash } = openAward(awarded.award)
  const provider = peerIdFromBytes(award.winner)
  const outDir = join(opts.dir, 'outputs')
  await mkdir(outDir, { recursive: true })
  const result: AttemptResult = { attempt, provider: provider.toString(), outcome: 'lost', dir: opts.dir, outputs: [], inputs, receivedDigest: fileSetDigest([]), verified: false, priceMicroUsd: award.clearingPriceMicroUsd, startedAt, endedAt: startedAt }
  emit({ type: 'attempt', attempt, provider: result.provider, priceMicroUsd: Number(award.clearingPriceMicroUsd) })
  const manifest = payload.manifest ?? await inputManifest(payload.inputs)
  const limits = renterLimits(opts.limits)
  const outputs = new OutputFiles(outDir, limits, opts.disk)
  const received = (): void => {
    result.outputs = outputs.entries()
    result.receivedDigest = fileSetDigest(result.outputs)
  }
  let ch: FrameChannel | undefined
  try {
    // job/1.1.0 first: the provider then says what its input cache holds, and that is not sent
    const stream = await opts.libp2p
      .dialProtocol(provider, [PROTOCOL.jobCached, PROTOCOL.job], {
        signal: AbortSignal.any([
          AbortSignal.timeout(opts.dialMs ?? RENTER_DEFAULTS.dialMs),
          ...(opts.signal != null ? [opts.signal] : [])
        ])
      })
      .catch((err: Error) => {
        throw err.name === 'LimitedConnectionError' ? relayOnly(provider, err) : err
      })
    const idleMs = opts.idleMs ?? RENTER_DEFAULTS.idleMs
    ch = new FrameChannel(stream, { idleMs })
    opts.signal?.addEventListener('abort', () => { void ch?.fail(streamError('CANCELLED', 'renter cancelled')) }, { once: true })
    const jobRequest = readJobRequest(awarded.jobRequest)
    const claim = awarded.cacheClaim
    await shipJob(
      { ch, awarded, payload, manifest, attempt, emit },
      {
        acceptMs: opts.acceptMs ?? RENTER_DEFAULTS.acceptMs,
        stallMs: idleMs,
        askHeld: stream.protocol === PROTOCOL.jobCached,
        onHeld: claim == null || jobRequest == null
          ? undefined
          : (held) => {
              const verdict = judgeCacheClaim({ job: jobRequest, claim, manifest, held: held.digests })
              if (!verdict.overclaim) return
              const { claimedBytes, heldBytes, claimedDatasets, heldDatasets } = verdict
              emit({ type: 'cache-overclaim', attempt, provider: result.provider, claimedBytes, heldBytes, claimedDatasets, heldDatasets })
            }
      }
    )
    result.acceptedAt = Date.now()
    emit({ type: 'accepted', attempt, provider: result.provider })
    // the hard deadline: progress frames keep the stream alive, never past the job's time limit + grace + margin
    const noticeMs = jobRequest?.constraints?.minPreemptionNoticeMs ?? 0
    const deadlineMs = runDeadlineMs(payload.runtime.timeoutMs, limits, noticeMs)
    let timer: ReturnType<typeof setTimeout> | undefined
    const deadline = new Promise<never>((resolve, reject) => {
      timer = setTimeout(() => { reject(renterLimitError('deadline', `the provider was still running the job ${deadlineMs} ms after accepting it (time limit ${payload.runtime.timeoutMs} ms + grace ${deadlineGraceMs(limits, noticeMs)} ms + margin ${limits.deadlineMarginMs} ms)`)) }, deadlineMs)
    })
    const following = followRun(ch, { outputs, log: new AttemptLog(join(opts.dir, 'log.txt'), limits.maxLogBytes, opts.disk), attempt, emit, onFirstLog: () => { result.firstLogAt = Date.now() } })
    let report
    try {
      report = await Promise.race([following, deadline])
    } catch (err) {
      // stop the stream so the follower ends (it closes its file and flushes the log), then wait for it
      if (isRenterLimit(err) && err.limit === 'deadline') {
        await ch.fail(err)
        await following.catch(() => {})
      }
      throw err
    } finally {
      clearTimeout(timer)
    }
    received()
    await verifyAndReceipt(ch, report, result, {
      award,
      awardHash,
      provider,
      inputDigest: fileSetDigest(manifest),
      privateKey: opts.privateKey,
      peerId: opts.peerId
    })
    return result
  } catch (err: any) {
    if (isJobRejected(err)) {
      result.outcome = 'rejected'
      result.detail = `${err.reason}: ${err.message}`
      ch?.abort()
    } else {
      const streamErr = isStreamError(err) ? err : streamError('CANCELLED', String(err?.message ?? err), { cause: err })
      // a broken renter limit is bad output from this provider (the deadline: it is lost); either way the job moves on
      result.outcome = isRenterLimit(streamErr) && streamErr.limit !== 'deadline' ? 'bad_output' : 'lost'
      result.detail = isRenterLimit(streamErr) ? `limit ${streamErr.limit}: ${streamErr.message}` : `${streamErr.wireCode}: ${streamErr.message}`
      await ch?.fail(streamErr)
    }
    received()
    return result
  } finally {
    result.endedAt = Date.now()
    emit({ type: 'attempt-ended', attempt, provider: result.provider, outcome: result.outcome, detail: result.detail })
  }
}

/**
 * The job could not start because the provider is reachable only through a relay's limited
 * circuit (src/node/connectivity/relay.ts): bytes and time bounded by the relay, too little for a job.
 */
function relayOnly (provider: PeerId, cause: Error): JobStreamError {
  return streamError('CANCELLED', `provider ${provider.toString()} is reachable only through a relay's limited circuit, which does not carry job streams: the job needs a direct connection or a relay whose operator carries jobs (relay.unlimited) (${cause.message})`, { cause })
}

/**
 * The renter's own job request (its preemption notice, its named datasets), or undefined when it
 * cannot be read.
 */
function readJobRequest (jobRequest: Uint8Array): JobRequest | undefined {
  try {
    const envelope = decodeBounded(SignedEnvelope, jobRequest, 'job request envelope', envelopeMaxBytes(MAX_BYTES.jobRequest))
    return decodeBounded(JobRequest, envelope.payload, 'job request', MAX_BYTES.jobRequest, LIMITS.jobRequest)
  } catch {
    return undefined
  }
}
