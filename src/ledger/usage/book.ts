/**
 * Which co-signed usage statements count (protocols/README.md §7 "Usage statements"). The
 * same statement kept by both parties is one (by its hash); of a lease's statements whose
 * intervals overlap, only the first in (start, end, hash) order counts, so an overlapping
 * second statement, even with both signatures, is never paid twice. Order-independent: every
 * node holding the same entries counts the same. A node's own feed never gets a duplicate or
 * an overlap (UsageBook refuses it before the append, with LedgerError ERR_LEDGER_USAGE_OVERLAP).
 */

import { toHex } from '../../common/index.js'
import { usageOverlap, type UsageOverlapError } from '../errors.js'
import type { VerifiedUsage } from './statement.js'

export type UsageVerdict = 'counts' | 'duplicate' | 'overlap'

/** The lease a statement is about: its provider, renter and lease id (a lease id is the renter's random job id). */
export function leaseKeyOf (v: VerifiedUsage): string {
  return `${v.providerId}/${v.renterId}/${toHex(v.usage.leaseId)}`
}

/** The statements that count, and the others with why, from any number in any order. */
export function countUsage (all: Iterable<VerifiedUsage>): { counted: VerifiedUsage[], ignored: Array<{ usage: VerifiedUsage, verdict: Exclude<UsageVerdict, 'counts'> }> } {
  const byLease = new Map<string, Map<string, VerifiedUsage>>()
  const ignored: Array<{ usage: VerifiedUsage, verdict: Exclude<UsageVerdict, 'counts'> }> = []
  for (const v of all) {
    const key = leaseKeyOf(v)
    let lease = byLease.get(key)
    if (lease == null) byLease.set(key, lease = new Map())
    if (lease.has(v.hash)) ignored.push({ usage: v, verdict: 'duplicate' })
    else lease.set(v.hash, v)
  }
  const counted: VerifiedUsage[] = []
  for (const lease of byLease.values()) {
    const sorted = [...lease.values()].sort(
      (a, b) =>
        a.usage.intervalStart - b.usage.intervalStart ||
        a.usage.intervalEnd - b.usage.intervalEnd ||
        (a.hash < b.hash ? -1 : 1)
    )
    let end = -Infinity
    for (const v of sorted) {
      if (v.usage.intervalStart < end) { ignored.push({ usage: v, verdict: 'overlap' }); continue }
      counted.push(v)
      end = v.usage.intervalEnd
    }
  }
  return { counted, ignored }
}

/**
 * The statements one party holds, lease by lease: the check before a new one is appended.
 */
export class UsageBook {
  private readonly leases = new Map<string, { hashes: Set<string>, intervals: Array<[number, number]> }>()

  /** Why `v` may not join the book, or 'counts'. */
  verdict (v: VerifiedUsage): UsageVerdict {
    const lease = this.leases.get(leaseKeyOf(v))
    if (lease == null) return 'counts'
    if (lease.hashes.has(v.hash)) return 'duplicate'
    const { intervalStart: s, intervalEnd: e } = v.usage
    return lease.intervals.some(([a, b]) => s < b && a < e) ? 'overlap' : 'counts'
  }

  /** verdict() as a typed error, or nothing. */
  check (v: VerifiedUsage): UsageOverlapError | undefined {
    const verdict = this.verdict(v)
    if (verdict === 'counts') return undefined
    const span = `[${v.usage.intervalStart}, ${v.usage.intervalEnd})`
    return usageOverlap(verdict, verdict === 'duplicate' ? `usage statement ${v.hash.slice(0, 16)} is already held` : `usage interval ${span} overlaps a held statement of lease ${toHex(v.usage.leaseId)}`)
  }

  add (v: VerifiedUsage): void {
    const key = leaseKeyOf(v)
    let lease = this.leases.get(key)
    if (lease == null) this.leases.set(key, lease = { hashes: new Set(), intervals: [] })
    if (lease.hashes.has(v.hash)) return
    lease.hashes.add(v.hash)
    lease.intervals.push([v.usage.intervalStart, v.usage.intervalEnd])
  }
}
