/**
 * The quarantine: entries of authors without standing in this node's view (standing.ts),
 * held in memory, bounded in bytes and count, until something with standing names their
 * author (then the ingest step promotes the feed) or they are evicted to make room. Nothing in here
 * is served by sync, gossiped onward or counted for reputation, and nothing is written to
 * disk: junk from throwaway keys costs this node bounded memory and no storage.
 *
 * A quarantined feed is held from seq 1 (or from a range's retention base), contiguous
 * (chain-checked like a stored one); an entry that does not extend it is dropped (sync pulls
 * it again once the author has standing).
 * When full, whole feeds are evicted: least referenced (by other quarantined entries) first,
 * then oldest. Entries with standing never come here, so they are never evicted for junk.
 */

import { equals } from 'uint8arrays/equals'
import type { LedgerError } from '../errors.js'
import type { Quotas } from './quota.js'
import type { VerifiedEntry } from './verify.js'

export interface QuarantineLimits {
  /** all quarantined envelope bytes (default 8 MiB) */
  maxBytes: number
  /** all quarantined entries (default 2048) */
  maxEntries: number
}

export const QUARANTINE_LIMITS: QuarantineLimits = { maxBytes: 8 * 1024 * 1024, maxEntries: 2048 }

interface Feed {
  /** the seq of entries[0]: 1, or a range's retention base */
  base: number
  entries: VerifiedEntry[]
  bytes: number
  /** arrival order of the feed's first entry */
  arrived: number
  /** the authors this feed's entries name (counted in Quarantine.named while held) */
  names: string[]
}

export type QuarantineResult =
  | { status: 'quarantined' }
  | { status: 'duplicate' }
  /** same seq, another hash: an equivocation by an author nobody vouches for (no proof is built) */
  | { status: 'equivocation', held: VerifiedEntry }
  /** does not extend the quarantined feed: dropped */
  | { status: 'dropped' }
  | { status: 'rejected', error: LedgerError<'ERR_LEDGER_QUOTA'> }

export interface QuarantineStats {
  authors: number
  entries: number
  bytes: number
  evicted: number
}

export class Quarantine {
  private readonly limits: QuarantineLimits
  private readonly quotas: Quotas
  private readonly feeds = new Map<string, Feed>()
  /** how many held entries of other authors name each author (held or not yet seen) */
  private readonly named = new Map<string, number>()
  private bytes = 0
  private count = 0
  private arrivals = 0
  private evicted = 0

  constructor (quotas: Quotas, limits: Partial<QuarantineLimits> = {}) {
    this.quotas = quotas
    this.limits = { ...QUARANTINE_LIMITS, ...limits }
  }

  /** The quarantined feed's last seq (0 when none is held). */
  seq (authorId: string): number {
    const feed = this.feeds.get(authorId)
    return feed == null ? 0 : feed.base + feed.entries.length - 1
  }

  /** Whether an entry of a new quarantined author could be held without evicting anyone. */
  hasRoom (): boolean {
    return this.count < this.limits.maxEntries && this.bytes < this.limits.maxBytes
  }

  stats (): QuarantineStats {
    return { authors: this.feeds.size, entries: this.count, bytes: this.bytes, evicted: this.evicted }
  }

  /** Holds `item` of an author without standing; `names` are the authors it names. */
  offer (item: VerifiedEntry, names: readonly string[]): QuarantineResult {
    const { record } = item
    const feed = this.feeds.get(record.authorId)
    // a feed held from nothing may start at a range's retention base
    const base = feed?.base ?? (item.base === true ? record.seq : 1)
    const held = feed == null ? base - 1 : base + feed.entries.length - 1
    if (record.seq < base) return { status: 'dropped' }
    if (record.seq <= held) {
      const same = (feed as Feed).entries[record.seq - base]
      return equals(same.record.hash, record.hash) ? { status: 'duplicate' } : { status: 'equivocation', held: same }
    }
    const prev = feed == null ? undefined : feed.entries[feed.entries.length - 1].record.hash
    if (record.seq !== held + 1 || (prev != null ? !equals(record.prevHash, prev) : base === 1 && record.prevHash.length !== 0)) return { status: 'dropped' }
    const size = record.envelope.byteLength
    if (size > this.limits.maxBytes) return { status: 'dropped' }
    const over = this.quotas.check(record, 'none', record.authorId)
    if (over != null) return { status: 'rejected', error: over }
    if (!this.makeRoom(size, record.authorId)) return { status: 'dropped' }
    let target = this.feeds.get(record.authorId)
    if (target == null) {
      this.feeds.set(record.authorId, (target = { base, entries: [], bytes: 0, arrived: this.arrivals++, names: [] }))
    }
    target.entries.push(item)
    target.bytes += size
    this.bytes += size
    this.count++
    this.quotas.charge(record, 'none', record.authorId)
    for (const name of names) {
      if (name === record.authorId) continue
      target.names.push(name)
      this.named.set(name, (this.named.get(name) ?? 0) + 1)
    }
    return { status: 'quarantined' }
  }

  /** Removes and returns `authorId`'s quarantined feed (its author gained standing), in seq order. */
  take (authorId: string): VerifiedEntry[] {
    const feed = this.feeds.get(authorId)
    if (feed == null) return []
    this.drop(authorId, feed)
    return feed.entries
  }

  /**
   * Evicts whole feeds (least referenced, then oldest) until `size` more bytes and one more
   * entry fit. False when only `keep`'s own feed was left to evict (then it is gone too).
   */
  private makeRoom (size: number, keep: string): boolean {
    while (this.count + 1 > this.limits.maxEntries || this.bytes + size > this.limits.maxBytes) {
      let victim: { id: string, feed: Feed, refs: number } | undefined
      for (const [id, feed] of this.feeds) {
        if (id === keep) continue
        const refs = this.named.get(id) ?? 0
        if (victim == null || refs < victim.refs || (refs === victim.refs && feed.arrived < victim.feed.arrived)) {
          victim = { id, feed, refs }
        }
      }
      if (victim == null) {
        const own = this.feeds.get(keep)
        if (own != null) this.drop(keep, own)
        return false
      }
      this.drop(victim.id, victim.feed)
      this.evicted += victim.feed.entries.length
    }
    return true
  }

  private drop (authorId: string, feed: Feed): void {
    this.feeds.delete(authorId)
    this.bytes -= feed.bytes
    this.count -= feed.entries.length
    this.quotas.release(authorId, feed.bytes)
    this.quotas.forget(authorId)
    for (const name of feed.names) {
      const left = (this.named.get(name) ?? 1) - 1
      if (left > 0) this.named.set(name, left)
      else this.named.delete(name)
    }
  }
}
