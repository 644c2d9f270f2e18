/**
 * Per-author quotas (protocols/README.md §7 "Standing and quarantine"), larger the more
 * standing an author has in this node's view (standing.ts):
 *   rate   entries per minute by this node's clock, as a token bucket (a burst, refilled at
 *          the rate). Never by the entries' own times: those need only be non-decreasing, so
 *          a writer could back-date a burst and refill its own bucket. A backlog still comes
 *          at once up to the burst (3000 entries for a trusted feed, 600 for a rooted one);
 *          a feed further behind arrives over more time (sync stops pulling a feed that is
 *          over its quota and the next session goes on from there)
 *   bytes  stored envelope bytes of the feed; a provisional tree (reached from one
 *          connection) shares one budget, charged to the connected peer. Entries held
 *          pending a gap are charged too (and given back when they leave pending)
 * The node's own feed has none: what it writes by itself is never refused. What it writes
 * because of other peers' input (fraud proofs) has its own bound, ProofBudget below.
 * A quarantined author's quota is checked by the quarantine.
 */

import { LedgerError } from '../errors.js'
import type { LedgerRecord } from '../entries/entry.js'
import type { Tier } from './standing.js'

export interface QuotaLimits {
  entriesPerMinute: number
  burst: number
  bytes: number
}

const KiB = 1024
const MiB = 1024 * KiB

export const QUOTAS: Record<Exclude<Tier, 'self'>, QuotaLimits> = {
  trusted: { entriesPerMinute: 600, burst: 3000, bytes: 1024 * MiB },
  standing: { entriesPerMinute: 120, burst: 600, bytes: 64 * MiB },
  /** for the whole tree reached from one connected peer */
  provisional: { entriesPerMinute: 60, burst: 300, bytes: 512 * KiB },
  /** per author, in the quarantine */
  none: { entriesPerMinute: 20, burst: 60, bytes: 256 * KiB }
}

interface Bucket { tokens: number, last: number }

export class Quotas {
  private readonly limits: Record<Exclude<Tier, 'self'>, QuotaLimits>
  private readonly buckets = new Map<string, Bucket>()
  private readonly bytes = new Map<string, number>()
  /** this node's clock: buckets refill by it */
  private readonly now: () => number

  constructor (limits: Partial<Record<Exclude<Tier, 'self'>, Partial<QuotaLimits>>> = {}, now: () => number = Date.now) {
    this.now = now
    this.limits = {
      trusted: { ...QUOTAS.trusted, ...limits.trusted },
      standing: { ...QUOTAS.standing, ...limits.standing },
      provisional: { ...QUOTAS.provisional, ...limits.provisional },
      none: { ...QUOTAS.none, ...limits.none }
    }
  }

  limitsOf (tier: Exclude<Tier, 'self'>): QuotaLimits {
    return this.limits[tier]
  }

  /** Bytes already held by `account` (a feed, or a provisional tree). */
  held (account: string): number {
    return this.bytes.get(account) ?? 0
  }

  /** Counts bytes stored before this run (from the heads). */
  preload (account: string, bytes: number): void {
    this.bytes.set(account, this.held(account) + bytes)
  }

  /** Why `record` may not be stored now, or undefined. Charges nothing. */
  check (record: LedgerRecord, tier: Tier, account: string): LedgerError<'ERR_LEDGER_QUOTA'> | undefined {
    if (tier === 'self') return undefined
    const limits = this.limits[tier]
    const size = record.envelope.byteLength
    if (this.held(account) + size > limits.bytes) {
      return new LedgerError('ERR_LEDGER_QUOTA', `${record.authorId}'s feed is over its ${tier} byte quota (${this.held(account)} + ${size} > ${limits.bytes} bytes${account === record.authorId ? '' : ` for the tree of ${account}`})`)
    }
    if (this.tokens(record.authorId, limits) < 1) {
      return new LedgerError('ERR_LEDGER_QUOTA', `${record.authorId} writes more than ${limits.entriesPerMinute} entries per minute (burst ${limits.burst}), over its ${tier} quota`)
    }
    return undefined
  }

  /** Records a stored (or quarantined) entry against its author's rate and its account's bytes. */
  charge (record: LedgerRecord, tier: Tier, account: string): void {
    if (tier === 'self') return
    this.buckets.set(record.authorId, { tokens: this.tokens(record.authorId, this.limits[tier]) - 1, last: this.now() })
    this.bytes.set(account, this.held(account) + record.envelope.byteLength)
  }

  /** Gives back what charge() took for `record` (an entry held pending that left pending). */
  refund (record: LedgerRecord, tier: Tier, account: string): void {
    if (tier === 'self') return
    this.release(account, record.envelope.byteLength)
    const bucket = this.buckets.get(record.authorId)
    if (bucket != null) {
      this.buckets.set(record.authorId, {
        tokens: Math.min(this.limits[tier].burst, this.tokens(record.authorId, this.limits[tier]) + 1),
        last: this.now()
      })
    }
  }

  /** Bytes that left an account (a quarantined feed evicted, or moved to another account on promotion). */
  release (account: string, bytes: number): void {
    const left = this.held(account) - bytes
    if (left > 0) this.bytes.set(account, left)
    else this.bytes.delete(account)
  }

  /**
   * Forgets an author's rate (its quarantined feed was evicted, or promoted: then it is charged
   * anew at its new standing).
   */
  forget (authorId: string): void {
    this.buckets.delete(authorId)
  }

  private tokens (authorId: string, limits: QuotaLimits): number {
    const bucket = this.buckets.get(authorId)
    if (bucket == null) return limits.burst
    // a clock set back refills nothing (and takes nothing away)
    const refill = Math.max(0, this.now() - bucket.last) * limits.entriesPerMinute / 60_000
    return Math.min(limits.burst, bucket.tokens + refill)
  }
}

export interface ProofBudgetLimits {
  /** fraud proofs at once (the bucket's size), refilled to full over `windowMs` */
  proofs: number
  /** envelope bytes of those proofs at once, refilled to full over `windowMs` */
  bytes: number
  windowMs: number
}

/**
 * What this node may write into its own feed because of other peers' input (fraud proofs):
 * four proofs and 128 KiB at once, refilled over an hour by this node's clock. Without it, a
 * peer sending equivocations (under fresh keys, each slashed once) made its victims fill
 * their own feeds, which have no quota, and every peer that trusts them stores those feeds.
 * A proof is at most ~31 KiB (its body is bounded at 30 KiB), so the bytes allow four of the
 * largest. Equivocation is rare in an honest network: a refilled budget slashes the rest.
 * The node's own receipts, attestations, usage and summaries are never counted here.
 */
export const PROOF_BUDGET: ProofBudgetLimits = { proofs: 4, bytes: 128 * KiB, windowMs: 60 * 60_000 }

export class ProofBudget {
  private readonly limits: ProofBudgetLimits
  private readonly now: () => number
  private proofs: number
  private bytes: number
  private last: number

  constructor (now: () => number = Date.now, limits: Partial<ProofBudgetLimits> = {}) {
    this.limits = { ...PROOF_BUDGET, ...limits }
    this.now = now
    this.proofs = this.limits.proofs
    this.bytes = this.limits.bytes
    this.last = now()
  }

  /** Whether a proof could be written now (checked before one is built: building signs). */
  hasRoom (): boolean {
    this.refill()
    return this.proofs >= 1 && this.bytes > 0
  }

  /** Takes one proof of `size` bytes; false (taking nothing) when over the budget. */
  take (size: number): boolean {
    this.refill()
    if (this.proofs < 1 || this.bytes < size) return false
    this.proofs -= 1
    this.bytes -= size
    return true
  }

  private refill (): void {
    const now = this.now()
    const elapsed = Math.max(0, now - this.last)
    this.last = Math.max(this.last, now)
    const { proofs, bytes, windowMs } = this.limits
    this.proofs = Math.min(proofs, this.proofs + elapsed * proofs / windowMs)
    this.bytes = Math.min(bytes, this.bytes + elapsed * bytes / windowMs)
  }
}
