/**
 * A renter's cache of capability records it verified, so a repeated query need not ask each
 * provider again. Bounded in count (oldest fetch evicted first) and never past a record's
 * expiry. It stores envelopes only: whoever uses an entry opens it again (signature, peer
 * binding, expiry) and applies the filters to it, so the cache is never trusted on its own.
 */

import type { CapabilityRecord } from '../../../protocols/capability.js'
import type { Signed } from '../../identity/index.js'

export const MAX_CACHED_RECORDS = 2048

interface Entry {
  envelope: Uint8Array
  sequence: bigint
  issuedAt: bigint
  expiresAt: number
  /** when this node last got the record from the network */
  fetchedAt: number
}

export class RecordCache {
  private readonly entries = new Map<string, Entry>()

  constructor (private readonly max = MAX_CACHED_RECORDS) {}

  get size (): number {
    return this.entries.size
  }

  /**
   * Keeps a verified record. An older record (lower sequence, or equal and issued earlier)
   * does not replace a newer unexpired one: a stale DHT copy must not roll the cache back.
   */
  put (record: Signed<CapabilityRecord>, fetchedAt: number): void {
    const id = record.signer.toString()
    const m = record.message
    const had = this.entries.get(id)
    if (had != null && had.expiresAt > fetchedAt &&
      (had.sequence > m.sequence || (had.sequence === m.sequence && had.issuedAt > m.issuedAt))) return
    this.entries.delete(id)
    this.entries.set(id, {
      envelope: record.envelope,
      sequence: m.sequence,
      issuedAt: m.issuedAt,
      expiresAt: Number(m.expiresAt),
      fetchedAt
    })
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string)
  }

  /** The envelope of `peerId`'s record when fetched within `maxAgeMs` and unexpired at `now`. */
  fresh (peerId: string, now: number, maxAgeMs: number): Uint8Array | undefined {
    const entry = this.entries.get(peerId)
    if (entry == null) return undefined
    if (entry.expiresAt <= now) {
      this.entries.delete(peerId)
      return undefined
    }
    return now - entry.fetchedAt < maxAgeMs ? entry.envelope : undefined
  }

  /** Forgets `peerId`'s record (its entry failed verification). */
  drop (peerId: string): void {
    this.entries.delete(peerId)
  }
}
