/**
 * A job running on its GPU slot: the runner started with the job's log forwarded as Log
 * frames in order, a Progress frame every few seconds, the lease's preemption notice passed
 * on as SIGTERM-then-SIGKILL, the job cancelled when the renter goes away, and the GPU's
 * telemetry sampled for the attestation.
 */
import { JobFrame } from '../../../protocols/job.js'
import { TelemetrySampler, type TelemetryRead, type TelemetrySummary } from './telemetry.js'
import type { FrameChannel, ReceivedFrame } from '../shared/job-stream.js'
import type { RunOutcome, Runner, RunSpec } from '../runners/index.js'
import type { SchedulerGpu } from './scheduler.js'
import type { Lease } from './slot-lease.js'
import type { LeaseRunHooks } from './lease-host.js'
import type { Logger } from '@libp2p/interface'

/**
 * Frames sent in order behind the job without making it wait (log lines keep the stream's
 * backpressure); the first failed send marks the stream broken and drops the rest.
 */
export class OrderedSender {
  private chain: Promise<void> = Promise.resolve()
  private brokenStream = false

  constructor (private readonly ch: FrameChannel) {}

  get broken (): boolean {
    return this.brokenStream
  }

  enqueue (frame: JobFrame): void {
    this.chain = this.chain
      .then(async () => {
        if (!this.brokenStream) await this.ch.send(frame)
      })
      .catch(() => {
        this.brokenStream = true
      })
  }

  /** Resolves once everything queued so far was sent (or dropped). */
  async drain (): Promise<void> {
    await this.chain
  }
}

/** A Log frame on stderr with a note from the provider, e.g. why the job stopped. */
export function noteFrame (text: string): JobFrame {
  return { log: { stream: JobFrame.Log.Stream.STDERR, line: `[idlegrid: ${text}]`, at: BigInt(Date.now()) } }
}

/** What the renter sent while the job ran: its receipt comes later, anything earlier means it went away. */
export type RenterAnswer = { frame: ReceivedFrame | undefined } | { err: unknown }

/** A running job as the provider's shutdown sees it: cancel it, then wait for its end. */
export interface LiveJob {
  cancel: (why: string) => void
  /** settles once nothing of the job runs any more */
  done: Promise<unknown>
}

export interface SlotRunOptions {
  spec: RunSpec
  gpu: SchedulerGpu
  lease: Lease
  runner: Runner
  /** GPU telemetry (none: the attestation carries no samples) */
  telemetry?: { read?: TelemetryRead, intervalMs?: number }
  keepaliveMs: number
  /** when the job was accepted: Progress frames count from here */
  acceptedAt: number
  /** names the attempt in the provider's log */
  attemptKey: string
  log: Logger
  /** the provider's running jobs: this one is in it while it runs (a shutdown cancels them all) */
  live: Set<LiveJob>
  /** a service lease: told when the run starts and when it is preempted (lease-host.ts) */
  service?: Pick<LeaseRunHooks, 'started' | 'preempting'>
}

export interface SlotRunEnd {
  outcome: RunOutcome
  telemetry: TelemetrySummary
  /** the renter closed or broke the stream while the job ran: the job was cancelled */
  renterGone: boolean
  /** the renter's next frame (its receipt), read since the job started */
  renterNext: Promise<RenterAnswer>
  /** Log frames still being sent; the caller adds its own and drains */
  sender: OrderedSender
}

/** Runs the job to its end on the slot. */
export async function runOnSlot (ch: FrameChannel, opts: SlotRunOptions): Promise<SlotRunEnd> {
  const { spec, gpu, lease } = opts
  const sampler = new TelemetrySampler({
    gpuIndex: gpu.index,
    gpuIndices: lease.gpus.map(g => g.index),
    simulated: gpu.simulated,
    read: gpu.simulated ? undefined : opts.telemetry?.read,
    intervalMs: opts.telemetry?.intervalMs
  })
  sampler.start()
  const sender = new OrderedSender(ch)
  const handle = opts.runner.start(spec, line => {
    sender.enqueue({ log: { stream: line.stream === 'stderr' ? JobFrame.Log.Stream.STDERR : JobFrame.Log.Stream.STDOUT, line: line.line, at: BigInt(line.at) } })
  })
  const job: LiveJob = { cancel: (why: string) => { handle.cancel(why) }, done: handle.done }
  opts.live.add(job)
  opts.service?.started(handle)
  lease.onPreempt(notice => {
    opts.service?.preempting(notice)
    opts.log('preempting job %s (%s): %d ms notice', opts.attemptKey, notice.detail, notice.graceMs)
    sender.enqueue(noteFrame(`${notice.detail}; SIGTERM now, SIGKILL in ${notice.graceMs} ms`))
    handle.preempt(notice.graceMs, notice.detail)
  })
  const keepalive = setInterval(() => {
    sender.enqueue({ progress: { at: BigInt(Date.now()), elapsedMs: BigInt(Date.now() - opts.acceptedAt) } })
  }, opts.keepaliveMs)
  // the renter sends nothing until its receipt: anything earlier means it went away
  const renterWait = spec.timeoutMs + spec.graceMs + 60 * 60_000
  const renterNext: Promise<RenterAnswer> = ch.next(renterWait).then(frame => ({ frame }), (err: unknown) => ({ err }))
  let running = true
  let renterGone = false
  void renterNext.then(() => {
    if (running) {
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
    opts.live.delete(job)
    telemetry = await sampler.stop()
    running = false
  }
  return { outcome, telemetry, renterGone, renterNext, sender }
}
