/**
 * The ledger's storage: one small repository per key prefix over LevelDB (repositories.ts,
 * keys.ts), and in memory the heads and the slashed set they hold. It only reads and writes:
 * what may be written is decided before, by the ingest step (ingest/ingest.ts), which hands
 * it checked entries. Every write is one LevelDB batch, written with sync so that an
 * acknowledged entry survives a crash at any point; the in-memory heads follow only once it
 * is on disk.
 */

import { Level } from 'level'
import { decodeStoredBody } from '../entries/body.js'
import { decodeStoredEntry, FraudProof, type LedgerRecord } from '../entries/entry.js'
import { ledgerClosed, LedgerError } from '../errors.js'
import { batchOps, directorySize, nextHead, type EntryToStore, type Head, type Repositories, type SlashRecord } from './batch.js'
import { authorIdOf, EntryRepository, HashIndex, HeadRepository, ProofRepository, SlashedRepository, StandingRepository, type DelOp, type LedgerDb, type PutOp } from './repositories.js'

export { nextHead }
export type { EntryToStore, Head, SlashRecord }

export interface LedgerStoreOptions {
  /** fsync every batch (default true; a benchmark may turn it off to see the verifier alone) */
  syncWrites?: boolean
}

/**
 * LevelDB's memtable (its default is 4 MiB). A sync writes tens of thousands of entries, and with
 * 4 MiB each went to a small level-0 table that compaction rewrote again and again: writing
 * 200,000 entries and their hash index cost the process 3.6–3.7 s of CPU with 32 MiB against
 * 4.2–6 s with the default (docs/scale.md). It costs up to twice this much memory (the memtable
 * and the one being flushed) and a longer log to replay after a crash.
 */
const WRITE_BUFFER_BYTES = 32 * 1024 * 1024

/** What the store holds (LedgerIngest.stats adds what waits in memory). */
export interface StoredStats {
  authors: number
  entries: number
  slashed: number
  diskBytes: number
}

type AddedListener = (record: LedgerRecord) => void

export class LedgerStore {
  readonly path: string
  private readonly db: LedgerDb
  private readonly repos: Repositories
  private readonly syncWrites: boolean
  private readonly heads = new Map<string, Head>()
  private readonly slashed = new Map<string, SlashRecord>()
  private readonly listeners = new Set<AddedListener>()
  private readonly droppedListeners = new Set<AddedListener>()
  private closed = false

  private constructor (path: string, db: LedgerDb, opts: LedgerStoreOptions) {
    this.path = path
    this.db = db
    this.syncWrites = opts.syncWrites ?? true
    this.repos = {
      entries: new EntryRepository(db),
      heads: new HeadRepository(db),
      hashes: new HashIndex(db),
      slashed: new SlashedRepository(db),
      proofs: new ProofRepository(),
      standing: new StandingRepository(db)
    }
  }

  /** Opens (creating) the store in `path` and loads heads and the slashed set. */
  static async open (path: string, opts: LedgerStoreOptions = {}): Promise<LedgerStore> {
    const db = new Level<Uint8Array, Uint8Array>(path, { keyEncoding: 'view', valueEncoding: 'view', writeBufferSize: WRITE_BUFFER_BYTES })
    await db.open()
    const store = new LedgerStore(path, db, opts)
    try {
      await store.load()
    } catch (err) {
      await db.close()
      throw err
    }
    return store
  }

  private async load (): Promise<void> {
    for await (const { author, seq, hash, bytes, base } of this.repos.heads.all()) {
      const record = await this.repos.entries.get(author, seq)
      if (record == null) throw new LedgerError('ERR_LEDGER_MALFORMED', 'ledger store: a head points at a missing entry')
      const { authorId, time, chain } = decodeStoredEntry(record)
      this.heads.set(authorId, { author, authorId, seq, hash, bytes, time, chain, base })
    }
    for await (const { accusedId, proofEntry } of this.repos.slashed.all()) {
      // a store written before protocol v2 may hold slashes by BAD_OUTPUT proofs: they no longer count
      if (!await this.isEquivocationProof(proofEntry)) continue
      this.slashed.set(accusedId, { accused: accusedId, proofEntry })
    }
  }

  private async isEquivocationProof (entryHash: Uint8Array): Promise<boolean> {
    const record = await this.getByHash(entryHash)
    const body = record == null ? undefined : decodeStoredBody(record)
    return body?.kind === 'fraud-proof' && body.proof.message.kind === FraudProof.Kind.EQUIVOCATION
  }

  async close (): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.db.close()
  }

  get isClosed (): boolean {
    return this.closed
  }

  /** Called after each entry is durably added (ours or another author's), in feed order. */
  onAdded (listener: AddedListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Called after each entry retention dropped (dropBelow) is gone from disk. */
  onDropped (listener: AddedListener): () => void {
    this.droppedListeners.add(listener)
    return () => this.droppedListeners.delete(listener)
  }

  head (authorId: string): Head | undefined {
    return this.heads.get(authorId)
  }

  allHeads (): Head[] {
    return [...this.heads.values()]
  }

  /**
   * Up to `limit` heads in key order (author length, then author bytes), strictly after
   * `after` (from the first when absent); `more` when further heads follow. Read from disk, so
   * a page costs the same whatever the number of feeds.
   */
  async headsPage (after: Uint8Array | undefined, limit: number): Promise<{ heads: Head[], more: boolean }> {
    this.assertOpen()
    const { authors, more } = await this.repos.heads.authorsAfter(after, limit)
    const heads: Head[] = []
    for (const author of authors) {
      const head = this.heads.get(authorIdOf(author))
      if (head != null) heads.push(head)
    }
    return { heads, more }
  }

  isSlashed (authorId: string): boolean {
    return this.slashed.has(authorId)
  }

  slashedAuthors (): SlashRecord[] {
    return [...this.slashed.values()]
  }

  /** The entry at `seq` of `author`'s feed; none below the feed's base (dropped, or going). */
  async get (author: Uint8Array, seq: number): Promise<LedgerRecord | undefined> {
    this.assertOpen()
    const base = this.heads.get(authorIdOf(author))?.base ?? 1
    if (seq < base) return undefined
    const value = await this.repos.entries.get(author, seq)
    return value == null ? undefined : decodeStoredEntry(value)
  }

  async getByHash (hash: Uint8Array): Promise<LedgerRecord | undefined> {
    this.assertOpen()
    const pointer = await this.repos.hashes.find(hash)
    return pointer == null ? undefined : await this.get(pointer.author, pointer.seq)
  }

  /**
   * Envelopes of `author` from `fromSeq` on, ascending and contiguous: at most `limit`, and no
   * more than `maxBytes` in total (at least one when there is one). `more` when the held feed
   * goes further.
   */
  async range (
    author: Uint8Array,
    fromSeq: number,
    limit: number,
    maxBytes = Infinity
  ): Promise<{ entries: Uint8Array[], more: boolean }> {
    this.assertOpen()
    const head = this.heads.get(authorIdOf(author))
    if (head == null || fromSeq > head.seq || limit <= 0) return { entries: [], more: false }
    // below the base nothing is held: the range starts at the base (README §7 "Retention")
    const from = Math.max(fromSeq, head.base)
    const entries = await this.repos.entries.range(author, {
      fromSeq: from,
      toSeq: Math.min(head.seq, from + limit - 1),
      maxBytes
    })
    return { entries, more: from + entries.length - 1 < head.seq }
  }

  /** Every stored entry, author by author in feed order (trusted: checked when stored). */
  async * entries (): AsyncGenerator<LedgerRecord> {
    this.assertOpen()
    yield * this.repos.entries.all()
  }

  /** The rooted standing grants written with earlier batches (ingest/standing.ts). */
  async * standingGrants (): AsyncGenerator<{ authorId: string, depth: number }> {
    this.assertOpen()
    yield * this.repos.standing.all()
  }

  async stats (): Promise<StoredStats> {
    let entries = 0
    for (const head of this.heads.values()) entries += head.seq - head.base + 1
    return { authors: this.heads.size, entries, slashed: this.slashed.size, diskBytes: await directorySize(this.path) }
  }

  /**
   * One atomic, synced batch: entries (in feed order, each extending its feed's head or an
   * earlier one of the batch), heads, hash index, slashed set, proofs, standing grants.
   */
  async write (
    batch: readonly EntryToStore[],
    grants: ReadonlyArray<{ authorId: string, depth: number }> = []
  ): Promise<void> {
    this.assertOpen()
    const { ops, heads, slashes } = batchOps(batch, grants, {
      repos: this.repos,
      heldHead: id => this.heads.get(id),
      isSlashed: id => this.slashed.has(id)
    })
    await this.db.batch(ops, { sync: this.syncWrites })
    for (const [id, head] of heads) this.heads.set(id, head)
    for (const [id, slash] of slashes) this.slashed.set(id, slash)
    for (const { record } of batch) {
      for (const listener of this.listeners) {
        try { listener(record) } catch {}
      }
    }
  }

  /**
   * Drops up to `limit` stored entries of `authorId`'s feed below seq `before` (never its head),
   * with their hash-index keys, and moves the feed's base up to `before`: retention (README §7
   * "Retention") and what a rebased feed left below its base. One atomic, synced batch. The
   * ingest step calls it in its queue, so no write runs beside it. Returns the entries dropped
   * and their bytes that counted in the feed (those at or above the old base).
   */
  async dropBelow (authorId: string, before: number, limit: number): Promise<{ dropped: number, bytes: number }> {
    this.assertOpen()
    const head = this.heads.get(authorId)
    if (head == null) return { dropped: 0, bytes: 0 }
    const until = Math.min(before, head.seq)
    const stale = await this.repos.entries.below(head.author, until, limit)
    const ops: Array<PutOp | DelOp> = []
    const records: LedgerRecord[] = []
    let bytes = 0
    let last = 0
    for (const { key, envelope } of stale) {
      const record = decodeStoredEntry(envelope)
      records.push(record)
      ops.push(this.repos.entries.del(key), this.repos.hashes.del(record.hash))
      if (record.seq >= head.base) bytes += envelope.byteLength
      last = record.seq
    }
    // a read cut short by `limit` moves the base only past what it dropped
    const base = Math.max(head.base, stale.length === limit ? last + 1 : until)
    const moved: Head = { ...head, base, bytes: head.bytes - bytes }
    if (ops.length === 0 && base === head.base) return { dropped: 0, bytes: 0 }
    ops.push(this.repos.heads.put(moved))
    await this.db.batch(ops, { sync: this.syncWrites })
    this.heads.set(authorId, moved)
    for (const record of records) {
      for (const listener of this.droppedListeners) {
        try { listener(record) } catch {}
      }
    }
    return { dropped: stale.length, bytes }
  }

  private assertOpen (): void {
    if (this.closed) throw ledgerClosed()
  }
}
