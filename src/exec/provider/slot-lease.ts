/**
 * A job's hold on its GPU slots (SlotScheduler.reserve): ready once every slot is its own,
 * told when it must stop (a preemption notice), given back when the run ends.
 */
import type { PreemptReason, SchedulerGpu, SlotJob } from './scheduler.js'

export interface PreemptNotice {
  reason: PreemptReason
  /** how long the job has between SIGTERM and SIGKILL */
  graceMs: number
  detail: string
}

export interface Lease {
  readonly job: SlotJob
  /** the first of `gpus` */
  readonly gpu: SchedulerGpu
  /** every GPU the job holds, `job.gpus` of them, in slot order */
  readonly gpus: readonly SchedulerGpu[]
  /** resolves when every slot is this job's: at once, or when the bronze jobs it displaces have stopped */
  readonly ready: Promise<void>
  /** whether the job may be preempted (bronze) */
  readonly preemptible: boolean
  /** registers what to do when this job must stop; a notice that came earlier is delivered at once */
  onPreempt(handler: (notice: PreemptNotice) => void): void
  /** drops the handler: a later notice waits for the next onPreempt */
  offPreempt(): void
  /**
   * For a lease reserved with `deferDisplacement`: tells the bronze job it displaces to stop
   * now (until then that job runs on, and `ready` waits). Otherwise, or a second time, nothing.
   */
  claim(): void
  /** gives every slot back (run finished, failed or never started); safe to call twice */
  release(): void
}

/** The scheduler's side of a lease: which slots it waits for, and a notice held until a handler is registered. */
export class SlotLease implements Lease {
  readonly ready: Promise<void>
  readonly preemptible: boolean
  released = false
  preempting = false
  readonly since: number
  private resolveReady!: () => void
  private handler?: (notice: PreemptNotice) => void
  private pendingNotice?: PreemptNotice
  /** the displacement this lease waits to claim (deferDisplacement) */
  deferred?: () => void
  readonly gpu: SchedulerGpu
  /** slots still held by the bronze jobs this one displaces */
  waitingFor = 0

  constructor (
    readonly job: SlotJob,
    readonly gpus: readonly SchedulerGpu[],
    private readonly onRelease: (lease: SlotLease) => void,
    now: number
  ) {
    this.gpu = gpus[0] as SchedulerGpu
    this.preemptible = job.tier === 'bronze'
    this.since = now
    this.ready = new Promise(resolve => { this.resolveReady = resolve })
  }

  /** one more of its slots is free for it; ready once none is left to wait for */
  granted (): void {
    if (this.waitingFor > 0) this.waitingFor--
    if (this.waitingFor === 0) this.resolveReady()
  }

  notify (notice: PreemptNotice): void {
    if (this.preempting || this.released) return
    this.preempting = true
    if (this.handler != null) this.handler(notice)
    else this.pendingNotice = notice
  }

  onPreempt (handler: (notice: PreemptNotice) => void): void {
    this.handler = handler
    if (this.pendingNotice != null) {
      const notice = this.pendingNotice
      this.pendingNotice = undefined
      handler(notice)
    }
  }

  offPreempt (): void {
    this.handler = undefined
  }

  claim (): void {
    const displace = this.deferred
    this.deferred = undefined
    if (!this.released) displace?.()
  }

  release (): void {
    if (this.released) return
    this.released = true
    this.onRelease(this)
  }
}
