/**
 * A provider's service earnings and uptime from co-signed usage statements only (the ones
 * book.ts counts): whatever a provider claimed and its renter did not sign is worth
 * nothing here. Uptime is the share of each lease's span (its first counted statement's start
 * to its last one's end) that counted statements cover: an interval the renter would not sign
 * is a gap.
 */

import { countUsage } from './book.js'
import type { VerifiedUsage } from './statement.js'

export interface ServiceEarnings {
  /** co-signed statements that count */
  statements: number
  /** statements held but not counted: the same statement again, or an interval overlapping a counted one */
  ignored: { duplicate: number, overlap: number }
  leases: number
  requests: number
  gpuHours: number
  bytesIn: number
  bytesOut: number
  /** Σ amounts of counted statements, micro-USD */
  earnedMicroUsd: number
  /** hours covered by counted statements */
  servedHours: number
  /** servedHours / Σ lease spans (1 with no statements) */
  uptime: number
}

/** The service earnings of `providerId` from any statements (others' are skipped). */
export function computeServiceEarnings (statements: Iterable<VerifiedUsage>, providerId: string): ServiceEarnings {
  const own = [...statements].filter(v => v.providerId === providerId)
  const { counted, ignored } = countUsage(own)
  const spans = new Map<string, { start: number, end: number }>()
  const out: ServiceEarnings = {
    statements: counted.length,
    ignored: { duplicate: 0, overlap: 0 },
    leases: 0,
    requests: 0,
    gpuHours: 0,
    bytesIn: 0,
    bytesOut: 0,
    earnedMicroUsd: 0,
    servedHours: 0,
    uptime: 1
  }
  for (const i of ignored) out.ignored[i.verdict]++
  let servedMs = 0
  let gpuMs = 0
  for (const v of counted) {
    const u = v.usage
    out.requests += u.requests
    gpuMs += u.gpuMs
    out.bytesIn += u.bytesIn
    out.bytesOut += u.bytesOut
    out.earnedMicroUsd += u.amountMicroUsd
    servedMs += u.intervalEnd - u.intervalStart
    const key = `${v.renterId}/${Buffer.from(u.leaseId).toString('hex')}`
    const span = spans.get(key)
    if (span == null) spans.set(key, { start: u.intervalStart, end: u.intervalEnd })
    else { span.start = Math.min(span.start, u.intervalStart); span.end = Math.max(span.end, u.intervalEnd) }
  }
  let spanMs = 0
  for (const s of spans.values()) spanMs += s.end - s.start
  out.leases = spans.size
  out.gpuHours = gpuMs / 3600_000
  out.servedHours = servedMs / 3600_000
  out.uptime = spanMs > 0 ? Math.min(1, servedMs / spanMs) : 1
  return out
}
