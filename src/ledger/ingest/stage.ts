/**
 * A batch being assembled by the ingest step, and the heads and slashed set as it will leave
 * them once written: each entry placed is checked against the staged head of its feed, which
 * may be an earlier entry of the same batch.
 */

import { nextHead, type Head, type LedgerStore } from '../store/store.js'
import type { VerifiedEntry } from './verify.js'

export class StagedBatch {
  readonly entries: VerifiedEntry[] = []
  private readonly store: LedgerStore
  private readonly heads = new Map<string, Head>()
  private readonly slashes = new Set<string>()

  constructor (store: LedgerStore) {
    this.store = store
  }

  head (authorId: string): Head | undefined {
    return this.heads.get(authorId) ?? this.store.head(authorId)
  }

  /** slashed already, or by a proof in the batch (ours or another node's) */
  slashed (authorId: string): boolean {
    return this.slashes.has(authorId) || this.store.isSlashed(authorId)
  }

  /** The entry of the batch at `seq` of `authorId`'s feed. */
  find (authorId: string, seq: number): VerifiedEntry | undefined {
    return this.entries.find(v => v.record.authorId === authorId && v.record.seq === seq)
  }

  add (entry: VerifiedEntry): void {
    const { record } = entry
    this.entries.push(entry)
    this.heads.set(record.authorId, nextHead(this.head(record.authorId), entry))
    if (entry.slashes != null) this.slashes.add(entry.slashes.accused)
  }
}
