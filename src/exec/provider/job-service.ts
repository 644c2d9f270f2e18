/**
 * The provider side of /idlegrid/job/1.0.0 as a libp2p service: checks the award, receives
 * the inputs into a fresh work dir, places the job on a GPU slot (preempting bronze work for
 * gold/silver), runs it, streams its log and outputs, signs the attestation (and records it
 * in the ledger) and takes the renter's receipt. Each step lives in its own file; this one
 * holds the session that strings them together.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { serviceCapabilities, serviceDependencies } from '@libp2p/interface'
import { PROTOCOL } from '../../../protocols/ids.js'
import { JobFrame } from '../../../protocols/job.js'
import { toHex } from '../../common/index.js'
import { LEDGER_CAPABILITY, LEDGER_SERVICE } from '../../ledger/index.js'
import { MARKET_PROVIDER_CAPABILITY, MARKET_PROVIDER_SERVICE, openAward, type VerifiedAward } from '../../market/index.js'
import { admitStart, declaredInputBytes, DiskBudget, jobRunSpec, type Admitted } from './admission.js'
import { ConditionMonitor } from './conditions.js'
import { deliverRun, type AdmittedAttempt } from './deliver.js'
import { isStartDecline, isStreamError, startDecline, type StartDecline, streamError } from '../errors.js'
import { JobBook, type JobRecord } from './job-book.js'
import { maxInputBytes, maxOutputBytes, maxSlotsPerRenter, receiveLimits, runLimits } from './job-limits.js'
import { defaultDiskBudgetBytes, EXEC_CAPABILITY, EXEC_DEFAULTS, type ExecComponents, type ExecGpu, type ExecServiceInit } from './job-service-init.js'
import { FrameChannel, frameKind, withDeadline } from '../shared/job-stream.js'
import { holdCachedInputs, keepReceivedInputs, placeHeldInputs, receiveInputs } from './receive-inputs.js'
import { SlotScheduler, type CapacityView } from './scheduler.js'
import type { Lease } from './slot-lease.js'
import { noteFrame, runOnSlot, type LiveJob } from './slot-run.js'
import type { LeaseRunHooks } from './lease-host.js'
import type { Holding } from '../../cache/index.js'
import type { RunSpec, ServiceNetwork } from '../runners/index.js'
import type { Ed25519PrivateKey, IncomingStreamData, Logger, PeerId, Startable } from '@libp2p/interface'
import { CONTROL_HANDLERS } from '../../control/index.js'

/** How long a stopping provider waits for its cancelled jobs to end before it lets go of the runner's helpers. */
const STOP_JOBS_WAIT_MS = 10_000
/** Longest an accepted award holds a slot waiting for its Start (the renter sends it right after the accept). */
const PROMISE_MS = 15_000

/** A job this provider runs: the libp2p service. */
export class JobExecService implements Startable {
  readonly [Symbol.toStringTag] = '@idlegrid/exec'
  readonly [serviceCapabilities]: string[] = [EXEC_CAPABILITY]
  readonly [serviceDependencies]: string[] = [LEDGER_CAPABILITY, MARKET_PROVIDER_CAPABILITY]
  private readonly scheduler: SlotScheduler
  private readonly init: ExecServiceInit
  private readonly components: ExecComponents
  private readonly log: Logger
  private readonly book = new JobBook()
  private readonly disk: DiskBudget
  private readonly live = new Set<LiveJob>()
  private readonly monitor?: ConditionMonitor
  private started = false
  private unhookMarket?: () => void

  constructor (components: ExecComponents, init: ExecServiceInit) {
    this.components = components
    this.init = init
    this.log = components.logger.forComponent('idlegrid:exec')
    this.scheduler = init.scheduler ?? new SlotScheduler({ gpus: init.gpus, graceMs: init.graceMs })
    this.disk = init.disk ?? new DiskBudget(init.diskBudgetBytes ?? defaultDiskBudgetBytes(init))
    if (init.conditions != null) this.monitor = new ConditionMonitor(this.scheduler, init.conditions)
  }

  async start (): Promise<void> {
    if (this.init.runner.prepareWorkRoot != null) await this.init.runner.prepareWorkRoot(this.init.workRoot)
    else await mkdir(this.init.workRoot, { recursive: true, mode: 0o700 })
    this.init.runner.open?.()
    await this.init.inputCache?.load()
    const streams = { maxInboundStreams: 2 * this.init.gpus.length + 4, maxOutboundStreams: 1 }
    await this.components.registrar.handle(PROTOCOL.job, (data) => { this.handle(data) }, streams)
    await this.components.registrar.handle(PROTOCOL.jobCached, (data) => { this.handle(data) }, streams)
    // the market accepts awards over its own protocol; the job stream runs only those
    this.unhookMarket = this.components[MARKET_PROVIDER_SERVICE].onAccepted(job => {
      this.noteAccepted(job.award.envelope)
    })
    this.monitor?.start()
    this.started = true
  }

  async stop (): Promise<void> {
    this.started = false
    this.monitor?.stop()
    this.unhookMarket?.()
    await this.components.registrar.unhandle(PROTOCOL.job)
    await this.components.registrar.unhandle(PROTOCOL.jobCached)
    const ending = [...this.live].map(job => { job.cancel('provider shutting down'); return job.done })
    // the runner's helpers (its launcher: docker kill, inspect, rm) go once the cancelled jobs are
    // stopped and cleaned up, or after a bound: a shutdown must not hang on a stuck engine
    await withDeadline(Promise.allSettled(ending), STOP_JOBS_WAIT_MS, () => new Error('jobs still ending')).catch(() => {})
    this.init.runner.close?.()
    await this.init.inputCache?.close()
  }

  /** The market calls this when it accepts an award over the accept protocol. */
  noteAccepted (awardEnvelope: Uint8Array): void {
    try {
      const { message: award, hash, signer } = openAward(awardEnvelope)
      this.book.accept(toHex(hash), Number(award.expiresAt))
      // the slot is held for this award until its Start comes (the renter sends it at once)
      this.scheduler.promise(
        toHex(hash),
        toHex(signer.toMultihash().bytes),
        Math.min(Number(award.expiresAt), Date.now() + PROMISE_MS)
      )
    } catch (err) {
      this.log('ignoring an accepted award that does not open: %e', err)
    }
  }

  /** Capacity for the bid engine: free and preemptible slots, and whether bidding is paused. */
  capacity (): CapacityView {
    return this.scheduler.capacity()
  }

  /** Attempts answered, most recent last (bounded). */
  jobList (): JobRecord[] {
    return this.book.list()
  }

  [CONTROL_HANDLERS] (): Record<string, () => Promise<unknown>> {
    return {
      'exec.jobs': async () => ({ runner: this.init.runner.kind, capacity: this.capacity(), disk: { usedBytes: this.disk.used(), budgetBytes: this.disk.budgetBytes }, inputCache: this.init.inputCache?.stats(), maxSlotsPerRenter: maxSlotsPerRenter(this.init), slots: this.scheduler.slotsView(), jobs: this.jobList() })
    }
  }

  private handle ({ stream, connection }: IncomingStreamData): void {
    const ch = new FrameChannel(stream, { idleMs: this.init.idleMs ?? EXEC_DEFAULTS.idleMs })
    this.session(ch, connection.remotePeer, stream.protocol === PROTOCOL.jobCached).catch(err => { this.log.error('job stream from %p failed: %e', connection.remotePeer, err) })
  }

  /** One job stream: Start, inputs, a slot, the run, outputs, attestation, receipt. */
  private async session (ch: FrameChannel, remote: PeerId, answersHeld: boolean): Promise<void> {
    let workDir: string | undefined
    let holding: Holding | undefined
    let lease: Lease | undefined
    let rec: JobRecord | undefined
    let diskKey: string | undefined
    try {
      const first = await ch.next(EXEC_DEFAULTS.startMs)
      if (first == null) return
      const startedAt = Date.now()
      if (frameKind(first) !== 'start') throw streamError('PROTOCOL', 'the first frame must be Start')
      const start = first.start as JobFrame.Start
      // the award, the runtime, the manifest, then a slot and disk, all before any input byte is read
      const admitted = await this.declining(ch, undefined, () => this.admit(start, remote))
      if (admitted == null) return
      const verified = admitted.verified
      lease = admitted.lease
      diskKey = verified.attemptKey
      rec = { attemptKey: verified.attemptKey, jobId: verified.jobIdHex, renter: verified.renter.toString(), tier: verified.tier, state: 'receiving', gpuIndex: lease.gpu.index }
      this.book.update(rec)
      const dir = await this.makeWorkDir(verified)
      workDir = dir
      // a gold/silver job displacing this (bronze) one before it runs takes the slot at once
      let displaced: StartDecline | undefined
      let stopReceiving: (why: StartDecline) => void = () => {}
      const stop = new Promise<never>((_resolve, reject) => { stopReceiving = reject })
      stop.catch(() => {})
      lease.onPreempt(notice => {
        displaced = startDecline(JobFrame.Rejected.Code.NO_CAPACITY, `${notice.detail} before it started`)
        admitted.lease.release()
        stopReceiving(displaced)
      })
      // job/1.1.0: what the input cache holds for this renter is not sent again
      const renterKey = toHex(verified.renter.toMultihash().bytes)
      if (answersHeld && start.inputs.length > 0) {
        holding = await holdCachedInputs(this.init.inputCache, renterKey, start.inputs, this.log)
        await ch.send({ held: { sha256: [...holding.digests].map(hex => Uint8Array.from(Buffer.from(hex, 'hex'))) } })
      }
      const held = holding?.digests
      const toReceive =
        held == null || held.size === 0 ? start.inputs : start.inputs.filter(f => !held.has(toHex(f.sha256)))
      const limits = receiveLimits(this.init, toReceive, startedAt)
      const received = await this.declining(ch, rec, async () => await receiveInputs(ch, { manifest: toReceive, dir: join(dir, 'inputs'), limits, stop }))
      if (received == null) return
      if (displaced != null) { await this.decline(ch, displaced, rec); return }
      await placeHeldInputs(this.init.inputCache, start.inputs, holding, join(dir, 'inputs'))
      holding?.release()
      await keepReceivedInputs(this.init.inputCache, renterKey, received, join(dir, 'inputs'))
      const inputs = start.inputs
      // from here a notice waits for the run (runOnSlot passes it on as SIGTERM)
      lease.offPreempt()
      // only now, its inputs all here, may a gold/silver job make a bronze one stop
      lease.claim()
      rec.state = 'waiting-slot'
      this.book.update(rec)
      await this.waitForSlot(lease)
      await this.runAndDeliver({ ch, verified, inputs, workDir: dir, lease, rec }, start.runtime as JobFrame.Runtime)
    } catch (err: any) {
      const streamErr = isStreamError(err) ? err : streamError('INTERNAL', 'provider error', { cause: err })
      if (!isStreamError(err)) this.log.error('job session error: %e', err)
      else this.log('job stream from %p ended: %s %s', remote, streamErr.wireCode, streamErr.message)
      await ch.fail(streamErr)
    } finally {
      holding?.release()
      lease?.release()
      if (workDir != null && this.init.keepWorkDirs !== true) {
        await rm(workDir, { recursive: true, force: true }).catch(() => {})
      }
      // the job's disk is free once its work dir is gone (or kept on purpose)
      if (diskKey != null) this.disk.release(diskKey)
    }
  }

  /** Runs a step; an ERR_START_DECLINED it throws is answered with a Rejected frame and gives undefined. */
  private async declining<T> (
    ch: FrameChannel,
    rec: JobRecord | undefined,
    step: () => T | Promise<T>
  ): Promise<T | undefined> {
    try {
      return await step()
    } catch (err) {
      if (!isStartDecline(err)) throw err
      await this.decline(ch, err, rec)
      return undefined
    }
  }

  /** The start-time declines (admission.ts: admitStart) against this provider's state now. */
  private admit (start: JobFrame.Start, remote: PeerId): Admitted {
    return admitStart(start, remote, {
      me: this.components.peerId,
      scheduler: this.scheduler,
      book: this.book,
      disk: this.disk,
      shuttingDown: !this.started,
      requireAccepted: this.init.requireAccepted !== false,
      hostsLeases: this.init.leases != null,
      runner: this.init.runner,
      limits: runLimits(this.init, this.scheduler.graceMs),
      maxInputBytes: maxInputBytes(this.init),
      maxOutputBytes: maxOutputBytes(this.init),
      maxSlotsPerRenter: maxSlotsPerRenter(this.init)
    })
  }

  private async decline (ch: FrameChannel, declined: StartDecline, rec: JobRecord | undefined): Promise<void> {
    this.log('declining job: %s %s', JobFrame.Rejected.Code[declined.rejection] ?? declined.rejection, declined.message)
    if (rec != null) {
      rec.state = 'rejected'
      rec.rejected = declined.message
      this.book.update(rec)
    }
    try {
      await ch.send({ rejected: { code: declined.rejection, reason: declined.message.slice(0, 512) } })
      await ch.close()
    } catch {
      ch.abort()
    }
  }

  /**
   * A fresh work dir for the attempt, with empty inputs/ and outputs/: private (0700) and
   * unguessable from the first input byte on.
   */
  private async makeWorkDir (v: VerifiedAward): Promise<string> {
    const dir = join(this.init.workRoot, `${v.jobIdHex}-${v.award.attempt}-${randomBytes(16).toString('hex')}`)
    await mkdir(dir, { mode: 0o700 })
    await mkdir(join(dir, 'inputs'), { recursive: true })
    await mkdir(join(dir, 'outputs'), { recursive: true })
    return dir
  }

  private async waitForSlot (lease: Lease): Promise<void> {
    const maxWait = this.scheduler.graceMs + EXEC_DEFAULTS.slotWaitExtraMs
    await withDeadline(lease.ready, maxWait, () => streamError('INTERNAL', `slot not free within ${maxWait} ms`))
  }

  /** Accepts the job, runs it on its slot, then returns what it made, attested. */
  private async runAndDeliver (attempt: AdmittedAttempt, runtime: JobFrame.Runtime): Promise<void> {
    const { verified: v, inputs, workDir, lease } = attempt
    const gpus = this.execGpus(lease)
    const gpu = gpus[0] as ExecGpu
    // what it may write is the disk share admit() reserved: its inputs plus the output bound
    const spec = {
      ...jobRunSpec(v, { runtime, workDir, limits: runLimits(this.init, this.scheduler.graceMs), gpus }),
      diskBytes: declaredInputBytes(inputs) + maxOutputBytes(this.init)
    }
    // a service lease listens on a port we pick, is health-checked and drained (src/serve)
    const leaseRequest = v.jobRequest.lease
    const leaseHooks =
      leaseRequest != null && this.init.leases != null
        ? await this.init.leases.begin({
          leaseId: v.jobIdHex,
          renter: v.renter.toString(),
          healthPath: leaseRequest.healthPath,
          priceMicroUsdPerGpuHour: Number(v.award.clearingPriceMicroUsd)
        })
        : undefined
    let network: ServiceNetwork | undefined
    try {
      if (leaseHooks != null) {
        spec.env = { ...spec.env, ...leaseHooks.env }
        // docker: the lease's own network, with no route out, where we reach its port
        network = await this.init.runner.openServiceNetwork?.(v.jobIdHex).catch((err: Error) => { throw streamError('INTERNAL', err.message) })
        spec.service = { port: leaseHooks.port, network: network?.name }
      }
      await this.acceptAndRun(attempt, { spec, gpu, leaseHooks })
    } finally {
      leaseHooks?.ended()
      await network?.remove()
    }
  }

  private async acceptAndRun (
    attempt: AdmittedAttempt,
    run: { spec: RunSpec, gpu: ExecGpu, leaseHooks?: LeaseRunHooks }
  ): Promise<void> {
    const { ch, verified: v, workDir, lease, rec } = attempt
    const { spec, gpu, leaseHooks } = run
    await ch.send({ accepted: { at: BigInt(Date.now()) } })
    const acceptedAt = Date.now()
    rec.state = 'running'
    rec.gpuIndex = gpu.index
    rec.startedAt = acceptedAt
    this.book.update(rec)
    const ended = await runOnSlot(ch, {
      spec,
      gpu,
      lease,
      runner: this.init.runner,
      telemetry: this.init.telemetry,
      keepaliveMs: this.init.keepaliveMs ?? EXEC_DEFAULTS.keepaliveMs,
      acceptedAt,
      attemptKey: v.attemptKey,
      log: this.log,
      live: this.live,
      service: leaseHooks
    })
    const { outcome } = ended
    rec.state = 'sending'
    rec.status = outcome.status
    rec.exitCode = outcome.exitCode
    rec.endedAt = outcome.endedAt
    this.book.update(rec)
    lease.release()
    await this.dropInputs(workDir, v.attemptKey)
    this.log('job %s ended %s (exit %d)%s', v.attemptKey, outcome.status, outcome.exitCode, outcome.detail != null ? `: ${outcome.detail}` : '')
    if (outcome.detail != null && outcome.status !== 'completed') ended.sender.enqueue(noteFrame(outcome.detail))
    await ended.sender.drain()
    await deliverRun(attempt, ended, {
      key: this.components.privateKey as Ed25519PrivateKey,
      me: this.components.peerId,
      gpus: this.execGpus(lease),
      outputLimits: { maxFiles: EXEC_DEFAULTS.maxFiles, maxBytes: maxOutputBytes(this.init) },
      idleMs: this.init.idleMs ?? EXEC_DEFAULTS.idleMs,
      recordAttestation: (envelope) => { this.recordAttestation(envelope, v.attemptKey) },
      update: (record) => { this.book.update(record) }
    })
  }

  /**
   * The run has ended and its inputs are not read again (their digests were taken as they
   * arrived): they leave the disk, and the job's share of the budget shrinks to its output
   * bound, before the outputs are sent, which may take long. Kept with keepWorkDirs; a removal
   * that fails leaves the share as it was (the work dir goes at the end, as always).
   */
  private async dropInputs (workDir: string, key: string): Promise<void> {
    if (this.init.keepWorkDirs === true) return
    try {
      await rm(join(workDir, 'inputs'), { recursive: true, force: true })
      this.disk.shrink(key, maxOutputBytes(this.init))
    } catch (err) {
      this.log('inputs of %s not removed before its outputs: %e', key, err)
    }
  }

  /** Our attestation goes into our ledger feed; a failure there is logged and never reaches the job. */
  private recordAttestation (envelope: Uint8Array, attemptKey: string): void {
    const fail = (err: unknown): void => { this.log.error('attestation of %s not recorded in the ledger: %e', attemptKey, err) }
    try {
      this.components[LEDGER_SERVICE].recordAttestation(envelope).catch(fail)
    } catch (err) {
      fail(err)
    }
  }

  /** The GPUs of a lease as the job service knows them (model, driver), the lease's first first. */
  private execGpus (lease: Lease): ExecGpu[] {
    return lease.gpus.map(held => this.init.gpus.find(g => g.index === held.index) as ExecGpu)
  }
}

/** The provider's job service, in the libp2p factory pattern. */
export function jobExecService (init: ExecServiceInit): (components: ExecComponents) => JobExecService {
  return (components) => new JobExecService(components, init)
}
