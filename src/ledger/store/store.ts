/**
 * The ledger's storage: a small repository over LevelDB with prefixed binary keys (keys.ts).
 * Every change (appending our own entry, ingesting others') is one LevelDB batch, written
 * with sync so that an acknowledged entry survives a crash at any point, and all of them go
 * through one queue, so the in-memory heads always equal what is on disk. Verification of
 * incoming entries (the expensive part) runs outside the queue, many at once.
 */

import { Level } from 'level'
import { equals } from 'uint8arrays/equals'
import { decodeStoredBody } from '../entries/body.js'
import { chainOrderError, decodeEntryEnvelope, decodeStoredEntry, FraudProof, LedgerEntry, sealEntry, timeOrderError, type LedgerRecord } from '../entries/entry.js'
import { Admission, type AdmissionOptions, type PendingCharge } from '../ingest/admission.js'
import { BrokenChainError, EntrySignatureError, LedgerClosedError, LedgerEntryError, MalformedEntryError, QuotaExceededError } from '../errors.js'
import { buildEquivocationProof } from '../entries/fraud.js'
import { ALL_ENTRIES, ALL_HEADS, ALL_SLASHED, ALL_STANDING, authorOfKey, entryKey, hashKey, headsAfter, readHashValue, readHead } from './keys.js'
import { authorIdOf, batchOps, decodeProof, directorySize, type Head, type SlashRecord } from './batch.js'
import type { QuarantineStats } from '../ingest/quarantine.js'
import { ProofBudget, type ProofBudgetLimits } from '../ingest/quota.js'
import { verifyEntries, verifyEntry, verifyRange, type RangeExpectation, type VerifiedEntry, type VerifyEntryOptions } from '../ingest/verify.js'
import { MAX_BYTES } from '../../../protocols/codec.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'
import { verifyOpenedAsync } from '../../identity/index.js'

export type { Head, SlashRecord }

/** What happened to one ingested entry. */
export type IngestOutcome =
  | { status: 'added', record: LedgerRecord }
  | { status: 'duplicate', record: LedgerRecord }
  /** ahead of the held head: kept in memory until the gap is filled */
  | { status: 'pending', record: LedgerRecord }
  /** its author has no standing in this node's view: held in the quarantine, not stored (admission.ts) */
  | { status: 'quarantined', record: LedgerRecord }
  /**
   * a second entry at a held (or pending) seq: the author equivocated; `proof` is our entry
   * carrying the fraud proof, absent when the author is slashed already (or one is staged), or
   * when our proof budget is spent (then it is not slashed here until a proof of it is stored)
   */
  | { status: 'equivocation', record: LedgerRecord, held: LedgerRecord, proof?: LedgerRecord }
  | { status: 'rejected', error: LedgerEntryError }

export interface LedgerStoreOptions {
  /** our node key: signs our own feed and the fraud proofs we build */
  privateKey: Ed25519PrivateKey
  peerId: PeerId
  /** the clock (tests move it) */
  now?: () => number
  /** bound on entries held ahead of their author's head (default 4096; 256 per author) */
  maxPending?: number
  /**
   * standing, quarantine and quotas (admission.ts); without it every verified entry of any
   * author is stored (tests and tools that fill a store directly)
   */
  admission?: Omit<AdmissionOptions, 'selfId'>
  /** fsync every batch (default true; a benchmark may turn it off to see the verifier alone) */
  syncWrites?: boolean
  /** the bound on fraud proofs we write into our own feed (quota.ts PROOF_BUDGET) */
  proofBudget?: Partial<ProofBudgetLimits>
}

export interface StoreStats {
  authors: number
  entries: number
  slashed: number
  pending: number
  diskBytes: number
  /** present when the store admits by standing */
  quarantine?: QuarantineStats
}

type AddedListener = (record: LedgerRecord) => void

/** The heads as a batch being assembled will leave them, and how to add to that batch. */
interface Stager {
  head(authorId: string): Head | undefined
  /** slashed already, or by a proof in the batch (ours or another node's) */
  slashed(authorId: string): boolean
  add(entry: VerifiedEntry): void
}

/** An entry held ahead of its author's head, and what it was charged (admission.ts). */
interface Pending {
  item: VerifiedEntry
  charge?: PendingCharge
}

/** Entries read from LevelDB at once by range(). */
const RANGE_READ_CHUNK = 64
/** Most entries held pending for one author. */
const MAX_PENDING_PER_AUTHOR = 256

export class LedgerStore {
  readonly path: string
  private readonly db: Level<Uint8Array, Uint8Array>
  private readonly opts: LedgerStoreOptions
  private readonly now: () => number
  private readonly heads = new Map<string, Head>()
  private readonly slashed = new Map<string, SlashRecord>()
  private readonly pending = new Map<string, Map<number, Pending>>()
  private readonly proofBudget: ProofBudget
  private pendingCount = 0
  private readonly listeners = new Set<AddedListener>()
  /** present when the store admits by standing */
  readonly admission?: Admission
  private queue: Promise<unknown> = Promise.resolve()
  private closed = false
  readonly selfId: string

  private constructor (path: string, db: Level<Uint8Array, Uint8Array>, opts: LedgerStoreOptions) {
    this.path = path
    this.db = db
    this.opts = opts
    this.now = opts.now ?? Date.now
    this.selfId = opts.peerId.toString()
    if (opts.admission != null) this.admission = new Admission({ ...opts.admission, selfId: this.selfId, now: this.now })
    this.proofBudget = new ProofBudget(this.now, opts.proofBudget)
  }

  /** Opens (creating) the store in `path` and loads heads and the slashed set. */
  static async open (path: string, opts: LedgerStoreOptions): Promise<LedgerStore> {
    const db = new Level<Uint8Array, Uint8Array>(path, { keyEncoding: 'view', valueEncoding: 'view' })
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
    for await (const [key, value] of this.db.iterator(ALL_HEADS)) {
      const author = authorOfKey(key)
      const { seq, hash, bytes } = readHead(value)
      const record = await this.db.get(entryKey(author, seq))
      if (record == null) throw new MalformedEntryError('ledger store: a head points at a missing entry')
      const { authorId, time, chain } = decodeStoredEntry(record)
      this.heads.set(authorId, { author: Uint8Array.from(author), authorId, seq, hash, bytes, time, chain })
    }
    if (this.admission != null) {
      for await (const [key, value] of this.db.iterator(ALL_STANDING)) this.admission.standing.load(authorIdOf(authorOfKey(key)), value[0])
      for (const head of this.heads.values()) this.admission.loadFeed(head.authorId, head.bytes)
    }
    for await (const [key, value] of this.db.iterator(ALL_SLASHED)) {
      // a store written before protocol v2 may hold slashes by BAD_OUTPUT proofs: they no longer count
      if (!await this.isEquivocationProof(value)) continue
      const id = authorIdOf(authorOfKey(key))
      this.slashed.set(id, { accused: id, proofEntry: Uint8Array.from(value) })
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
    await this.queue.catch(() => {})
    await this.db.close()
  }

  /** Called after each entry is durably added (ours or another author's), in feed order. */
  onAdded (listener: AddedListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
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
    const heads: Head[] = []
    let more = false
    for await (const key of this.db.keys({ ...headsAfter(after), limit: limit + 1 })) {
      if (heads.length === limit) { more = true; break }
      const head = this.heads.get(authorIdOf(authorOfKey(key)))
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

  async get (author: Uint8Array, seq: number): Promise<LedgerRecord | undefined> {
    this.assertOpen()
    const value = await this.db.get(entryKey(author, seq))
    return value == null ? undefined : decodeStoredEntry(value)
  }

  async getByHash (hash: Uint8Array): Promise<LedgerRecord | undefined> {
    this.assertOpen()
    const pointer = await this.db.get(hashKey(hash))
    if (pointer == null) return undefined
    const { author, seq } = readHashValue(pointer)
    return await this.get(author, seq)
  }

  /**
   * Envelopes of `author` from `fromSeq` on, ascending and contiguous: at most `limit`, and no
   * more than `maxBytes` in total (at least one when there is one). `more` when the held feed
   * goes further.
   */
  async range (author: Uint8Array, fromSeq: number, limit: number, maxBytes = Infinity): Promise<{ entries: Uint8Array[], more: boolean }> {
    this.assertOpen()
    const head = this.heads.get(authorIdOf(author))
    if (head == null || fromSeq > head.seq || limit <= 0) return { entries: [], more: false }
    const entries: Uint8Array[] = []
    let bytes = 0
    const last = Math.min(head.seq, fromSeq + limit - 1)
    // read in chunks (one native call each, not one per entry: a sync serves thousands),
    // small enough that the byte bound stops the read soon after it is reached
    const iterator = this.db.values({ gte: entryKey(author, fromSeq), lte: entryKey(author, last) })
    try {
      let full = false
      while (!full) {
        const chunk = await iterator.nextv(RANGE_READ_CHUNK)
        if (chunk.length === 0) break
        for (const value of chunk) {
          if (entries.length > 0 && bytes + value.byteLength > maxBytes) { full = true; break }
          entries.push(value)
          bytes += value.byteLength
        }
      }
    } finally {
      await iterator.close()
    }
    return { entries, more: fromSeq + entries.length - 1 < head.seq }
  }

  /** Every stored entry, author by author in feed order (trusted: verified when stored). */
  async * entries (): AsyncGenerator<LedgerRecord> {
    this.assertOpen()
    for await (const value of this.db.values(ALL_ENTRIES)) {
      yield decodeStoredEntry(value)
    }
  }

  async stats (): Promise<StoreStats> {
    let entries = 0
    for (const head of this.heads.values()) entries += head.seq
    return { authors: this.heads.size, entries, slashed: this.slashed.size, pending: this.pendingCount, diskBytes: await directorySize(this.path), quarantine: this.admission?.stats() }
  }

  /**
   * Signs and durably appends an entry to our own feed; resolves once it is on disk. Never
   * refused for a quota or the proof budget: our receipts, attestations, usage and summaries
   * are what this node itself did (a lost receipt loses a job's evidence), and their number is
   * bounded by the jobs and heartbeats it runs, not by what others send.
   */
  async append (kind: LedgerEntry.BodyKind, body: Uint8Array): Promise<LedgerRecord> {
    return await this.serial(async () => {
      const head = this.heads.get(this.selfId)
      const now = this.now()
      const record = sealEntry(this.opts.privateKey, this.opts.peerId, {
        seq: (head?.seq ?? 0) + 1,
        prevHash: head?.hash ?? new Uint8Array(0),
        // never below our previous entry's time, whatever the clock did
        time: Math.max(now, head?.time ?? 0, 0),
        kind,
        body
      })
      // our own entries pass the same checks as anyone's, so peers never refuse them; except
      // after our clock was set back (it ran fast): an entry dated at our head's time is still
      // written (refusing it would lose a receipt or summary), and peers take it once it is due
      const verified = await verifyEntry(record.envelope, { now: Math.max(now, head?.time ?? 0), checkSignature: false })
      // what our entry names gains standing: its quarantined feed is stored with it
      const { stage, batch } = this.stager()
      this.admit(verified, stage)
      await this.write(batch)
      return record
    })
  }

  /**
   * `peerId` is connected to us now: it has (provisional) standing, and what it wrote that
   * waited in the quarantine is stored. Resolves once written.
   */
  async grantConnected (peerId: string): Promise<void> {
    const admission = this.admission
    if (admission == null || this.closed) return
    await this.serial(async () => {
      if (!admission.connect(peerId)) return
      const { stage, batch } = this.stager()
      this.promote(peerId, stage)
      if (batch.length > 0) await this.write(batch)
    })
  }

  /**
   * Verifies and adds entries from the network (any authors, any order). Verification runs
   * in parallel (also with the writes of earlier calls); adding is serialised in call order.
   * Entries that do not attach yet are held pending; entries of authors without standing go
   * to the quarantine.
   */
  async ingest (envelopes: readonly Uint8Array[], opts: Omit<VerifyEntryOptions, 'now'> & { range?: RangeExpectation } = {}): Promise<IngestOutcome[]> {
    this.assertOpen()
    // verification runs now, beside earlier batches' writes; attaching keeps the call order.
    // A range of one feed (sync) is verified as a whole: one signature for its chain-2 entries
    const verifying = opts.range != null ? verifyRange(envelopes, opts.range, { ...opts, now: this.now() }) : verifyEntries(envelopes, { ...opts, now: this.now() })
    verifying.catch(() => {})
    return await this.serial(async () => await this.attach(await verifying))
  }

  /** ingest() of one entry that throws its LedgerEntryError instead of returning it. */
  async ingestOne (envelope: Uint8Array, opts: Omit<VerifyEntryOptions, 'now'> = {}): Promise<Exclude<IngestOutcome, { status: 'rejected' }>> {
    const [outcome] = await this.ingest([envelope], opts)
    if (outcome.status === 'rejected') throw outcome.error
    return outcome
  }

  /** A batch being assembled, and the heads as it will leave them. */
  private stager (): { stage: Stager, batch: VerifiedEntry[] } {
    const batch: VerifiedEntry[] = []
    const staged = new Map<string, Head>()
    const stagedSlashes = new Set<string>()
    const head = (id: string): Head | undefined => staged.get(id) ?? this.heads.get(id)
    const slashed = (id: string): boolean => stagedSlashes.has(id) || this.slashed.has(id)
    const add = (v: VerifiedEntry): void => {
      const { record } = v
      batch.push(v)
      staged.set(record.authorId, { author: record.author, authorId: record.authorId, seq: record.seq, hash: record.hash, bytes: (head(record.authorId)?.bytes ?? 0) + record.envelope.byteLength, time: record.time, chain: record.chain })
      if (v.slashes != null) stagedSlashes.add(v.slashes.accused)
    }
    return { stage: { head, slashed, add }, batch }
  }

  private async attach (items: Array<VerifiedEntry | LedgerEntryError>): Promise<IngestOutcome[]> {
    const outcomes: IngestOutcome[] = []
    const { stage, batch } = this.stager()
    for (const item of items) {
      if (item instanceof LedgerEntryError) {
        outcomes.push({ status: 'rejected', error: item })
        continue
      }
      const placed = this.place(item, stage, batch)
      outcomes.push(placed instanceof Promise ? await placed : placed)
    }
    if (batch.length > 0) await this.write(batch)
    return outcomes
  }

  /**
   * Where one verified entry goes: its feed (staged), pending, the quarantine, or nowhere.
   * Synchronous but for a seq we hold already (its entry is read from disk): a sync places
   * thousands, and an async call each was a promise and a tick of garbage.
   */
  private place (item: VerifiedEntry, stage: Stager, batch: VerifiedEntry[]): IngestOutcome | Promise<IngestOutcome> {
    const { record } = item
    const admission = this.admission
    if (admission != null && !admission.hasStanding(record.authorId)) {
      const held = admission.hold(item)
      switch (held.status) {
        case 'duplicate': return { status: 'duplicate', record }
        case 'equivocation': return { status: 'equivocation', record, held: held.held.record }
        case 'rejected': return { status: 'rejected', error: held.error }
        // held, or dropped when it does not extend the quarantined feed
        default: return { status: 'quarantined', record }
      }
    }
    const head = stage.head(record.authorId)
    const heldSeq = head?.seq ?? 0
    if (record.seq <= heldSeq) return this.placeHeldSeq(item, stage, batch)
    if (record.seq > heldSeq + 1) return this.holdPending(item, stage)
    if (!equals(record.prevHash, head?.hash ?? new Uint8Array(0))) {
      return { status: 'rejected', error: new BrokenChainError(`entry ${record.seq} of ${record.authorId} does not follow the held entry ${heldSeq}`) }
    }
    const backwards = timeOrderError(record, head?.time) ?? chainOrderError(record, head)
    if (backwards != null) return { status: 'rejected', error: backwards }
    const over = admission?.check(record)
    if (over != null) return { status: 'rejected', error: over }
    this.admit(item, stage)
    // entries that were waiting for this one
    const waiting = this.pending.get(record.authorId)
    for (let next = record.seq + 1; waiting?.has(next) === true; next++) {
      const { item: candidate, charge } = waiting.get(next) as Pending
      waiting.delete(next)
      this.pendingCount--
      // stored now (and charged as stored) or dropped: either way it no longer counts as pending
      if (charge != null) admission?.refundPending(charge)
      const held = stage.head(record.authorId) as Head
      if (!equals(candidate.record.prevHash, held.hash) || timeOrderError(candidate.record, held.time) != null || chainOrderError(candidate.record, held) != null || admission?.check(candidate.record) != null) break
      this.admit(candidate, stage)
    }
    if (waiting?.size === 0) this.pending.delete(record.authorId)
    return { status: 'added', record }
  }

  /** An entry at a seq we hold: a duplicate, or an equivocation. */
  private async placeHeldSeq (item: VerifiedEntry, stage: Stager, batch: VerifiedEntry[]): Promise<IngestOutcome> {
    const { record } = item
    const held = batch.find(v => v.record.authorId === record.authorId && v.record.seq === record.seq)?.record ?? await this.get(record.author, record.seq)
    if (held == null) throw new MalformedEntryError('ledger store: a held seq has no entry')
    if (equals(held.hash, record.hash)) return { status: 'duplicate', record }
    // a proof carries both entries, and its readers check both signatures: entries a range's
    // signed head covered have not had their own checked yet (rare: this is an equivocation)
    return await this.provenEquivocation({ record: held, signed: false }, item, stage)
  }

  /** Stages an entry of an author with standing; the authors it gives standing to follow with their quarantined feeds. */
  private admit (item: VerifiedEntry, stage: Stager): void {
    stage.add(item)
    for (const named of this.admission?.stored(item.record) ?? []) this.promote(named, stage)
  }

  /** Moves `authorId`'s quarantined feed (it gained standing) into the batch, as far as it attaches and fits its quota. */
  private promote (authorId: string, stage: Stager): void {
    const admission = this.admission
    if (admission == null) return
    for (const entry of admission.release(authorId)) {
      const head = stage.head(authorId)
      if (entry.record.seq !== (head?.seq ?? 0) + 1 || !equals(entry.record.prevHash, head?.hash ?? new Uint8Array(0)) || timeOrderError(entry.record, head?.time) != null || chainOrderError(entry.record, head) != null) break
      if (admission.check(entry.record) != null) break
      this.admit(entry, stage)
    }
  }

  private holdPending (item: VerifiedEntry, stage: Stager): IngestOutcome | Promise<IngestOutcome> {
    const { record } = item
    let waiting = this.pending.get(record.authorId)
    const already = waiting?.get(record.seq)?.item
    if (already != null) {
      if (equals(already.record.hash, record.hash)) return { status: 'duplicate', record }
      // two signed entries for one seq prove equivocation even before the gap is filled; one
      // that came in a range under a later entry's signature has its own checked first
      if (already.signed === false || item.signed === false) return this.provenEquivocation(already, item, stage)
      return this.equivocation(already.record, record, stage)
    }
    if (this.pendingCount >= (this.opts.maxPending ?? 4096) || (waiting?.size ?? 0) >= MAX_PENDING_PER_AUTHOR) return { status: 'pending', record }
    // held entries count against their author's quota like stored ones: refused, not held, when over
    const charge = this.admission?.chargePending(record)
    if (charge instanceof QuotaExceededError) return { status: 'rejected', error: charge }
    if (waiting == null) this.pending.set(record.authorId, waiting = new Map())
    waiting.set(record.seq, { item, charge })
    this.pendingCount++
    return { status: 'pending', record }
  }

  /** An equivocation where one entry's own signature was not checked yet (a range's): checked now, a proof only when both verify. */
  private async provenEquivocation (held: VerifiedEntry, item: VerifiedEntry, stage: Stager): Promise<IngestOutcome> {
    const { record } = item
    if (item.signed === false && !await ownSignatureVerifies(record)) return { status: 'rejected', error: new EntrySignatureError(`entry ${record.seq} of ${record.authorId} conflicts with the held one and its own signature does not verify`) }
    return this.equivocation(held.record, record, stage, held.signed !== false || await ownSignatureVerifies(held.record))
  }

  /**
   * Builds the fraud proof into our own feed (in the same batch): one per accused, ever (not
   * when it is slashed already or a proof of it is staged in this batch), and only within our
   * proof budget (quota.ts): what others send must not fill our own feed. Over the budget the
   * equivocation is reported but not slashed here: a slash is always backed by a stored proof
   * anyone can re-check; a later offer of the conflict, once the budget refilled, or another
   * node's proof slashes it.
   */
  private equivocation (held: LedgerRecord, record: LedgerRecord, stage: Stager, provable = true): IngestOutcome {
    if (!provable || stage.slashed(record.authorId) || record.authorId === this.selfId || !this.proofBudget.hasRoom()) return { status: 'equivocation', record, held }
    const proofBytes = buildEquivocationProof(this.opts.privateKey, this.opts.peerId, held, record, this.now())
    if (proofBytes.byteLength > MAX_BYTES.ledgerFraudProofBody) return { status: 'equivocation', record, held }
    const selfHead = stage.head(this.selfId)
    const proof = sealEntry(this.opts.privateKey, this.opts.peerId, {
      seq: (selfHead?.seq ?? 0) + 1,
      prevHash: selfHead?.hash ?? new Uint8Array(0),
      // not below our previous entry, nor below the proof's own created_at
      time: Math.max(this.now(), selfHead?.time ?? 0, held.time, record.time),
      kind: LedgerEntry.BodyKind.FRAUD_PROOF,
      body: proofBytes
    })
    if (!this.proofBudget.take(proof.envelope.byteLength)) return { status: 'equivocation', record, held }
    const accused = record.authorId
    stage.add({ record: proof, slashes: { kind: 'equivocation', accused, proof: decodeProof(proof) } })
    return { status: 'equivocation', record, held, proof }
  }

  /** One atomic, synced batch: entries, heads, hash index, slashed set, proofs, standing. */
  private async write (batch: VerifiedEntry[]): Promise<void> {
    this.assertOpen()
    const { ops, heads, slashes } = batchOps(batch, id => this.heads.get(id), id => this.slashed.has(id), this.admission?.unsavedGrants() ?? [])
    await this.db.batch(ops, { sync: this.opts.syncWrites ?? true })
    for (const [id, head] of heads) this.heads.set(id, head)
    for (const [id, slash] of slashes) this.slashed.set(id, slash)
    for (const { record } of batch) {
      for (const listener of this.listeners) {
        try { listener(record) } catch {}
      }
    }
  }

  private async serial<T> (fn: () => Promise<T>): Promise<T> {
    this.assertOpen()
    const run = this.queue.then(fn, fn)
    this.queue = run.catch(() => {})
    return await run
  }

  private assertOpen (): void {
    if (this.closed) throw new LedgerClosedError()
  }
}

/** Whether an entry's own envelope signature verifies (a stored entry may have come in under a later one's). */
async function ownSignatureVerifies (record: LedgerRecord): Promise<boolean> {
  try {
    return await verifyOpenedAsync(decodeEntryEnvelope(record.envelope))
  } catch {
    return false
  }
}
