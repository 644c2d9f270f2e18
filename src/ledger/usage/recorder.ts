/**
 * Appends co-signed usage statements to our own feed: each is verified first (both
 * signatures, every rule, we are one of its parties), then checked against the statements
 * our feed already holds, so it never carries the same statement twice or two overlapping
 * intervals of one lease (LedgerError ERR_LEDGER_USAGE_OVERLAP). One at a time, so two racing appends cannot
 * both pass the check.
 */

import { decodeStoredBody } from '../entries/body.js'
import { LedgerEntry, type LedgerRecord } from '../entries/entry.js'
import { UsageBook } from './book.js'
import { openCoSignedUsage, type VerifiedUsage } from './statement.js'

export class UsageRecorder {
  readonly book = new UsageBook()
  private queue: Promise<unknown> = Promise.resolve()

  constructor (
    private readonly self: { id: string, bytes: Uint8Array },
    private readonly append: (kind: LedgerEntry.BodyKind, body: Uint8Array) => Promise<LedgerRecord>
  ) {}

  /** Learns our held statements from the stored entries (called for every entry at start). */
  noteStored (record: LedgerRecord): void {
    if (record.authorId !== this.self.id || record.kind !== LedgerEntry.BodyKind.USAGE) return
    const body = decodeStoredBody(record)
    if (body.kind === 'usage') this.book.add(body.usage)
  }

  /**
   * Verifies `body` (an encoded CoSignedUsage) and appends it; throws LedgerError ERR_LEDGER_USAGE
   * or ERR_LEDGER_USAGE_OVERLAP.
   */
  async record (body: Uint8Array): Promise<{ record: LedgerRecord, usage: VerifiedUsage }> {
    const usage = await openCoSignedUsage(body, { author: this.self.bytes })
    const next = this.queue.then(async () => {
      const refused = this.book.check(usage)
      if (refused != null) throw refused
      const record = await this.append(LedgerEntry.BodyKind.USAGE, body)
      this.book.add(usage)
      return { record, usage }
    })
    this.queue = next.catch(() => {})
    return await next
  }
}
