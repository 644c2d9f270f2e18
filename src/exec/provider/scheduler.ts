/**
 * Slots, tiers and preemption. One slot per GPU; a job takes as many slots as it asks GPUs
 * (`SlotJob.gpus`), all or none. Gold and silver jobs take free slots or, when too few are
 * free, displace running bronze jobs: each bronze job is told to stop (its runner sends
 * SIGTERM, waits the grace period, then SIGKILL) and the new job gets its slots once every
 * bronze job it displaces has released them (a multi-GPU bronze job releases all of its at once).
 * The end of an availability window and a thermal or power limit preempt every bronze job and pause
 * new work until they clear. Gold and silver jobs are never preempted.
 *
 * Pure bookkeeping: no timers and no processes; the owner of a lease acts on its notice.
 */
import { SlotLease, type Lease } from './slot-lease.js'
import type { Tier } from '../../capability/index.js'

export type PauseReason = 'window' | 'thermal' | 'power'
export type PreemptReason = 'tier' | PauseReason

export const DEFAULT_GRACE_MS = 10_000

export interface SchedulerGpu {
  index: number
  uuid: string
  simulated: boolean
}

export interface SlotJob {
  /** unique per job attempt, e.g. "<renter>/<jobId hex>/<nonce>/<attempt>" */
  key: string
  tier: Tier
  /** shortest SIGTERM-to-SIGKILL notice the job needs when preempted, ms */
  minNoticeMs?: number
  /** GPUs the job needs, all on this box (default 1) */
  gpus?: number
}

type JobShape = Pick<SlotJob, 'tier' | 'minNoticeMs' | 'gpus'>

/** gpu-count: the box has fewer GPUs than the job needs, now and later */
export type Refusal = { refused: 'no-capacity' | 'paused' | 'notice' | 'gpu-count', detail: string }

export interface ReserveOptions {
  /**
   * A gold/silver job that must displace a bronze one waits for `lease.claim()` before the
   * bronze job is told to stop: a job still receiving its inputs evicts nobody (issue 13).
   */
  deferDisplacement?: boolean
}

export interface SlotView {
  index: number
  gpu: SchedulerGpu
  job?: { key: string, tier: Tier, since: number, preempting: boolean }
  /** a gold/silver job waiting for this slot's bronze job to stop */
  waiting?: string
}

/** What the bid engine needs to know: capacity, preemptible capacity, and whether to bid at all. */
export interface CapacityView {
  total: number
  free: number
  busy: number
  /** slots running bronze work a gold/silver job could displace */
  preemptible: number
  /** non-empty: do not bid (bronze work was preempted for these reasons) */
  paused: PauseReason[]
  graceMs: number
}

export interface SchedulerOptions {
  gpus: readonly SchedulerGpu[]
  /** the provider's SIGTERM-to-SIGKILL notice for preempted jobs, ms (default 10 s) */
  graceMs?: number
  now?: () => number
}

interface Slot {
  gpu: SchedulerGpu
  lease?: SlotLease
  /** the lease waiting for `lease` (bronze, being preempted) to release */
  next?: SlotLease
}

export class SlotScheduler {
  /** dispatches 'change' whenever slots or pauses change */
  readonly events = new ListenedEventTarget()
  readonly graceMs: number
  private readonly slots: Slot[]
  private readonly paused = new Map<PauseReason, string>()
  private readonly now: () => number
  /**
   * Awards accepted whose Start has not come yet (award hash hex → its renter, until when): each
   * holds a free slot from what other renters are offered, so two renters are not both told yes
   * for one slot and the second refused at Start (20 NAT'd providers and 5 renters: 4 of 10 jobs
   * lost their attempts that way). One per renter: its next accepted award replaces it, so a
   * renter that never starts (an auction alone, or a griefer) holds one slot per provider for
   * PROMISE_MS at most, and never blocks its own next job.
   */
  private readonly promises = new Map<string, { renter: string, until: number }>()

  constructor (opts: SchedulerOptions) {
    this.slots = opts.gpus.map(gpu => ({ gpu }))
    this.graceMs = opts.graceMs ?? DEFAULT_GRACE_MS
    this.now = opts.now ?? Date.now
  }

  /** Whether a job of this tier, notice and GPU count could be placed now (the bid engine's question). */
  canAccept (job: JobShape): { ok: true } | Refusal {
    const need = job.gpus ?? 1
    if (need > this.slots.length) return { refused: 'gpu-count', detail: `needs ${need} GPUs on one box, this provider has ${this.slots.length}` }
    if (this.paused.size > 0) return { refused: 'paused', detail: `paused: ${[...this.paused.values()].join('; ')}` }
    if (job.tier === 'bronze' && (job.minNoticeMs ?? 0) > this.graceMs) {
      return { refused: 'notice', detail: `job needs ${job.minNoticeMs ?? 0} ms notice, this provider gives ${this.graceMs} ms` }
    }
    let free = 0
    let displaceable = 0
    for (const s of this.slots) {
      if (s.lease == null) free++
      else if (this.displaceable(s)) displaceable++
    }
    if (free >= need) return { ok: true }
    if (job.tier !== 'bronze' && free + displaceable >= need) return { ok: true }
    if (need > 1) return { refused: 'no-capacity', detail: `needs ${need} GPUs, ${free} of ${this.slots.length} free${job.tier === 'bronze' ? '' : ` and ${displaceable} running bronze work`}` }
    return { refused: 'no-capacity', detail: `all ${this.slots.length} slots busy${job.tier === 'bronze' ? '' : ' with work that cannot be preempted'}` }
  }

  /**
   * Places a job on `job.gpus` slots at once: free slots first, then (gold/silver) the slots of
   * bronze jobs, oldest first, each of which is told to stop (at once, or at `lease.claim()`
   * with `deferDisplacement`); `lease.ready` resolves once every slot is free. Refuses when
   * paused or full: then nothing is held and nobody is told to stop.
   */
  reserve (job: SlotJob, opts: ReserveOptions = {}): Lease | Refusal {
    const can = this.canAccept(job)
    if ('refused' in can) return can
    const slots = this.pick(job) as Slot[]
    const lease = new SlotLease(job, slots.map(s => s.gpu), released => { this.releaseLease(released) }, this.now())
    // the bronze jobs being displaced, captured: once they are gone their slots are this lease's
    const victims = new Set<SlotLease>()
    for (const slot of slots) {
      if (slot.lease == null) {
        slot.lease = lease
      } else {
        victims.add(slot.lease)
        slot.next = lease
        lease.waitingFor++
      }
    }
    if (victims.size === 0) {
      lease.granted()
      this.changed()
      return lease
    }
    // one notice per bronze job, however many of its slots this job takes
    const displace = (): void => { for (const v of victims) v.notify({ reason: 'tier', graceMs: this.graceMs, detail: `preempted by a ${job.tier} job` }) }
    if (opts.deferDisplacement === true) lease.deferred = displace
    else displace()
    this.changed()
    return lease
  }

  /**
   * The GPUs `reserve` would place this job on now (free slots, else those of the bronze jobs
   * it would displace), or undefined when it would refuse. Lets the caller check its own limits first.
   */
  placement (job: JobShape): SchedulerGpu[] | undefined {
    if ('refused' in this.canAccept(job)) return undefined
    return this.pick(job)?.map(s => s.gpu)
  }

  /** The slots for a job canAccept allows: free ones, then displaceable ones, oldest bronze first; in slot order. */
  private pick (job: JobShape): Slot[] | undefined {
    const need = job.gpus ?? 1
    const chosen: Slot[] = []
    for (const s of this.slots) {
      if (s.lease == null) chosen.push(s)
      if (chosen.length === need) return chosen
    }
    if (job.tier === 'bronze') return undefined
    for (const s of this.victims()) {
      chosen.push(s)
      // in slot order: the job sees its GPUs as the box numbers them
      if (chosen.length === need) return chosen.sort((a, b) => this.slots.indexOf(a) - this.slots.indexOf(b))
    }
    return undefined
  }

  /** The GPUs whose slot holds, or waits for, a job whose key starts with `prefix`. */
  gpusHeldBy (prefix: string): Set<number> {
    const held = new Set<number>()
    for (const s of this.slots) {
      if (s.lease?.job.key.startsWith(prefix) === true || s.next?.job.key.startsWith(prefix) === true) {
        held.add(s.gpu.index)
      }
    }
    return held
  }

  /** Starts or ends a pause; starting one preempts every bronze job. */
  setPause (reason: PauseReason, active: boolean, detail: string = reason): void {
    if (active) {
      const was = this.paused.get(reason)
      this.paused.set(reason, detail)
      for (const slot of this.slots) {
        if (slot.lease?.preemptible === true) slot.lease.notify({ reason, graceMs: this.graceMs, detail })
      }
      if (was !== detail) this.changed()
    } else if (this.paused.delete(reason)) {
      this.changed()
    }
  }

  capacity (): CapacityView {
    // one pass, no intermediate arrays: the bid engine and the simulator ask this for every job they see
    let busy = 0
    let preemptible = 0
    for (const s of this.slots) {
      if (s.lease != null) busy++
      if (this.displaceable(s)) preemptible++
    }
    return {
      total: this.slots.length,
      free: Math.max(0, this.slots.length - busy - this.promised()),
      busy,
      preemptible,
      paused: this.paused.size === 0 ? [] : [...this.paused.keys()],
      graceMs: this.graceMs
    }
  }

  /** capacity().free without building the view (the bid engine asks for every job it sees) */
  freeCount (): number {
    let free = 0
    for (const s of this.slots) if (s.lease == null) free++
    return Math.max(0, free - this.promised())
  }

  /** freeCount() as `renter` sees it: its own accepted award does not hold a slot from it. */
  freeCountFor (renter: string): number {
    let free = 0
    for (const s of this.slots) if (s.lease == null) free++
    return Math.max(0, free - this.promised(renter))
  }

  /**
   * An accepted award of `renter` holds a free slot until its Start is admitted (fulfil) or `until`
   * passes; it replaces the renter's earlier one.
   */
  promise (awardKey: string, renter: string, until: number): void {
    for (const [key, p] of this.promises) if (p.renter === renter) this.promises.delete(key)
    this.promises.set(awardKey, { renter, until })
    this.changed()
  }

  /** The award's Start came: its slot is no longer held for it. */
  fulfil (awardKey: string): void {
    if (this.promises.delete(awardKey)) this.changed()
  }

  /** Promises still held, those of `except` (a renter) left out. */
  private promised (except?: string): number {
    if (this.promises.size === 0) return 0
    const now = this.now()
    let n = 0
    for (const [key, p] of this.promises) {
      if (p.until <= now) this.promises.delete(key)
      else if (p.renter !== except) n++
    }
    return n
  }

  /** capacity().preemptible without building the view */
  preemptibleCount (): number {
    let n = 0
    for (const s of this.slots) if (this.displaceable(s)) n++
    return n
  }

  slotsView (): SlotView[] {
    return this.slots.map((s, index) => ({
      index,
      gpu: s.gpu,
      job:
        s.lease == null
          ? undefined
          : { key: s.lease.job.key, tier: s.lease.job.tier, since: s.lease.since, preempting: s.lease.preempting },
      waiting: s.next?.job.key
    }))
  }

  /** Gives a released lease's slots to the leases waiting for them (SlotLease.release). */
  private releaseLease (lease: SlotLease): void {
    for (const slot of this.slots) {
      if (slot.lease === lease) {
        slot.lease = slot.next
        slot.next = undefined
        slot.lease?.granted()
      } else if (slot.next === lease) {
        // the waiting job gave up; the bronze job is stopping anyway
        slot.next = undefined
      }
    }
    this.changed()
  }

  /**
   * The slots a gold/silver job takes when too few are free: the oldest bronze job's first (it has
   * had the most time to produce something).
   */
  private victims (): Slot[] {
    return this.slots.filter(s => this.displaceable(s)).sort((a, b) => (a.lease?.since ?? 0) - (b.lease?.since ?? 0))
  }

  private displaceable (slot: Slot): boolean {
    return slot.lease != null && slot.lease.preemptible && slot.next == null
  }

  private changed (): void {
    if (this.events.listened) this.events.dispatchEvent(new Event('change'))
  }
}

/**
 * An EventTarget that knows whether anyone ever listened: with no listener a dispatch changes
 * nothing, and the simulator's thousands of schedulers change slots millions of times.
 */
class ListenedEventTarget extends EventTarget {
  listened = false

  override addEventListener (...args: Parameters<EventTarget['addEventListener']>): void {
    this.listened = true
    super.addEventListener(...args)
  }
}
