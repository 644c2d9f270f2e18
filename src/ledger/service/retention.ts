/**
 * The retention pass (protocols/README.md §7 "Retention"): every hour, each feed but our own
 * drops the entries older than the horizon, keeping as its base the newest entry at least that
 * old (and a day more: RETENTION_MARGIN_MS), so a fresh node that pulls the feed from us takes
 * it from there. A feed never drops a fraud proof or anything after one (a slash rests on it),
 * nor its head. A node with `retain: 'all'` (a seed that opts in) runs no pass.
 */

import { decodeStoredEntry, LedgerEntry } from '../entries/entry.js'
import { RETENTION_MARGIN_MS, RETENTION_MS } from '../entries/retention.js'
import type { LedgerIngest } from '../ingest/ingest.js'
import type { Head } from '../store/store.js'

/** Entries read to find new bases in one pass at most, over every feed; the next pass goes on. */
const MAX_SCANNED_PER_PASS = 100_000
/** Entries read from the store at once while scanning a feed. */
const SCAN_CHUNK = 256

export type RetainMode = 'horizon' | 'all'

export interface RetentionReport {
  /** feeds whose base moved */
  feeds: number
  /** entries dropped */
  dropped: number
  /** entries read to find the bases */
  scanned: number
}

export class RetentionPass {
  private readonly ledger: () => LedgerIngest | undefined
  private readonly selfId: string
  private readonly now: () => number
  private running: Promise<RetentionReport> | undefined

  constructor (opts: { ledger: () => LedgerIngest | undefined, selfId: string, now?: () => number }) {
    this.ledger = opts.ledger
    this.selfId = opts.selfId
    this.now = opts.now ?? Date.now
  }

  /** One pass over every feed (one at a time: a second call while one runs gets its report). */
  async run (): Promise<RetentionReport> {
    this.running ??= this.pass().finally(() => { this.running = undefined })
    return await this.running
  }

  private async pass (): Promise<RetentionReport> {
    const report: RetentionReport = { feeds: 0, dropped: 0, scanned: 0 }
    const cutoff = this.now() - RETENTION_MS - RETENTION_MARGIN_MS
    for (const head of this.ledger()?.store.allHeads() ?? []) {
      const ledger = this.ledger()
      if (ledger == null || report.scanned >= MAX_SCANNED_PER_PASS) break
      if (head.authorId === this.selfId) continue
      const base = await this.newBase(ledger, head, cutoff, report)
      // also what a feed started anew at a base left below it (dropped after its write, unless a crash came first)
      const dropped = await ledger.dropBelow(head.authorId, Math.max(base, head.base))
      if (dropped > 0 || base > head.base) report.feeds++
      report.dropped += dropped
    }
    return report
  }

  /**
   * The newest seq of `head`'s feed whose entry is dated at or before `cutoff`, no later than
   * its first fraud proof, nor than its head; its base when none is.
   */
  private async newBase (ledger: LedgerIngest, head: Head, cutoff: number, report: RetentionReport): Promise<number> {
    let base = head.base
    for (let from = head.base; from <= head.seq && report.scanned < MAX_SCANNED_PER_PASS;) {
      const { entries } = await ledger.store.range(head.author, from, SCAN_CHUNK)
      if (entries.length === 0) break
      for (const envelope of entries) {
        report.scanned++
        const record = decodeStoredEntry(envelope)
        if (record.time > cutoff) return base
        base = record.seq
        if (record.kind === LedgerEntry.BodyKind.FRAUD_PROOF) return base
      }
      from += entries.length
    }
    return base
  }
}
