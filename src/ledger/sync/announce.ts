/**
 * Push of our own new entries (protocols/README.md §7 "Propagation"): no topic that every
 * node validates; instead an announcement to the few peers that need them, namely the
 * counterparty an entry names (an attestation's renter, a receipt's provider) and the trust
 * seeds (bootstrap replicas, --trust peers), while connected. The announcement is a heads
 * request of one head carrying our own head as its hint, which makes a peer that holds less
 * of our feed pull it (server.ts); everyone else gets entries by pulling (sync on
 * connect, periodic rounds). Announcements are coalesced: a burst of entries costs each peer
 * one request.
 */

import { namedAuthors } from '../ingest/standing.js'
import type { LedgerRecord } from '../entries/entry.js'
import type { SyncClient } from './client.js'
import type { Logger } from '@libp2p/interface'

/** Entries appended within this are announced together. */
const ANNOUNCE_DELAY_MS = 50
/** Most peers one announcement goes to (counterparties first, then seeds). */
const MAX_ANNOUNCE_PEERS = 8
/** Counterparties remembered until the next announcement. */
const MAX_DUE = 256
/** One announcement's answer must come within this. */
const ANNOUNCE_TIMEOUT_MS = 5_000
/**
 * A failed announcement is sent again this many times (after 1, 2, 4, 8 s): a connection that
 * stalled through a partition and came back raises no connect event, so no sync on connect
 * would make up for it before the periodic round (30 s).
 */
export const ANNOUNCE_RETRIES = 4

export interface FeedAnnouncerOptions {
  client: SyncClient
  /** the trust seeds: every announcement goes to those connected */
  seeds: readonly string[]
  signal: AbortSignal
  log: Logger
  /** the first retry's delay; each next one doubles (default 1 s; tests shorten it) */
  retryBaseMs?: number
}

export class FeedAnnouncer {
  private readonly opts: FeedAnnouncerOptions
  private readonly due = new Set<string>()
  private timer?: NodeJS.Timeout
  /** failed announcements per peer, while they are being retried (bounded by MAX_DUE) */
  private readonly failures = new Map<string, number>()
  private readonly retryTimers = new Set<NodeJS.Timeout>()
  /** announcements sent so far (tests, status) */
  sent = 0
  /** the peers announced to, with how often (bounded; tests check who was told) */
  readonly recipients = new Map<string, number>()

  constructor (opts: FeedAnnouncerOptions) {
    this.opts = opts
  }

  /** One of our entries was stored: its counterparty and the seeds hear of it soon. */
  noteOwn (record: LedgerRecord): void {
    for (const named of namedAuthors(record)) if (this.due.size < MAX_DUE) this.due.add(named)
    this.schedule()
  }

  stop (): void {
    clearTimeout(this.timer)
    this.timer = undefined
    for (const timer of this.retryTimers) clearTimeout(timer)
    this.retryTimers.clear()
  }

  private schedule (): void {
    if (this.timer != null || this.opts.signal.aborted) return
    this.timer = setTimeout(() => { this.announce() }, ANNOUNCE_DELAY_MS)
    this.timer.unref()
  }

  /** `id` did not answer: it is announced again later, a bounded number of times. */
  private retry (id: string): void {
    const attempt = (this.failures.get(id) ?? 0) + 1
    if (
      attempt > ANNOUNCE_RETRIES ||
      this.opts.signal.aborted ||
      (!this.failures.has(id) && this.failures.size >= MAX_DUE)
    ) {
      this.failures.delete(id)
      return
    }
    this.failures.set(id, attempt)
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer)
      if (this.due.size < MAX_DUE) this.due.add(id)
      this.schedule()
    }, (this.opts.retryBaseMs ?? 1_000) * 2 ** (attempt - 1))
    timer.unref()
    this.retryTimers.add(timer)
  }

  private announce (): void {
    this.timer = undefined
    const wanted = [...this.due, ...this.opts.seeds]
    this.due.clear()
    const connected = new Map(this.opts.client.connectedPeers().map(p => [p.toString(), p]))
    const peers = [...new Set(wanted)].filter(id => connected.has(id)).slice(0, MAX_ANNOUNCE_PEERS)
    for (const id of peers) {
      const signal = AbortSignal.any([this.opts.signal, AbortSignal.timeout(ANNOUNCE_TIMEOUT_MS)])
      this.sent++
      if (this.recipients.has(id) || this.recipients.size < MAX_DUE) {
        this.recipients.set(id, (this.recipients.get(id) ?? 0) + 1)
      }
      // a peer that misses it pulls our feed on its next heads exchange with us
      this.opts.client
        .heads(connected.get(id) as NonNullable<ReturnType<typeof connected.get>>, signal, undefined, 1)
        .then(
          () => {
            this.failures.delete(id)
          },
          (err: unknown) => {
            this.opts.log('announcing our feed to %s failed: %e', id, err)
            this.retry(id)
          }
        )
    }
  }
}
