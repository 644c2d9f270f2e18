/**
 * The ingest step: every entry that joins the ledger passes here, then goes to the store
 * (store/store.ts) in one batch. Entries from the network (sync, announcements, gossip) are
 * verified (verify.ts: envelope, signature, time, body; a synced range as a whole), then
 * placed one by one: an author without standing goes to the quarantine (admission.ts,
 * quarantine.ts), an entry ahead of its feed waits until the gap fills (pending.ts), one that
 * does not extend its feed or is over its author's quota is rejected, a second entry at a held
 * seq is an equivocation (equivocation.ts), and the rest is staged (stage.ts) with the
 * quarantined feeds it gives standing to. Our own entries are signed here and pass the same
 * checks.
 *
 * Verification (the expensive part) runs outside the queue, many at once; placing and writing
 * go through one queue, so that the store's heads always equal what was placed against.
 */

import { equals } from 'uint8arrays/equals'
import { chainOrderError, sealEntry, timeOrderError, type LedgerEntry, type LedgerRecord } from '../entries/entry.js'
import { isEntryError, ledgerClosed, type LedgerEntryError, LedgerError } from '../errors.js'
import { LedgerStore } from '../store/store.js'
import { Admission } from './admission.js'
import { decodeProof, EquivocationProver, ownSignatureVerifies } from './equivocation.js'
import { PendingEntries } from './pending.js'
import { RangeTurns } from './range-turns.js'
import { StagedBatch } from './stage.js'
import { verifyEntries, verifyEntry, verifyRange, type RangeExpectation, type VerifiedEntry, type VerifyEntryOptions } from './verify.js'
import { isCoded } from '../../common/index.js'
import type { IngestOptions, IngestOutcome, LedgerIngestOptions, LedgerStats } from './outcome.js'

export type { IngestOptions, IngestOutcome, LedgerIngestOptions, LedgerStats }

/** Entries dropped in one atomic batch at most (dropBelow). */
const DROP_LIMIT = 10_000

function noResult (): void {}

export class LedgerIngest {
  readonly store: LedgerStore
  readonly selfId: string
  /** present when the ledger admits by standing */
  readonly admission?: Admission
  private readonly opts: LedgerIngestOptions
  private readonly now: () => number
  private readonly pending: PendingEntries
  private readonly prover: EquivocationProver
  private queue: Promise<unknown> = Promise.resolve()
  private readonly rangeTurns = new RangeTurns()
  private closed = false

  private constructor (store: LedgerStore, opts: LedgerIngestOptions) {
    this.store = store
    this.opts = opts
    this.now = opts.now ?? Date.now
    this.selfId = opts.peerId.toString()
    if (opts.admission != null) {
      this.admission = new Admission({ ...opts.admission, selfId: this.selfId, now: this.now })
    }
    this.pending = new PendingEntries(opts.maxPending)
    this.prover = new EquivocationProver({
      privateKey: opts.privateKey,
      peerId: opts.peerId,
      now: this.now,
      budget: opts.proofBudget
    })
  }

  /** Opens (creating) the store in `path` and the ingest step in front of it. */
  static async open (path: string, opts: LedgerIngestOptions): Promise<LedgerIngest> {
    const store = await LedgerStore.open(path, { syncWrites: opts.syncWrites })
    const ingest = new LedgerIngest(store, opts)
    try {
      await ingest.loadStanding()
    } catch (err) {
      await store.close()
      throw err
    }
    return ingest
  }

  /** Standing and quota use as the store holds them. */
  private async loadStanding (): Promise<void> {
    const admission = this.admission
    if (admission == null) return
    for await (const { authorId, depth } of this.store.standingGrants()) admission.standing.load(authorId, depth)
    for (const head of this.store.allHeads()) admission.loadFeed(head.authorId, head.bytes)
  }

  /**
   * Closes the store once the batches queued are done (those not written yet fail with LedgerError
   * ERR_LEDGER_CLOSED).
   */
  async close (): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.queue.catch(() => {})
    await this.store.close()
  }

  async stats (): Promise<LedgerStats> {
    return { ...await this.store.stats(), pending: this.pending.size, quarantine: this.admission?.stats() }
  }

  /**
   * Signs and durably appends an entry to our own feed; resolves once it is on disk. Never
   * refused for a quota or the proof budget: our receipts, attestations, usage and summaries
   * are what this node itself did (a lost receipt loses a job's evidence), and their number is
   * bounded by the jobs and heartbeats it runs, not by what others send.
   */
  async append (kind: LedgerEntry.BodyKind, body: Uint8Array): Promise<LedgerRecord> {
    return await this.serial(async () => {
      const head = this.store.head(this.selfId)
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
      const verified = await verifyEntry(record.envelope, {
        now: Math.max(now, head?.time ?? 0),
        checkSignature: false
      })
      // what our entry names gains standing: its quarantined feed is stored with it
      const stage = new StagedBatch(this.store)
      this.admit(verified, stage)
      await this.write(stage)
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
      const stage = new StagedBatch(this.store)
      this.promote(peerId, stage)
      if (stage.entries.length > 0) await this.write(stage)
    })
  }

  /**
   * Verifies and stores entries from the network (any authors, any order). Verification runs
   * in parallel (also with the writes of earlier calls; a synced range once the range before it
   * is being placed, range-turns.ts); placing is serialised in call order. Entries that do not
   * attach yet are held pending; entries of authors without standing go to the quarantine.
   */
  async ingest (envelopes: readonly Uint8Array[], opts: IngestOptions = {}): Promise<IngestOutcome[]> {
    this.assertOpen()
    if (opts.range != null) return await this.ingestRange(envelopes, opts.range, opts)
    // verification runs now, beside earlier batches' writes (its signatures in the verifier's
    // pool); placing keeps the call order
    const verifying = verifyEntries(envelopes, { ...opts, now: this.now() })
    verifying.catch(() => {})
    return await this.serial(async () => await this.placeAll(await verifying))
  }

  /** A range of one feed (sync), verified as a whole (one signature for its chain-2 entries) in its turn. */
  private async ingestRange (
    envelopes: readonly Uint8Array[],
    range: RangeExpectation,
    opts: IngestOptions
  ): Promise<IngestOutcome[]> {
    const now = this.now()
    const turn = this.rangeTurns.take()
    const verifying = turn.ready.then(async () => await verifyRange(envelopes, range, { ...opts, now }))
    verifying.catch(() => {})
    try {
      return await this.serial(async () => {
        turn.placing()
        return await this.placeAll(await verifying)
      })
    } finally {
      // a queue that failed (closed) must not hold the next range's verification
      turn.placing()
    }
  }

  /** ingest() of one entry that throws its LedgerError instead of returning it. */
  async ingestOne (envelope: Uint8Array, opts: Omit<VerifyEntryOptions, 'now'> = {}): Promise<Exclude<IngestOutcome, { status: 'rejected' }>> {
    const [outcome] = await this.ingest([envelope], opts)
    if (outcome.status === 'rejected') throw outcome.error
    return outcome
  }

  private async placeAll (items: Array<VerifiedEntry | LedgerEntryError>): Promise<IngestOutcome[]> {
    const outcomes: IngestOutcome[] = []
    const stage = new StagedBatch(this.store)
    for (const item of items) {
      if (isEntryError(item)) {
        outcomes.push({ status: 'rejected', error: item })
        continue
      }
      const placed = this.place(item, stage)
      outcomes.push(placed instanceof Promise ? await placed : placed)
    }
    if (stage.entries.length > 0) await this.write(stage)
    return outcomes
  }

  /**
   * Where one verified entry goes: its feed (staged), pending, the quarantine, or nowhere.
   * Synchronous but for a seq we hold already (its entry is read from disk): a sync places
   * thousands, and an async call each was a promise and a tick of garbage.
   */
  private place (item: VerifiedEntry, stage: StagedBatch): IngestOutcome | Promise<IngestOutcome> {
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
    // a range that starts at its holder's retention base, past what we hold: the feed starts
    // anew there (what we held is older still, and is dropped once this is written)
    if (item.base === true && record.seq > heldSeq + 1) return this.attach(item, stage)
    if (head != null && record.seq < head.base) return { status: 'pruned', record }
    if (record.seq <= heldSeq) return this.placeHeldSeq(item, stage)
    if (record.seq > heldSeq + 1) return this.holdPending(item, stage)
    if (!equals(record.prevHash, head?.hash ?? new Uint8Array(0))) {
      return { status: 'rejected', error: new LedgerError('ERR_LEDGER_CHAIN', `entry ${record.seq} of ${record.authorId} does not follow the held entry ${heldSeq}`) }
    }
    const backwards = timeOrderError(record, head?.time) ?? chainOrderError(record, head)
    if (backwards != null) return { status: 'rejected', error: backwards }
    return this.attach(item, stage)
  }

  /** Stages an entry that extends its feed (checked), within its quota, and the pending ones that follow it. */
  private attach (item: VerifiedEntry, stage: StagedBatch): IngestOutcome {
    const { record } = item
    const admission = this.admission
    const over = admission?.check(record)
    if (over != null) return { status: 'rejected', error: over }
    // a new base: what the feed held no longer counts against its quota (it is dropped once written)
    const before = item.base === true ? stage.head(record.authorId) : undefined
    if (before != null) admission?.dropped(record.authorId, before.bytes)
    this.admit(item, stage)
    // entries that were waiting for this one
    for (let next = record.seq + 1; ; next++) {
      const waiting = this.pending.take(record.authorId, next)
      if (waiting == null) break
      // stored now (and charged as stored) or dropped: either way it no longer counts as pending
      if (waiting.charge != null) admission?.refundPending(waiting.charge)
      if (!this.extendsStaged(waiting.item.record, stage)) break
      this.admit(waiting.item, stage)
    }
    return { status: 'added', record }
  }

  /** Whether `record` follows its feed's staged head (seq aside): chain, time and chain order, and within its quota. */
  private extendsStaged (record: LedgerRecord, stage: StagedBatch): boolean {
    const head = stage.head(record.authorId)
    return (
      equals(record.prevHash, head?.hash ?? new Uint8Array(0)) &&
      timeOrderError(record, head?.time) == null &&
      chainOrderError(record, head) == null &&
      this.admission?.check(record) == null
    )
  }

  /** An entry at a seq we hold: a duplicate, or an equivocation. */
  private async placeHeldSeq (item: VerifiedEntry, stage: StagedBatch): Promise<IngestOutcome> {
    const { record } = item
    const held = stage.find(record.authorId, record.seq)?.record ?? await this.store.get(record.author, record.seq)
    if (held == null) throw new LedgerError('ERR_LEDGER_MALFORMED', 'ledger store: a held seq has no entry')
    if (equals(held.hash, record.hash)) return { status: 'duplicate', record }
    // a proof carries both entries, and its readers check both signatures: entries a range's
    // signed head covered have not had their own checked yet (rare: this is an equivocation)
    return await this.provenEquivocation({ record: held, signed: false }, item, stage)
  }

  /**
   * Stages an entry of an author with standing; the authors it gives standing to follow with their
   * quarantined feeds.
   */
  private admit (item: VerifiedEntry, stage: StagedBatch): void {
    stage.add(item)
    for (const named of this.admission?.stored(item.record) ?? []) this.promote(named, stage)
  }

  /**
   * Moves `authorId`'s quarantined feed (it gained standing) into the batch, as far as it attaches
   * and fits its quota.
   */
  private promote (authorId: string, stage: StagedBatch): void {
    const admission = this.admission
    if (admission == null) return
    for (const entry of admission.release(authorId)) {
      const heldSeq = stage.head(authorId)?.seq ?? 0
      // a quarantined feed may start at its holder's retention base
      const follows = entry.base === true && entry.record.seq > heldSeq + 1
        ? admission.check(entry.record) == null
        : entry.record.seq === heldSeq + 1 && this.extendsStaged(entry.record, stage)
      if (!follows) break
      this.admit(entry, stage)
    }
  }

  private holdPending (item: VerifiedEntry, stage: StagedBatch): IngestOutcome | Promise<IngestOutcome> {
    const { record } = item
    const already = this.pending.get(record.authorId, record.seq)
    if (already != null) {
      if (equals(already.record.hash, record.hash)) return { status: 'duplicate', record }
      // two signed entries for one seq prove equivocation even before the gap is filled; one
      // that came in a range under a later entry's signature has its own checked first
      if (already.signed === false || item.signed === false) return this.provenEquivocation(already, item, stage)
      return this.equivocation(already.record, record, stage)
    }
    if (!this.pending.hasRoom(record.authorId)) return { status: 'pending', record }
    // held entries count against their author's quota like stored ones: refused, not held, when over
    const charge = this.admission?.chargePending(record)
    if (isCoded(charge, LedgerError, 'ERR_LEDGER_QUOTA')) return { status: 'rejected', error: charge }
    this.pending.add(item, charge)
    return { status: 'pending', record }
  }

  /**
   * An equivocation where one entry's own signature was not checked yet (a range's): checked now, a
   * proof only when both verify.
   */
  private async provenEquivocation (
    held: VerifiedEntry,
    item: VerifiedEntry,
    stage: StagedBatch
  ): Promise<IngestOutcome> {
    const { record } = item
    if (item.signed === false && !await ownSignatureVerifies(record)) return { status: 'rejected', error: new LedgerError('ERR_LEDGER_SIGNATURE', `entry ${record.seq} of ${record.authorId} conflicts with the held one and its own signature does not verify`) }
    return this.equivocation(
      held.record,
      record,
      stage,
      held.signed !== false || (await ownSignatureVerifies(held.record))
    )
  }

  /**
   * Stages the fraud proof in our own feed (equivocation.ts): one per accused, ever (not when
   * it is slashed already or a proof of it is staged in this batch), within our proof budget.
   */
  private equivocation (held: LedgerRecord, record: LedgerRecord, stage: StagedBatch, provable = true): IngestOutcome {
    if (!provable || stage.slashed(record.authorId) || record.authorId === this.selfId) return { status: 'equivocation', record, held }
    const proof = this.prover.proofEntry(held, record, stage.head(this.selfId))
    if (proof == null) return { status: 'equivocation', record, held }
    stage.add({ record: proof, slashes: { kind: 'equivocation', accused: record.authorId, proof: decodeProof(proof) } })
    return { status: 'equivocation', record, held, proof }
  }

  /**
   * Drops `authorId`'s stored entries below seq `before` (retention: README §7), at most
   * `limit`, in the queue with the writes; their bytes leave its quota. Returns how many were dropped.
   */
  async dropBelow (authorId: string, before: number, limit = DROP_LIMIT): Promise<number> {
    return await this.serial(async () => {
      const { dropped, bytes } = await this.store.dropBelow(authorId, before, limit)
      if (bytes > 0) this.admission?.dropped(authorId, bytes)
      return dropped
    })
  }

  /** The staged batch and the standing grants not written yet, in one atomic write. */
  private async write (stage: StagedBatch): Promise<void> {
    this.assertOpen()
    await this.store.write(stage.entries, this.admission?.unsavedGrants() ?? [])
    // a feed that started anew at a base leaves its older entries below it: dropped after this
    // write, in the queue (a crash before leaves them unserved, and the next drop takes them)
    for (const { record, base } of stage.entries) {
      if (base === true && record.seq > 1) this.dropBelow(record.authorId, record.seq).catch(() => {})
    }
  }

  private async serial<T> (fn: () => Promise<T>): Promise<T> {
    this.assertOpen()
    const run = this.queue.then(fn, fn)
    // the queue keeps no result: a sync's last outcomes (a range's records) would live on in it
    this.queue = run.then(noResult, noResult)
    return await run
  }

  private assertOpen (): void {
    if (this.closed || this.store.isClosed) throw ledgerClosed()
  }
}
