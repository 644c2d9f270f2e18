/**
 * Entries held ahead of their author's head until the gap before them fills (the ingest step
 * stores them then, in order). In memory only and bounded: in all, and per author. Each
 * remembers what admission charged it, to be given back when it leaves.
 */

import type { PendingCharge } from './admission.js'
import type { VerifiedEntry } from './verify.js'

export interface Pending {
  item: VerifiedEntry
  charge?: PendingCharge
}

/** Most entries held pending in all, by default. */
export const MAX_PENDING = 4096
/** Most entries held pending for one author. */
const MAX_PENDING_PER_AUTHOR = 256

export class PendingEntries {
  private readonly byAuthor = new Map<string, Map<number, Pending>>()
  private count = 0
  private readonly max: number

  constructor (max = MAX_PENDING) {
    this.max = max
  }

  get size (): number {
    return this.count
  }

  /** The entry held at `seq` of `authorId`'s feed. */
  get (authorId: string, seq: number): VerifiedEntry | undefined {
    return this.byAuthor.get(authorId)?.get(seq)?.item
  }

  /** Whether one more entry of `authorId` may be held. */
  hasRoom (authorId: string): boolean {
    return this.count < this.max && (this.byAuthor.get(authorId)?.size ?? 0) < MAX_PENDING_PER_AUTHOR
  }

  add (item: VerifiedEntry, charge?: PendingCharge): void {
    const { authorId, seq } = item.record
    let waiting = this.byAuthor.get(authorId)
    if (waiting == null) this.byAuthor.set(authorId, waiting = new Map())
    waiting.set(seq, { item, charge })
    this.count++
  }

  /** Removes and returns the entry held at `seq` of `authorId`'s feed. */
  take (authorId: string, seq: number): Pending | undefined {
    const waiting = this.byAuthor.get(authorId)
    const held = waiting?.get(seq)
    if (waiting == null || held == null) return undefined
    waiting.delete(seq)
    this.count--
    if (waiting.size === 0) this.byAuthor.delete(authorId)
    return held
  }
}
