/**
 * Per-author quotas (protocols/README.md §7 "Standing and quarantine"), larger the more
 * standing an author has in this node's view (standing.ts):
 *   rate   entries per minute of the feed's own time, as a token bucket (a burst, refilled at
 *          the rate): measured on the entries' times, not on arrival, so that sync may pull
 *          an honest feed's backlog at once
 *   bytes  stored envelope bytes of the feed; a provisional tree (reached from one
 *          connection) shares one budget, charged to the connected peer
 * The node's own feed has none. A quarantined author's quota is checked by the quarantine.
 */

import { QuotaExceededError } from './errors.js'
import type { LedgerRecord } from './entry.js'
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

  constructor (limits: Partial<Record<Exclude<Tier, 'self'>, Partial<QuotaLimits>>> = {}) {
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
  check (record: LedgerRecord, tier: Tier, account: string): QuotaExceededError | undefined {
    if (tier === 'self') return undefined
    const limits = this.limits[tier]
    const size = record.envelope.byteLength
    if (this.held(account) + size > limits.bytes) {
      return new QuotaExceededError(`${record.authorId}'s feed is over its ${tier} byte quota (${this.held(account)} + ${size} > ${limits.bytes} bytes${account === record.authorId ? '' : ` for the tree of ${account}`})`)
    }
    if (this.tokens(record, limits) < 1) {
      return new QuotaExceededError(`${record.authorId} writes more than ${limits.entriesPerMinute} entries per minute (burst ${limits.burst}), over its ${tier} quota`)
    }
    return undefined
  }

  /** Records a stored (or quarantined) entry against its author's rate and its account's bytes. */
  charge (record: LedgerRecord, tier: Tier, account: string): void {
    if (tier === 'self') return
    const limits = this.limits[tier]
    this.buckets.set(record.authorId, { tokens: this.tokens(record, limits) - 1, last: Math.max(this.buckets.get(record.authorId)?.last ?? 0, record.time) })
    this.bytes.set(account, this.held(account) + record.envelope.byteLength)
  }

  /** Bytes that left an account (a quarantined feed evicted, or moved to another account on promotion). */
  release (account: string, bytes: number): void {
    const left = this.held(account) - bytes
    if (left > 0) this.bytes.set(account, left)
    else this.bytes.delete(account)
  }

  /** Forgets an author's rate (its quarantined feed was evicted, or promoted: then it is charged anew at its new standing). */
  forget (authorId: string): void {
    this.buckets.delete(authorId)
  }

  private tokens (record: LedgerRecord, limits: QuotaLimits): number {
    const bucket = this.buckets.get(record.authorId)
    if (bucket == null) return limits.burst
    const refill = Math.max(0, record.time - bucket.last) * limits.entriesPerMinute / 60_000
    return Math.min(limits.burst, bucket.tokens + refill)
  }
}
