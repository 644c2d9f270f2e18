/**
 * The job requests a provider remembers (for awards, explain and prices), bounded per signer
 * and overall. Anyone can make keys and sign job requests, so one signer's flood must not push
 * out another renter's job: each signer keeps at most `perSigner` (its oldest go first), and
 * when the whole memory is full the oldest job of the signer holding the most is forgotten,
 * never a job of a signer with fewer (issue 13).
 */
export interface JobMemoryLimits {
  /** job requests remembered in all */
  total: number
  /** job requests remembered per signer */
  perSigner: number
}

export const JOB_MEMORY_LIMITS: Readonly<JobMemoryLimits> = { total: 2_000, perSigner: 64 }

export class JobMemory<T> {
  /** by signer, then by job id; each inner map in insertion order (oldest first) */
  private readonly bySigner = new Map<string, Map<string, T>>()
  private count = 0
  private readonly limits: JobMemoryLimits

  constructor (limits: Partial<JobMemoryLimits> = {}) {
    this.limits = { ...JOB_MEMORY_LIMITS, ...limits }
  }

  get size (): number {
    return this.count
  }

  get (signer: string, jobId: string): T | undefined {
    return this.bySigner.get(signer)?.get(jobId)
  }

  /** Remembers (or refreshes) `signer`'s job, forgetting within the bounds. */
  set (signer: string, jobId: string, value: T): void {
    let jobs = this.bySigner.get(signer)
    if (jobs == null) {
      jobs = new Map()
      this.bySigner.set(signer, jobs)
    }
    if (jobs.delete(jobId)) this.count--
    jobs.set(jobId, value)
    this.count++
    if (jobs.size > this.limits.perSigner) this.forgetOldest(signer, jobs)
    if (this.count > this.limits.total) {
      const [heaviest, theirs] = this.heaviest()
      this.forgetOldest(heaviest, theirs)
    }
  }

  /** The signer holding the most jobs (the first seen among equals). */
  private heaviest (): [string, Map<string, T>] {
    let best: [string, Map<string, T>] | undefined
    for (const entry of this.bySigner) if (best == null || entry[1].size > best[1].size) best = entry
    return best as [string, Map<string, T>]
  }

  private forgetOldest (signer: string, jobs: Map<string, T>): void {
    const oldest = jobs.keys().next()
    if (oldest.done === true) return
    jobs.delete(oldest.value)
    this.count--
    if (jobs.size === 0) this.bySigner.delete(signer)
  }
}
