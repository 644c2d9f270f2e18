/**
 * A provider's uptime in its own feed: it samples its GPU slots, and every summary interval
 * appends a HeartbeatSummary of the time since the last one (protocols/README.md §7): how
 * long its windows were open, how long it was up in them, and how busy its slots were.
 */

import { HeartbeatSummary, LedgerEntry, type LedgerRecord } from '../entries/entry.js'
import { decodeStoredBody } from '../entries/body.js'

export interface UptimeOptions {
  /** the node's heartbeat interval (summaries count heartbeats in it; default 10 s) */
  heartbeatMs?: number
  /** whether the provider's advertised windows are open at a time (default: always) */
  isAvailable?: (at: number) => boolean
  /** the provider's GPU slots now */
  slots?: () => { total: number, busy: number }
}

/** A gap between summaries longer than this is a new start, not that much downtime. */
const MAX_GAP_MS = 7 * 24 * 3600_000

export class UptimeReporter {
  private readonly opts: UptimeOptions
  private readonly selfId: string
  private readonly append: (kind: LedgerEntry.BodyKind, body: Uint8Array) => Promise<LedgerRecord>
  private readonly startedAt = Date.now()
  private lastSummaryEnd?: number
  private readonly samples = { total: 0, busyPpm: 0, count: 0 }

  constructor (
    opts: UptimeOptions,
    selfId: string,
    append: (kind: LedgerEntry.BodyKind, body: Uint8Array) => Promise<LedgerRecord>
  ) {
    this.opts = opts
    this.selfId = selfId
    this.append = append
  }

  /** Learns, from a stored entry, where our last summary ended (called for every entry at start). */
  noteStored (record: LedgerRecord): void {
    if (record.authorId !== this.selfId || record.kind !== LedgerEntry.BodyKind.HEARTBEAT_SUMMARY) return
    const body = decodeStoredBody(record)
    if (body.kind === 'heartbeat-summary') this.lastSummaryEnd = Math.max(this.lastSummaryEnd ?? 0, Number(body.summary.periodEnd))
  }

  /** How often to sample the slots for a summary every `summaryMs`. */
  sampleEveryMs (summaryMs: number): number {
    return Math.max(100, Math.min(this.opts.heartbeatMs ?? 10_000, summaryMs / 4))
  }

  sampleSlots (): void {
    const slots = this.opts.slots?.()
    if (slots == null || slots.total <= 0) return
    this.samples.total = slots.total
    this.samples.busyPpm += Math.round(1_000_000 * Math.min(slots.busy, slots.total) / slots.total)
    this.samples.count++
  }

  /** Appends the provider's uptime since its last summary (a gap while it was down counts as down). */
  async appendSummary (now = Date.now()): Promise<LedgerRecord | undefined> {
    const previous = this.lastSummaryEnd
    const start =
      previous != null && previous < now && now - previous < MAX_GAP_MS ? previous : Math.min(this.startedAt, now - 1)
    if (now <= start) return undefined
    const available = availableMs(this.opts.isAvailable, start, now)
    const upFrom = Math.max(start, this.startedAt)
    const up = Math.min(available, availableMs(this.opts.isAvailable, upFrom, now))
    const interval = this.opts.heartbeatMs ?? 10_000
    const samples = this.samples
    const body = HeartbeatSummary.encode({
      periodStart: BigInt(start),
      periodEnd: BigInt(now),
      heartbeatsSent: Math.min(0xffffffff, Math.floor((now - upFrom) / interval)),
      intervalMs: Math.min(0xffffffff, interval),
      availableMs: BigInt(available),
      upMs: BigInt(up),
      slotsTotal: samples.total,
      busyPpm: samples.count > 0 ? Math.round(samples.busyPpm / samples.count) : 0
    })
    samples.busyPpm = 0
    samples.count = 0
    const record = await this.append(LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, body)
    this.lastSummaryEnd = now
    return record
  }
}

/** ms of [from, to) inside the windows (minute resolution, bounded). */
function availableMs (isAvailable: ((at: number) => boolean) | undefined, from: number, to: number): number {
  if (to <= from) return 0
  if (isAvailable == null) return to - from
  const step = Math.max(60_000, Math.ceil((to - from) / 20_000))
  let total = 0
  for (let t = from; t < to; t += step) {
    if (isAvailable(t)) total += Math.min(step, to - t)
  }
  return total
}
