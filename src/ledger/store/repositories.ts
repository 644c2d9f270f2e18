/**
 * One small repository per key prefix of the store's LevelDB (keys.ts): each knows its keys
 * and values and nothing of the others. Reads go to LevelDB at once; writes are returned as
 * put operations, so that LedgerStore.write can join those of every repository in one atomic
 * batch.
 */

import { peerIdFromString } from '@libp2p/peer-id'
import { decodeStoredEntry, parseAuthor, type LedgerRecord } from '../entries/entry.js'
import { LedgerError } from '../errors.js'
import { ALL_ENTRIES, ALL_HEADS, ALL_SLASHED, ALL_STANDING, authorOfKey, entryKey, hashKey, hashValue, headKey, headsAfter, headValue, proofKey, readHashValue, readHead, slashedKey, standingKey } from './keys.js'
import type { Level } from 'level'

export type LedgerDb = Level<Uint8Array, Uint8Array>

export interface PutOp { type: 'put', key: Uint8Array, value: Uint8Array }
export interface DelOp { type: 'del', key: Uint8Array }

/** Entries read from LevelDB at once by EntryRepository.range(). */
const RANGE_READ_CHUNK = 64

/** 0x01: the entry envelopes, by author and seq. */
export class EntryRepository {
  constructor (private readonly db: LedgerDb) {}

  async get (author: Uint8Array, seq: number): Promise<Uint8Array | undefined> {
    return await this.db.get(entryKey(author, seq))
  }

  /**
   * Envelopes of `author` from `fromSeq` to `toSeq`, ascending: no more than `maxBytes` in
   * total (at least one when there is one).
   */
  async range (
    author: Uint8Array,
    bounds: { fromSeq: number, toSeq: number, maxBytes: number }
  ): Promise<Uint8Array[]> {
    const entries: Uint8Array[] = []
    let bytes = 0
    // read in chunks (one native call each, not one per entry: a sync serves thousands),
    // small enough that the byte bound stops the read soon after it is reached
    const iterator = this.db.values({ gte: entryKey(author, bounds.fromSeq), lte: entryKey(author, bounds.toSeq) })
    try {
      let full = false
      while (!full) {
        const chunk = await iterator.nextv(RANGE_READ_CHUNK)
        if (chunk.length === 0) break
        for (const value of chunk) {
          if (entries.length > 0 && bytes + value.byteLength > bounds.maxBytes) { full = true; break }
          entries.push(value)
          bytes += value.byteLength
        }
      }
    } finally {
      await iterator.close()
    }
    return entries
  }

  /** Every stored entry, author by author in feed order. */
  async * all (): AsyncGenerator<LedgerRecord> {
    for await (const value of this.db.values(ALL_ENTRIES)) yield decodeStoredEntry(value)
  }

  put (record: LedgerRecord): PutOp {
    return { type: 'put', key: entryKey(record.author, record.seq), value: record.envelope }
  }

  /** Up to `limit` stored entries of `author` below seq `before`, ascending (retention drops them). */
  async below (
    author: Uint8Array,
    before: number,
    limit: number
  ): Promise<Array<{ key: Uint8Array, envelope: Uint8Array }>> {
    const out: Array<{ key: Uint8Array, envelope: Uint8Array }> = []
    if (before <= 0) return out
    for await (const [key, envelope] of this.db.iterator({
      gte: entryKey(author, 0),
      lt: entryKey(author, before),
      limit
    })) {
      out.push({ key, envelope })
    }
    return out
  }

  del (key: Uint8Array): DelOp {
    return { type: 'del', key }
  }
}

/** 0x02: each feed's head: seq, hash and the feed's stored bytes. */
export class HeadRepository {
  constructor (private readonly db: LedgerDb) {}

  async * all (): AsyncGenerator<{ author: Uint8Array, seq: number, hash: Uint8Array, bytes: number, base: number }> {
    for await (const [key, value] of this.db.iterator(ALL_HEADS)) {
      yield { author: Uint8Array.from(authorOfKey(key)), ...readHead(value) }
    }
  }

  /** Up to `limit` authors in key order strictly after `after`; `more` when further heads follow. */
  async authorsAfter (after: Uint8Array | undefined, limit: number): Promise<{ authors: Uint8Array[], more: boolean }> {
    const authors: Uint8Array[] = []
    let more = false
    for await (const key of this.db.keys({ ...headsAfter(after), limit: limit + 1 })) {
      if (authors.length === limit) { more = true; break }
      authors.push(authorOfKey(key))
    }
    return { authors, more }
  }

  put (head: { author: Uint8Array, seq: number, hash: Uint8Array, bytes: number, base: number }): PutOp {
    return { type: 'put', key: headKey(head.author), value: headValue(head) }
  }
}

/** 0x03: entry hash → author and seq. */
export class HashIndex {
  constructor (private readonly db: LedgerDb) {}

  async find (hash: Uint8Array): Promise<{ author: Uint8Array, seq: number } | undefined> {
    const pointer = await this.db.get(hashKey(hash))
    return pointer == null ? undefined : readHashValue(pointer)
  }

  put (record: LedgerRecord): PutOp {
    return { type: 'put', key: hashKey(record.hash), value: hashValue(record.author, record.seq) }
  }

  del (hash: Uint8Array): DelOp {
    return { type: 'del', key: hashKey(hash) }
  }
}

/** 0x04: the slashed set: accused → hash of the entry carrying the first proof. */
export class SlashedRepository {
  constructor (private readonly db: LedgerDb) {}

  async * all (): AsyncGenerator<{ accusedId: string, proofEntry: Uint8Array }> {
    for await (const [key, value] of this.db.iterator(ALL_SLASHED)) {
      yield { accusedId: authorIdOf(authorOfKey(key)), proofEntry: Uint8Array.from(value) }
    }
  }

  put (accused: Uint8Array, proofEntry: Uint8Array): PutOp {
    return { type: 'put', key: slashedKey(accused), value: proofEntry }
  }
}

/** 0x05: fraud proofs: proof hash → hash of the entry carrying it. */
export class ProofRepository {
  put (proofHash: Uint8Array, entryHash: Uint8Array): PutOp {
    return { type: 'put', key: proofKey(proofHash), value: entryHash }
  }
}

/** 0x06: standing depth reached from a root (ingest/standing.ts), by author. */
export class StandingRepository {
  constructor (private readonly db: LedgerDb) {}

  async * all (): AsyncGenerator<{ authorId: string, depth: number }> {
    for await (const [key, value] of this.db.iterator(ALL_STANDING)) {
      yield { authorId: authorIdOf(authorOfKey(key)), depth: value[0] }
    }
  }

  put (grant: { authorId: string, depth: number }): PutOp {
    return { type: 'put', key: standingKey(peerIdFromString(grant.authorId).toMultihash().bytes), value: Uint8Array.of(grant.depth) }
  }
}

export function authorIdOf (author: Uint8Array): string {
  const parsed = parseAuthor(author)
  if (parsed == null) throw new LedgerError('ERR_LEDGER_MALFORMED', 'not an Ed25519 peer id')
  return parsed.id
}
