/**
 * What the ledger shows people (the CLI's `ledger status` / `ledger show`, the control
 * socket): plain JSON-ready views of the store, its heads and its entries.
 */

import { toHex } from '../../common/index.js'
import { decodeStoredBody } from '../entries/body.js'
import { decodeStoredEntry, kindName, parseAuthor } from '../entries/entry.js'
import type { Earnings } from '../reputation/reputation.js'
import type { ReplicationScope, ScopeStats } from '../sync/scope.js'
import type { Head, LedgerStore } from '../store/store.js'
import type { LedgerIngest } from '../ingest/ingest.js'

export interface HeadView {
  author: string
  seq: number
  hash: string
  /** stored envelope bytes of the feed */
  bytes: number
  /** the first seq held: 1, or later once retention dropped older entries (protocols/README.md §7 "Retention") */
  base: number
}

export interface LedgerStatus {
  peerId: string
  path: string
  authors: number
  entries: number
  slashed: string[]
  pending: number
  diskBytes: number
  /** entries of authors without standing held in memory (not stored) */
  quarantine: { authors: number, entries: number, bytes: number, evicted: number }
  heads: HeadView[]
  /** our own feed */
  own: { seq: number, unacknowledged: number }
  earnings: Earnings
  /** pulls started because a peer's heartbeat said it holds more of its own feed (sync/head-hints.ts) */
  hintPulls: number
  /** which feeds sync pulls (sync/scope.ts), and the heads it skipped as out of scope */
  scope?: ScopeStats
}

export interface EntryView {
  seq: number
  time: number
  hash: string
  kind: string
  summary: Record<string, unknown>
}

export interface FeedView {
  head?: HeadView
  slashed: boolean
  entries: EntryView[]
}

export interface StatusViewOptions {
  /** the own seq known to be held by a peer (or from an earlier run) */
  confirmedSeq: number
  earnings: Earnings
  hintPulls: number
  scope?: ReplicationScope
}

/** The ledger at a glance: what is stored, and what waits in memory. */
export async function statusView (ledger: LedgerIngest, opts: StatusViewOptions): Promise<LedgerStatus> {
  const { confirmedSeq, earnings, hintPulls, scope } = opts
  const { store } = ledger
  const stats = await ledger.stats()
  const own = store.head(ledger.selfId)?.seq ?? 0
  return {
    peerId: ledger.selfId,
    path: store.path,
    authors: stats.authors,
    entries: stats.entries,
    slashed: store.slashedAuthors().map(s => s.accused).sort(),
    pending: stats.pending,
    diskBytes: stats.diskBytes,
    quarantine: stats.quarantine ?? { authors: 0, entries: 0, bytes: 0, evicted: 0 },
    heads: store.allHeads().map(headView).sort((a, b) => a.author < b.author ? -1 : 1),
    own: { seq: own, unacknowledged: Math.max(0, own - confirmedSeq) },
    earnings,
    hintPulls,
    scope: scope?.stats(stats.authors)
  }
}

/** Most entries `ledger show` lists (the CLI's bound too). */
export const MAX_FEED_VIEW = 256

/** The last `limit` entries of `peerId`'s feed, at most MAX_FEED_VIEW. */
export async function feedView (
  store: LedgerStore,
  peerId: string,
  limit: number,
  slashed: boolean
): Promise<FeedView> {
  const head = store.head(peerId)
  if (head == null) return { slashed, entries: [] }
  const from = Math.max(1, head.seq - Math.max(1, Math.min(limit, MAX_FEED_VIEW)) + 1)
  const { entries } = await store.range(head.author, from, MAX_FEED_VIEW)
  return { head: headView(head), slashed, entries: entries.map(envelope => entryView(envelope)) }
}

function headView (head: Head): HeadView {
  return { author: head.authorId, seq: head.seq, hash: toHex(head.hash), bytes: head.bytes, base: head.base }
}

function entryView (envelope: Uint8Array): EntryView {
  const record = decodeStoredEntry(envelope)
  const body = decodeStoredBody(record)
  const summary: Record<string, unknown> = {}
  switch (body.kind) {
    case 'attestation': {
      const a = body.attestation.message
      Object.assign(summary, {
        job: toHex(a.jobId),
        renter: parseAuthor(a.renter)?.id,
        status: a.status,
        preemptible: a.preemptible,
        outputDigest: toHex(a.outputDigest)
      })
      break
    }
    case 'receipt': {
      const r = body.receipt.message
      Object.assign(summary, {
        job: toHex(r.jobId),
        provider: parseAuthor(r.provider)?.id,
        outcome: r.outcome,
        pricePaidMicroUsd: Number(r.pricePaidMicroUsd)
      })
      break
    }
    case 'heartbeat-summary':
      Object.assign(summary, {
        periodStart: Number(body.summary.periodStart),
        periodEnd: Number(body.summary.periodEnd),
        availableMs: Number(body.summary.availableMs),
        upMs: Number(body.summary.upMs),
        busyPpm: body.summary.busyPpm
      })
      break
    case 'usage': {
      const u = body.usage.usage
      Object.assign(summary, {
        lease: toHex(u.leaseId),
        provider: body.usage.providerId,
        renter: body.usage.renterId,
        intervalStart: u.intervalStart,
        intervalEnd: u.intervalEnd,
        requests: u.requests,
        gpuMs: u.gpuMs,
        amountMicroUsd: u.amountMicroUsd
      })
      break
    }
    case 'fraud-proof':
      Object.assign(summary, { proof: body.proof.message.kind, accused: parseAuthor(body.proof.message.accused)?.id })
      break
  }
  return { seq: record.seq, time: record.time, hash: toHex(record.hash), kind: kindName(record.kind), summary }
}
