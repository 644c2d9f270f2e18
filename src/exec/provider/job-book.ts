/**
 * What the provider remembers about the job attempts it answers: the awards its market
 * accepted (only those run), the attempts already started (none runs twice), and a record of
 * each recent attempt for `exec.jobs`. Every map is bounded.
 */
import type { Tier } from '../../capability/index.js'
import type { RunStatus } from '../runners/index.js'

/** Accepted awards and started attempts remembered at most (the oldest are forgotten first). */
const MAX_KEYS = 10_000
/** Attempt records kept for `exec.jobs`. */
const MAX_RECORDS = 256
/** How long a started attempt is remembered: longer than any award lives. */
const ANSWERED_FOR_MS = 24 * 60 * 60_000

/** One attempt this provider answered, for status and tests. */
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
  /** the renter's verdict (Receipt.Outcome name), once its receipt verified */
  receipt?: string
}

export class JobBook {
  /** award hash hex → the award's expiry */
  private readonly accepted = new Map<string, number>()
  /** attempt key → until when it is remembered */
  private readonly answered = new Map<string, number>()
  private readonly records = new Map<string, JobRecord>()

  /** Notes an award the market accepted, until it expires. */
  accept (awardHashHex: string, expiresAt: number): void {
    this.accepted.set(awardHashHex, expiresAt)
    prune(this.accepted)
  }

  isAccepted (awardHashHex: string): boolean {
    return this.accepted.has(awardHashHex)
  }

  /** Notes that an attempt started (its Start frame was admitted). */
  answer (attemptKey: string): void {
    this.answered.set(attemptKey, Date.now() + ANSWERED_FOR_MS)
    prune(this.answered)
  }

  wasAnswered (attemptKey: string): boolean {
    return this.answered.has(attemptKey)
  }

  /** Stores the attempt's record as it is now (most recent last). */
  update (rec: JobRecord): void {
    this.records.delete(rec.attemptKey)
    this.records.set(rec.attemptKey, rec)
    while (this.records.size > MAX_RECORDS) this.records.delete(this.records.keys().next().value as string)
  }

  /** Attempts answered, most recent last. */
  list (): JobRecord[] {
    return [...this.records.values()]
  }
}

/** Drops what has expired, then the oldest entries past MAX_KEYS. */
function prune (map: Map<string, number>): void {
  const now = Date.now()
  for (const [key, until] of map) if (until < now) map.delete(key)
  while (map.size > MAX_KEYS) map.delete(map.keys().next().value as string)
}
