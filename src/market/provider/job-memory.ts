/**
 * The job requests a provider remembers (for awards, explain and prices), bounded per signer
 * and overall. Anyone can make keys and sign job requests, so strangers' requests must not
 * push out a job this provider can still be awarded (issues 13 and 36):
 *
 * - a job the provider bid on is *pinned* until its request expires (the end of its auction:
 *   window, awards and failovers) or until the provider accepted its award; pinned jobs are
 *   never forgotten for room. Pins are only made by the provider's own bids and are capped
 *   (`pinned`): when the cap is reached the provider makes no further bid (provider-service.ts)
 *   rather than a bid it might not be able to honour;
 * - each signer keeps at most `perSigner` (its oldest unpinned go first: a renter displaces
 *   only its own jobs);
 * - when the whole memory is full, expired requests go first; then the signer holding the most
 *   unpinned jobs loses its oldest, and among equals the signer seen *last*: a flood of
 *   single-request keys forgets its own newest members, never an older renter's job.
 */
export interface JobMemoryLimits {
  /** job requests remembered in all */
  total: number
  /** job requests remembered per signer */
  perSigner: number
  /** jobs pinned at once (in-progress auctions this provider bid on); below `total` */
  pinned: number
}

export const JOB_MEMORY_LIMITS: Readonly<JobMemoryLimits> = { total: 2_000, perSigner: 64, pinned: 1_000 }

export interface JobMemoryOptions extends Partial<JobMemoryLimits> {
  now?: () => number
}

/** How a job is remembered: until when its request is valid, and whether its auction is pinned. */
export interface RememberOptions {
  /** unix ms when the job request expires (its auction can no longer be awarded after it) */
  expiresAt: number
  /** pin the job until `expiresAt` (the provider bid on it); refused past the pin cap, see `set` */
  pin?: boolean
}

interface Entry<T> {
  value: T
  expiresAt: number
  pinned: boolean
}

export class JobMemory<T> {
  /** by signer (first seen first), then by job id; each inner map in insertion order (oldest first) */
  private readonly bySigner = new Map<string, Map<string, Entry<T>>>()
  private count = 0
  /** no remembered request expires before this (a lower bound): the sweep for expired ones waits for it */
  private earliestExpiry = Infinity
  /** pinned entries, to count pins in force without a pass over the memory */
  private readonly pins = new Set<Entry<T>>()
  private readonly limits: JobMemoryLimits
  private readonly now: () => number

  constructor (opts: JobMemoryOptions = {}) {
    const { now, ...limits } = opts
    this.limits = { ...JOB_MEMORY_LIMITS, ...limits }
    this.now = now ?? Date.now
  }

  get size (): number {
    return this.count
  }

  /** Pins in force now (pinned, request not expired). */
  get pinned (): number {
    this.sweepPins()
    return this.pins.size
  }

  /** Whether one more job can be pinned now. */
  canPin (): boolean {
    return this.pinned < this.limits.pinned
  }

  get (signer: string, jobId: string): T | undefined {
    return this.bySigner.get(signer)?.get(jobId)?.value
  }

  /**
   * Remembers (or refreshes) `signer`'s job, forgetting within the bounds. Returns whether the
   * job is pinned: false when no pin was asked or the pin cap is reached (the job is then
   * remembered unpinned).
   */
  set (signer: string, jobId: string, value: T, opts: RememberOptions): boolean {
    let jobs = this.bySigner.get(signer)
    if (jobs == null) {
      jobs = new Map()
      this.bySigner.set(signer, jobs)
    }
    this.remove(jobs, jobId)
    const entry: Entry<T> = {
      value,
      expiresAt: opts.expiresAt,
      pinned: opts.pin === true && opts.expiresAt > this.now() && this.canPin()
    }
    jobs.set(jobId, entry)
    this.count++
    this.earliestExpiry = Math.min(this.earliestExpiry, entry.expiresAt)
    if (entry.pinned) this.pins.add(entry)
    if (jobs.size > this.limits.perSigner) this.forgetOldest(signer, jobs, entry)
    if (this.count > this.limits.total) this.makeRoom(entry)
    return entry.pinned
  }

  /** Ends `signer`'s job's pin (its award was accepted: nothing more to answer for it). */
  unpin (signer: string, jobId: string): void {
    const entry = this.bySigner.get(signer)?.get(jobId)
    if (entry == null) return
    entry.pinned = false
    this.pins.delete(entry)
  }

  private remove (jobs: Map<string, Entry<T>>, jobId: string): void {
    const old = jobs.get(jobId)
    if (old == null) return
    jobs.delete(jobId)
    this.pins.delete(old)
    this.count--
  }

  private isPinned (entry: Entry<T>, now: number): boolean {
    return entry.pinned && entry.expiresAt > now
  }

  private sweepPins (): void {
    const now = this.now()
    for (const entry of this.pins) {
      if (entry.expiresAt > now) continue
      entry.pinned = false
      this.pins.delete(entry)
    }
  }

  /** Forgets expired requests; if none, one job of the heaviest unpinned signer (never `keep`'s pin). */
  private makeRoom (keep: Entry<T>): void {
    const now = this.now()
    if (now >= this.earliestExpiry) this.forgetExpired(now, keep)
    if (this.count <= this.limits.total) return
    const victim = this.heaviestUnpinned(now)
    if (victim != null) this.forgetOldest(victim[0], victim[1], keep)
  }

  private forgetExpired (now: number, keep: Entry<T>): void {
    this.earliestExpiry = Infinity
    for (const [signer, jobs] of this.bySigner) {
      for (const [id, e] of jobs) {
        if (e.expiresAt <= now && e !== keep) this.remove(jobs, id)
        else this.earliestExpiry = Math.min(this.earliestExpiry, e.expiresAt)
      }
      if (jobs.size === 0) this.bySigner.delete(signer)
    }
  }

  /** The signer holding the most unpinned jobs; among equals the one seen last (a flood's newest key). */
  private heaviestUnpinned (now: number): [string, Map<string, Entry<T>>] | undefined {
    let best: [string, Map<string, Entry<T>>] | undefined
    let bestCount = 0
    for (const entry of this.bySigner) {
      // fewer jobs than the best so far: it cannot have more unpinned ones
      if (entry[1].size < bestCount) continue
      let unpinned = 0
      for (const e of entry[1].values()) if (!this.isPinned(e, now)) unpinned++
      if (unpinned > 0 && unpinned >= bestCount) {
        best = entry
        bestCount = unpinned
      }
    }
    return best
  }

  /**
   * Forgets `signer`'s oldest unpinned job; when all its jobs are pinned, its oldest other than
   * `keep` (a signer over its own bound displaces only its own jobs).
   */
  private forgetOldest (signer: string, jobs: Map<string, Entry<T>>, keep: Entry<T>): void {
    const now = this.now()
    let oldest: string | undefined
    for (const [id, e] of jobs) {
      if (!this.isPinned(e, now)) { oldest = id; break }
      if (oldest == null && e !== keep) oldest = id
    }
    if (oldest == null) return
    this.remove(jobs, oldest)
    if (jobs.size === 0) this.bySigner.delete(signer)
  }
}
