/**
 * The provider side of /idlegrid/job/1.0.0: checks the award, receives the inputs into a
 * fresh work dir, places the job on a GPU slot (preempting bronze work for gold/silver),
 * runs it, streams its log and outputs, signs the attestation and takes the renter's receipt.
 */
import { randomBytes } from 'node:crypto'
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, open, rm, lstat, readdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { PROTOCOL } from '../../protocols/ids.js'
import { JobFrame, JobStatus, type Attestation, type FileEntry, type Receipt } from '../../protocols/job.js'
import { AwardCheckError, openAward, verifyAwardForWinner, type VerifiedAward } from '../market/index.js'
import { ConditionMonitor, type ConditionOptions } from './conditions.js'
import { bytesEqual, checkRelativePath, fileSetDigest, toHex, MAX_PATH_CHARS } from './digest.js'
import { JobStreamError, RunnerError } from './errors.js'
import { FileSink } from './file-sink.js'
import { CHUNK_BYTES, FrameChannel, frameKind } from './job-stream.js'
import { openReceipt, signAttestation, type SignedRecord } from './records.js'
import { SlotScheduler, type CapacityView, type Lease, type SchedulerGpu, type Tier } from './scheduler.js'
import { TelemetrySampler, type TelemetryRead, type TelemetrySummary } from './telemetry.js'
import type { Runner, RunOutcome, RunSpec, RunStatus } from './runners/index.js'
import type { ComponentLogger, Ed25519PrivateKey, IncomingStreamData, Logger, PeerId, PrivateKey, Startable } from '@libp2p/interface'
import type { Registrar } from '@libp2p/interface-internal'

const KiB = 1024
const MiB = 1024 * KiB

export const EXEC_DEFAULTS = {
  maxInputBytes: 4 * 1024 * MiB,
  maxOutputBytes: 4 * 1024 * MiB,
  maxFiles: 4096,
  /** longest silence between frames the provider waits for while receiving */
  idleMs: 30_000,
  /** how often a running job's stream carries a Progress frame */
  keepaliveMs: 5_000,
  /** a Start must arrive this soon after the stream opens */
  startMs: 10_000,
  /** longest wait for a displaced bronze job to stop, beyond its grace */
  slotWaitExtraMs: 10_000,
  maxJobMs: 24 * 60 * 60_000
} as const

/** A GPU the provider runs jobs on: one slot each. */
export interface ExecGpu extends SchedulerGpu {
  /** normalised model, e.g. "h100-80gb" */
  modelKey: string
  driverVersion?: string
}

export interface ExecServiceInit {
  runner: Runner
  gpus: readonly ExecGpu[]
  /** where job work dirs are made (each job gets a fresh one, removed afterwards) */
  workRoot: string
  /** SIGTERM-to-SIGKILL notice for preempted or timed-out jobs (default 10 s) */
  graceMs?: number
  maxInputBytes?: number
  maxOutputBytes?: number
  idleMs?: number
  keepaliveMs?: number
  /** the provider's max job length, ms */
  maxJobMs?: number
  /** telemetry of the GPUs (readGpuTelemetry); none: attestations carry no samples */
  telemetry?: { read?: TelemetryRead, intervalMs?: number }
  /** availability windows and thermal/power limits that pause the scheduler */
  conditions?: ConditionOptions
  /**
   * Run only awards this provider accepted over the accept protocol (the market calls
   * noteAccepted). Default true; tests of this layer alone may turn it off.
   */
  requireAccepted?: boolean
  /** keep work dirs after the run (debugging) */
  keepWorkDirs?: boolean
  /** a scheduler shared with the bid engine (default: one of its own over `gpus`) */
  scheduler?: SlotScheduler
  /**
   * name of the market provider service in the node; its onAccepted hook feeds noteAccepted
   * (default "marketProvider"; absent: awards are noted only through noteAccepted)
   */
  marketService?: string
}

interface AcceptedSource {
  onAccepted(listener: (job: { award: { envelope: Uint8Array } }) => void): () => void
}

export interface ExecComponents {
  peerId: PeerId
  privateKey: PrivateKey
  registrar: Registrar
  logger: ComponentLogger
}

/** Every attempt this provider answered, for status and tests. */
export interface JobRecord {
  attemptKey: string
  jobId: string
  renter: string
  tier: Tier
  state: 'receiving' | 'waiting-slot' | 'running' | 'sending' | 'done' | 'rejected'
  status?: RunStatus
  exitCode?: number
  gpuIndex?: number
  startedAt?: number
  endedAt?: number
  rejected?: string
}

export interface AttestationEvent { attestation: SignedRecord<Attestation>, jobId: string, renter: PeerId }
export interface ReceiptEvent { receipt: SignedRecord<Receipt>, attestation: SignedRecord<Attestation>, jobId: string, renter: PeerId }

const STATUS_TO_WIRE: Record<RunStatus, JobStatus> = {
  completed: JobStatus.COMPLETED,
  failed: JobStatus.FAILED,
  timeout: JobStatus.TIMEOUT,
  preempted: JobStatus.PREEMPTED
}

class Rejection extends Error {
  constructor (readonly code: JobFrame.Rejected.Code, message: string) {
    super(message)
    this.name = 'Rejection'
  }
}

/** A job this provider runs: the libp2p service. */
export class JobExecService implements Startable {
  readonly scheduler: SlotScheduler
  /** 'attestation' (CustomEvent<AttestationEvent>), 'receipt' (CustomEvent<ReceiptEvent>), 'job' (CustomEvent<JobRecord>) */
  readonly events = new EventTarget()
  private readonly init: ExecServiceInit
  private readonly components: ExecComponents
  private readonly log: Logger
  private readonly accepted = new Map<string, number>()
  private readonly answered = new Map<string, number>()
  private readonly jobs = new Map<string, JobRecord>()
  private readonly live = new Set<{ cancel: (why: string) => void }>()
  private readonly monitor?: ConditionMonitor
  private started = false
  private unhookMarket?: () => void

  constructor (components: ExecComponents, init: ExecServiceInit) {
    this.components = components
    this.init = init
    this.log = components.logger.forComponent('idlegrid:exec')
    this.scheduler = init.scheduler ?? new SlotScheduler({ gpus: init.gpus, graceMs: init.graceMs })
    if (init.conditions != null) this.monitor = new ConditionMonitor(this.scheduler, init.conditions)
  }

  async start (): Promise<void> {
    await mkdir(this.init.workRoot, { recursive: true })
    await this.components.registrar.handle(PROTOCOL.job, (data) => { this.handle(data) }, {
      maxInboundStreams: 2 * this.init.gpus.length + 4,
      maxOutboundStreams: 1
    })
    // the market accepts awards over its own protocol; the job stream runs only those
    let market: AcceptedSource | undefined
    try {
      market = (this.components as unknown as Record<string, unknown>)[this.init.marketService ?? 'marketProvider'] as AcceptedSource | undefined
    } catch {} // libp2p's components throw for a service that is not there
    if (typeof market?.onAccepted === 'function') this.unhookMarket = market.onAccepted(job => { this.noteAccepted(job.award.envelope) })
    this.monitor?.start()
    this.started = true
  }

  async stop (): Promise<void> {
    this.started = false
    this.monitor?.stop()
    this.unhookMarket?.()
    await this.components.registrar.unhandle(PROTOCOL.job)
    for (const job of this.live) job.cancel('provider shutting down')
  }

  /** The market calls this when it accepts an award over the accept protocol. */
  noteAccepted (awardEnvelope: Uint8Array): void {
    try {
      const { message: award, hash } = openAward(awardEnvelope)
      this.accepted.set(toHex(hash), Number(award.expiresAt))
      this.prune(this.accepted)
    } catch (err) {
      this.log('ignoring an accepted award that does not open: %e', err)
    }
  }

  /** Capacity for the bid engine: free and preemptible slots, and whether bidding is paused. */
  capacity (): CapacityView {
    return this.scheduler.capacity()
  }

  onAttestation (handler: (event: AttestationEvent) => void): () => void {
    return this.listen('attestation', handler)
  }

  onReceipt (handler: (event: ReceiptEvent) => void): () => void {
    return this.listen('receipt', handler)
  }

  /** Attempts answered, most recent last (bounded). */
  jobList (): JobRecord[] {
    return [...this.jobs.values()]
  }

  controlHandlers (): Record<string, () => Promise<unknown>> {
    return {
      'exec.jobs': async () => ({ runner: this.init.runner.kind, capacity: this.capacity(), slots: this.scheduler.slotsView(), jobs: this.jobList() })
    }
  }

  private listen<T> (name: string, handler: (event: T) => void): () => void {
    const fn = (evt: Event): void => {
      try { handler((evt as CustomEvent<T>).detail) } catch (err) { this.log('%s handler failed: %e', name, err) }
    }
    this.events.addEventListener(name, fn)
    return () => { this.events.removeEventListener(name, fn) }
  }

  private emit (name: string, detail: unknown): void {
    this.events.dispatchEvent(new CustomEvent(name, { detail }))
  }

  private prune (map: Map<string, number>): void {
    const now = Date.now()
    for (const [key, until] of map) if (until < now) map.delete(key)
    while (map.size > 10_000) map.delete(map.keys().next().value as string)
  }

  private record (rec: JobRecord): void {
    this.jobs.delete(rec.attemptKey)
    this.jobs.set(rec.attemptKey, rec)
    while (this.jobs.size > 256) this.jobs.delete(this.jobs.keys().next().value as string)
    this.emit('job', { ...rec })
  }

  private handle ({ stream, connection }: IncomingStreamData): void {
    const ch = new FrameChannel(stream, { idleMs: this.init.idleMs ?? EXEC_DEFAULTS.idleMs })
    this.session(ch, connection.remotePeer).catch(err => { this.log.error('job stream from %p failed: %e', connection.remotePeer, err) })
  }

  private async session (ch: FrameChannel, remote: PeerId): Promise<void> {
    let workDir: string | undefined
    let lease: Lease | undefined
    let rec: JobRecord | undefined
    try {
      const first = await ch.next(EXEC_DEFAULTS.startMs)
      if (first == null) return
      if (frameKind(first) !== 'start') throw new JobStreamError('PROTOCOL', 'the first frame must be Start')
      const start = first.start as JobFrame.Start
      let verified: VerifiedAward
      try {
        verified = this.checkStart(start, remote)
      } catch (err) {
        if (err instanceof Rejection) { await this.reject(ch, err, undefined); return }
        throw err
      }
      rec = { attemptKey: verified.attemptKey, jobId: verified.jobIdHex, renter: verified.renter.toString(), tier: verified.tier, state: 'receiving' }
      this.answered.set(verified.attemptKey, Date.now() + 24 * 60 * 60_000)
      this.prune(this.answered)
      this.record(rec)
      workDir = join(this.init.workRoot, `${verified.jobIdHex}-${verified.award.attempt}-${randomBytes(4).toString('hex')}`)
      await mkdir(join(workDir, 'inputs'), { recursive: true })
      await mkdir(join(workDir, 'outputs'), { recursive: true })
      let inputs: FileEntry[]
      try {
        inputs = await this.receiveInputs(ch, start.inputs, join(workDir, 'inputs'))
      } catch (err) {
        if (err instanceof Rejection) { await this.reject(ch, err, rec); return }
        throw err
      }
      const placed = this.scheduler.reserve({ key: verified.attemptKey, tier: verified.tier, minNoticeMs: verified.jobRequest.constraints?.minPreemptionNoticeMs })
      if ('refused' in placed) { await this.reject(ch, new Rejection(JobFrame.Rejected.Code.NO_CAPACITY, placed.detail), rec); return }
      lease = placed
      rec.state = 'waiting-slot'
      this.record(rec)
      await this.waitForSlot(lease)
      await this.run(ch, verified, start.runtime as JobFrame.Runtime, inputs, workDir, lease, rec)
    } catch (err: any) {
      const streamErr = err instanceof JobStreamError ? err : new JobStreamError('INTERNAL', 'provider error', { cause: err })
      if (!(err instanceof JobStreamError)) this.log.error('job session error: %e', err)
      else this.log('job stream from %p ended: %s %s', remote, streamErr.code, streamErr.message)
      await ch.fail(streamErr)
    } finally {
      lease?.release()
      if (workDir != null && this.init.keepWorkDirs !== true) await rm(workDir, { recursive: true, force: true }).catch(() => {})
    }
  }

  private checkStart (start: JobFrame.Start, remote: PeerId): VerifiedAward {
    let verified: VerifiedAward
    try {
      verified = verifyAwardForWinner(start.award, start.jobRequest, this.components.peerId)
    } catch (err) {
      if (err instanceof AwardCheckError) throw new Rejection(JobFrame.Rejected.Code[err.rejection], err.message)
      throw err
    }
    if (!verified.renter.equals(remote)) throw new Rejection(JobFrame.Rejected.Code.NOT_AWARDED, 'the stream does not come from the job\'s renter')
    if (this.init.requireAccepted !== false && !this.accepted.has(toHex(verified.awardHash))) {
      throw new Rejection(JobFrame.Rejected.Code.NOT_AWARDED, 'this provider did not accept that award')
    }
    if (this.answered.has(verified.attemptKey)) throw new Rejection(JobFrame.Rejected.Code.OTHER, 'this award attempt was already started')
    if (!this.started) throw new Rejection(JobFrame.Rejected.Code.OTHER, 'provider is shutting down')
    const runtime = start.runtime
    if (runtime == null) throw new Rejection(JobFrame.Rejected.Code.POLICY, 'Start has no runtime')
    const timeoutMs = Number(runtime.timeoutMs)
    // a longer limit than the provider's max job length is cut to it (the bid already checked the estimate)
    if (timeoutMs <= 0) throw new Rejection(JobFrame.Rejected.Code.POLICY, 'the job has no time limit')
    try {
      this.init.runner.check(this.runSpec(verified, runtime, '/nonexistent'))
    } catch (err: any) {
      throw new Rejection(JobFrame.Rejected.Code.POLICY, err instanceof RunnerError ? err.message : 'runtime not allowed')
    }
    const maxInputBytes = this.init.maxInputBytes ?? EXEC_DEFAULTS.maxInputBytes
    let total = 0n
    const seen = new Set<string>()
    for (const entry of start.inputs) {
      try { checkRelativePath(entry.path) } catch (err: any) { throw new Rejection(JobFrame.Rejected.Code.INPUT_MISMATCH, err.message) }
      if (seen.has(entry.path)) throw new Rejection(JobFrame.Rejected.Code.INPUT_MISMATCH, `input ${entry.path} listed twice`)
      // a file and a directory of the same name cannot both exist
      for (const other of seen) if (other.startsWith(entry.path + '/') || entry.path.startsWith(other + '/')) throw new Rejection(JobFrame.Rejected.Code.INPUT_MISMATCH, `input ${entry.path} clashes with ${other}`)
      seen.add(entry.path)
      if (entry.sha256.length !== 32) throw new Rejection(JobFrame.Rejected.Code.INPUT_MISMATCH, `input ${entry.path} has no sha256`)
      total += entry.size
    }
    if (total > BigInt(maxInputBytes)) throw new Rejection(JobFrame.Rejected.Code.INPUT_TOO_LARGE, `inputs of ${total} bytes exceed this provider's ${maxInputBytes}`)
    const can = this.scheduler.canAccept({ tier: verified.tier, minNoticeMs: verified.jobRequest.constraints?.minPreemptionNoticeMs })
    if ('refused' in can) throw new Rejection(JobFrame.Rejected.Code.NO_CAPACITY, can.detail)
    return verified
  }

  private runSpec (v: VerifiedAward, runtime: JobFrame.Runtime, workDir: string, gpu?: ExecGpu): RunSpec {
    const env: Record<string, string> = {}
    for (const { key, value } of runtime.env) env[key] = value
    return {
      jobId: v.jobIdHex,
      workDir,
      command: runtime.command,
      image: runtime.image === '' ? undefined : runtime.image,
      env,
      timeoutMs: Math.min(Number(runtime.timeoutMs), this.init.maxJobMs ?? EXEC_DEFAULTS.maxJobMs),
      graceMs: Math.max(this.scheduler.graceMs, v.jobRequest.constraints?.minPreemptionNoticeMs ?? 0),
      gpu: gpu == null ? undefined : { index: gpu.index, uuid: gpu.uuid, simulated: gpu.simulated }
    }
  }

  private async reject (ch: FrameChannel, rejection: Rejection, rec: JobRecord | undefined): Promise<void> {
    this.log('rejecting job: %s %s', JobFrame.Rejected.Code[rejection.code] ?? rejection.code, rejection.message)
    if (rec != null) {
      rec.state = 'rejected'
      rec.rejected = rejection.message
      this.record(rec)
    }
    try {
      await ch.send({ rejected: { code: rejection.code, reason: rejection.message.slice(0, 512) } })
      await ch.close()
    } catch {
      ch.abort()
    }
  }

  /** Reads InputChunks until InputEnd, writing each manifest file in order and checking it. */
  private async receiveInputs (ch: FrameChannel, manifest: FileEntry[], dir: string): Promise<FileEntry[]> {
    const maxInputBytes = this.init.maxInputBytes ?? EXEC_DEFAULTS.maxInputBytes
    let index = 0
    let offset = 0n
    let total = 0
    let handle: FileSink | undefined
    let hash = createHash('sha256')
    const finishFile = async (): Promise<void> => {
      const entry = manifest[index] as FileEntry
      await handle?.close()
      handle = undefined
      if (offset !== entry.size || !bytesEqual(new Uint8Array(hash.digest()), entry.sha256)) {
        throw new Rejection(JobFrame.Rejected.Code.INPUT_MISMATCH, `input ${entry.path} does not match its size or sha256`)
      }
      index++
      offset = 0n
      hash = createHash('sha256')
    }
    const openFile = async (entry: FileEntry): Promise<FileSink> => {
      const path = join(dir, entry.path)
      await mkdir(dirname(path), { recursive: true })
      return new FileSink(await open(path, 'wx', 0o644))
    }
    try {
      while (true) {
        const frame = await ch.next()
        if (frame == null) throw new JobStreamError('CANCELLED', 'renter closed the stream while sending inputs')
        const kind = frameKind(frame)
        if (kind === 'inputEnd') break
        if (kind !== 'inputChunk') throw new JobStreamError('PROTOCOL', `unexpected ${kind} frame while receiving inputs`)
        const chunk = frame.inputChunk as JobFrame.InputChunk
        total += chunk.data.byteLength
        if (total > maxInputBytes) throw new JobStreamError('INPUT_TOO_LARGE', `inputs exceed ${maxInputBytes} bytes`)
        // an empty file has no chunks: move past complete files to the one this chunk is for
        while (index < manifest.length && (manifest[index] as FileEntry).path !== chunk.path && offset === (manifest[index] as FileEntry).size) {
          if (handle == null) handle = await openFile(manifest[index] as FileEntry)
          await finishFile()
        }
        const entry = manifest[index]
        if (entry == null || entry.path !== chunk.path) throw new JobStreamError('PROTOCOL', `input chunk for ${chunk.path.slice(0, MAX_PATH_CHARS)} out of manifest order`)
        if (chunk.offset !== offset) throw new JobStreamError('PROTOCOL', `input chunk for ${entry.path} at offset ${chunk.offset}, expected ${offset}`)
        if (offset + BigInt(chunk.data.byteLength) > entry.size) throw new Rejection(JobFrame.Rejected.Code.INPUT_MISMATCH, `input ${entry.path} is longer than its manifest size`)
        if (handle == null) handle = await openFile(entry)
        await handle.write(chunk.data)
        hash.update(chunk.data)
        offset += BigInt(chunk.data.byteLength)
      }
      while (index < manifest.length) {
        if (handle == null) handle = await openFile(manifest[index] as FileEntry)
        await finishFile()
      }
      return manifest
    } finally {
      await handle?.close().catch(() => {})
    }
  }

  private async waitForSlot (lease: Lease): Promise<void> {
    const maxWait = this.scheduler.graceMs + EXEC_DEFAULTS.slotWaitExtraMs
    let timer: NodeJS.Timeout | undefined
    try {
      await Promise.race([lease.ready, new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => { reject(new JobStreamError('INTERNAL', `slot not free within ${maxWait} ms`)) }, maxWait)
      })])
    } finally {
      clearTimeout(timer)
    }
  }

  private async run (ch: FrameChannel, v: VerifiedAward, runtime: JobFrame.Runtime, inputs: FileEntry[], workDir: string, lease: Lease, rec: JobRecord): Promise<void> {
    const gpu = this.init.gpus.find(g => g.index === lease.gpu.index) as ExecGpu
    const spec = this.runSpec(v, runtime, workDir, gpu)
    await ch.send({ accepted: { at: BigInt(Date.now()) } })
    const acceptedAt = Date.now()
    rec.state = 'running'
    rec.gpuIndex = gpu.index
    rec.startedAt = acceptedAt
    this.record(rec)
    const sampler = new TelemetrySampler({ gpuIndex: gpu.index, simulated: gpu.simulated, read: gpu.simulated ? undefined : this.init.telemetry?.read, intervalMs: this.init.telemetry?.intervalMs })
    sampler.start()
    // log frames keep their order and the stream's backpressure; sending failures end the run
    let sending: Promise<void> = Promise.resolve()
    let streamBroken = false
    const enqueue = (frame: JobFrame): void => {
      sending = sending.then(async () => { if (!streamBroken) await ch.send(frame) }).catch(() => { streamBroken = true })
    }
    const handle = this.init.runner.start(spec, line => {
      enqueue({ log: { stream: line.stream === 'stderr' ? JobFrame.Log.Stream.STDERR : JobFrame.Log.Stream.STDOUT, line: line.line, at: BigInt(line.at) } })
    })
    const job = { cancel: (why: string) => { handle.cancel(why) } }
    this.live.add(job)
    lease.onPreempt(notice => {
      this.log('preempting job %s (%s): %d ms notice', v.attemptKey, notice.detail, notice.graceMs)
      enqueue({ log: { stream: JobFrame.Log.Stream.STDERR, line: `[idlegrid: ${notice.detail}; SIGTERM now, SIGKILL in ${notice.graceMs} ms]`, at: BigInt(Date.now()) } })
      handle.preempt(notice.graceMs, notice.detail)
    })
    const keepalive = setInterval(() => {
      enqueue({ progress: { at: BigInt(Date.now()), elapsedMs: BigInt(Date.now() - acceptedAt) } })
    }, this.init.keepaliveMs ?? EXEC_DEFAULTS.keepaliveMs)
    // the renter sends nothing until its receipt: anything earlier means it went away
    const renterWait = spec.timeoutMs + spec.graceMs + 60 * 60_000
    const renterNext = ch.next(renterWait).then(frame => ({ frame }), (err: unknown) => ({ err }))
    let renterGone = false
    void renterNext.then(() => {
      if (rec.state === 'running') {
        renterGone = true
        handle.cancel('renter went away')
      }
    })
    let outcome: RunOutcome
    let telemetry: TelemetrySummary
    try {
      outcome = await handle.done
    } finally {
      clearInterval(keepalive)
      this.live.delete(job)
      telemetry = await sampler.stop()
    }
    rec.state = 'sending'
    rec.status = outcome.status
    rec.exitCode = outcome.exitCode
    rec.endedAt = outcome.endedAt
    this.record(rec)
    lease.release()
    this.log('job %s ended %s (exit %d)%s', v.attemptKey, outcome.status, outcome.exitCode, outcome.detail != null ? `: ${outcome.detail}` : '')
    if (outcome.detail != null && outcome.status !== 'completed') enqueue({ log: { stream: JobFrame.Log.Stream.STDERR, line: `[idlegrid: ${outcome.detail}]`, at: BigInt(Date.now()) } })
    await sending

    let outputs: FileEntry[] = []
    let status = outcome.status
    if (!renterGone && !streamBroken) {
      try {
        outputs = await this.sendOutputs(ch, join(workDir, 'outputs'))
      } catch (err) {
        if (!(err instanceof OutputLimitError)) throw err
        status = 'failed'
        outputs = []
        await ch.send({ log: { stream: JobFrame.Log.Stream.STDERR, line: `[idlegrid: ${err.message}; no outputs returned]`, at: BigInt(Date.now()) } })
      }
    }
    const attestation = signAttestation(this.components.privateKey as Ed25519PrivateKey, this.components.peerId, {
      jobId: v.award.jobId,
      renter: v.renter,
      inputDigest: fileSetDigest(inputs),
      outputDigest: fileSetDigest(outputs),
      startedAt: outcome.startedAt,
      endedAt: outcome.endedAt,
      status: STATUS_TO_WIRE[status],
      exitCode: outcome.exitCode,
      gpu: { uuid: gpu.uuid, driverVersion: gpu.driverVersion, model: gpu.modelKey },
      telemetry,
      awardHash: v.awardHash,
      preemptible: lease.preemptible
    })
    this.emit('attestation', { attestation, jobId: v.jobIdHex, renter: v.renter } satisfies AttestationEvent)
    rec.state = 'done'
    rec.status = status
    this.record(rec)
    if (renterGone || streamBroken) {
      ch.abort()
      return
    }
    await ch.send({ result: { status: STATUS_TO_WIRE[status], exitCode: outcome.exitCode, outputs } })
    await ch.send({ attestation: attestation.envelope })
    // the receipt: the read started during the run; bound the wait from now
    const idleMs = this.init.idleMs ?? EXEC_DEFAULTS.idleMs
    let timer: NodeJS.Timeout | undefined
    const answer = await Promise.race([renterNext, new Promise<{ err: unknown }>(resolve => {
      timer = setTimeout(() => { resolve({ err: new JobStreamError('IDLE_TIMEOUT', `no receipt within ${idleMs} ms`) }) }, idleMs)
    })])
    clearTimeout(timer)
    if ('err' in answer) throw answer.err
    if (answer.frame == null) { ch.abort(); return }
    if (frameKind(answer.frame) !== 'receipt') throw new JobStreamError('PROTOCOL', 'expected the receipt')
    let receipt: SignedRecord<Receipt>
    try {
      receipt = openReceipt(answer.frame.receipt as Uint8Array, { renter: v.renter, provider: this.components.peerId, jobId: v.award.jobId, attestationHash: attestation.hash })
    } catch (err: any) {
      throw new JobStreamError('BAD_SIGNATURE', err.message, { cause: err })
    }
    this.emit('receipt', { receipt, attestation, jobId: v.jobIdHex, renter: v.renter } satisfies ReceiptEvent)
    await ch.close()
  }

  /** Streams every regular file under the output dir, hashing as it reads; returns the manifest. */
  private async sendOutputs (ch: FrameChannel, dir: string): Promise<FileEntry[]> {
    const maxOutputBytes = this.init.maxOutputBytes ?? EXEC_DEFAULTS.maxOutputBytes
    const files = await listRegularFiles(dir, EXEC_DEFAULTS.maxFiles, maxOutputBytes)
    const entries: FileEntry[] = []
    for (const file of files) {
      const hash = createHash('sha256')
      let offset = 0n
      for await (const piece of createReadStream(join(dir, file.path), { highWaterMark: CHUNK_BYTES })) {
        const data = piece as Buffer
        hash.update(data)
        await ch.send({ outputChunk: { path: file.path, offset, data } })
        offset += BigInt(data.byteLength)
      }
      entries.push({ path: file.path, size: offset, sha256: new Uint8Array(hash.digest()) })
    }
    return entries
  }
}

export class OutputLimitError extends Error {
  static readonly code = 'ERR_OUTPUT_LIMIT'
  readonly code = OutputLimitError.code
  constructor (message: string) {
    super(message)
    this.name = 'OutputLimitError'
  }
}

/** Regular files under `dir` (no symlinks: a job must not point outputs at the provider's files), by path. */
async function listRegularFiles (dir: string, maxFiles: number, maxBytes: number): Promise<Array<{ path: string, size: number }>> {
  const out: Array<{ path: string, size: number }> = []
  let total = 0
  const walk = async (abs: string, rel: string, depth: number): Promise<void> => {
    if (depth > 32) return
    const names = (await readdir(abs).catch(() => [] as string[])).sort()
    for (const name of names) {
      const childRel = rel === '' ? name : `${rel}/${name}`
      const stat = await lstat(join(abs, name))
      if (stat.isDirectory()) await walk(join(abs, name), childRel, depth + 1)
      else if (stat.isFile() && childRel.length <= MAX_PATH_CHARS && !name.includes('\\')) {
        out.push({ path: childRel, size: stat.size })
        total += stat.size
        if (out.length > maxFiles) throw new OutputLimitError(`the job wrote more than ${maxFiles} output files`)
        if (total > maxBytes) throw new OutputLimitError(`the job wrote more than ${maxBytes} bytes of outputs`)
      }
    }
  }
  await walk(dir, '', 0)
  return out.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)))
}

/** The provider's job service, in the libp2p factory pattern. */
export function jobExecService (init: ExecServiceInit): (components: ExecComponents) => JobExecService {
  return (components) => new JobExecService(components, init)
}
