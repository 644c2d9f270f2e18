/**
 * Heartbeats carry their sender's own ledger head seq (protocols/README.md §7 "Propagation"):
 * a node that holds less of a connected sender's feed pulls it at once instead of at the next
 * periodic round. Announcements reach only an entry's counterparty and the trust seeds; this
 * hint is what brings every other node up to date, after a partition heals for instance.
 *
 * A hint is a claim, never evidence (the entries pulled are verified as always). It is acted on
 * only for a sender we hold a connection to, only when it is beyond what we hold, and a sender
 * whose last hint we have not reached yet (its pull came up short: a liar, or a failed pull) is
 * acted on again only after RETRY_MS: a lying heartbeat costs us one range request per RETRY_MS.
 *
 * A heartbeat also names up to MAX_RELAYED_HEADS other feeds that grew in its sender's ledger in
 * the last RELAY_WINDOW_MS (`relayedHeads`): a node connected to none of those authors, say one
 * whose connections across a healed partition are gone, learns of their entries from any peer
 * that has them, one heartbeat interval per hop, instead of at the next periodic round (30 s).
 * The same rules hold per sender and feed, and the pull's ranges are verified against the
 * author's signed heads, so a relaying liar can only cost us requests.
 */

import { MAX_RELAYED_HEADS, type FeedHint } from '../../node/index.js'
import { parseAuthor, type LedgerRecord } from '../entries/entry.js'
import type { LedgerStore } from '../store/store.js'
import type { SyncClient } from './client.js'

/** A sender whose last hint our pull did not reach is heard again only after this. */
const RETRY_MS = 10_000
/** Senders (and sender/feed pairs) remembered (the oldest is forgotten first). */
const MAX_TRACKED = 10_000
/** A feed that grew here is named in our heartbeats for this long. */
const RELAY_WINDOW_MS = 30_000

export interface HeadHint {
  peerId: string
  /** the head seq of the sender's own feed, as its heartbeat says (0: not said) */
  ledgerSeq: number
  /** other feeds' heads the sender holds (heartbeats of older nodes name none) */
  relayedHeads?: FeedHint[]
}

export interface HeadHintsOptions {
  client: SyncClient
  store: () => LedgerStore | undefined
  /** our own peer id: our feed is never pulled */
  selfId: string
  now?: () => number
}

export class HeadHints {
  private readonly opts: HeadHintsOptions
  /** per sender: the hint we last acted on, and when */
  private readonly acted = new Map<string, { seq: number, at: number }>()
  /** other authors' feeds that grew here lately, oldest first: what our heartbeats relay */
  private readonly grown = new Map<string, { author: Uint8Array, seq: number, at: number }>()
  /** pulls started because of a hint (tests, status) */
  pulls = 0

  constructor (opts: HeadHintsOptions) {
    this.opts = opts
  }

  heard (hint: HeadHint): void {
    // most heartbeats name nothing we lack: no scan of the connections for them
    if (!this.beyondHeld(hint)) return
    const peer = this.opts.client.connectedPeers().find(p => p.toString() === hint.peerId)
    if (peer == null) return
    if (
      this.due(hint.peerId, hint.peerId, hint.ledgerSeq) &&
      this.opts.client.considerHint(peer, peer.toMultihash().bytes, hint.ledgerSeq)
    ) {
      this.acting(hint.peerId, hint.ledgerSeq)
    }
    for (const relayed of (hint.relayedHeads ?? []).slice(0, MAX_RELAYED_HEADS)) {
      const author = parseAuthor(relayed.author)?.id
      if (author == null || author === hint.peerId || author === this.opts.selfId) continue
      const key = `${hint.peerId}/${author}`
      if (
        this.due(key, author, relayed.seq) &&
        this.opts.client.considerHint(peer, relayed.author, relayed.seq, { relayed: true })
      ) {
        this.acting(key, relayed.seq)
      }
    }
  }

  /** A record stored here: another author's feed grew, so our next heartbeats name its head. */
  noteStored (record: LedgerRecord, selfId: string): void {
    if (record.authorId === selfId) return
    const seen = this.grown.get(record.authorId)
    if (seen != null && seen.seq > record.seq) return
    this.grown.delete(record.authorId)
    this.grown.set(record.authorId, { author: record.author, seq: record.seq, at: this.now() })
    if (this.grown.size > MAX_RELAYED_HEADS) this.grown.delete(this.grown.keys().next().value as string)
  }

  /** The feeds our heartbeats relay now: grown in the last RELAY_WINDOW_MS, the most recent first. */
  relayed (): FeedHint[] {
    const since = this.now() - RELAY_WINDOW_MS
    return [...this.grown.values()].filter(g => g.at >= since).reverse().map(g => ({ author: g.author, seq: g.seq }))
  }

  /**
   * Whether a hint of `seq` for `feed`, tracked under `key`, is worth a pull now: beyond what we
   * hold, and not a repeat of a hint whose pull came up short less than RETRY_MS ago.
   */
  /** Whether the heartbeat names a head beyond what we hold of its feed (its own or a relayed one). */
  private beyondHeld (hint: HeadHint): boolean {
    const held = (feed: string | undefined): number => feed == null ? Infinity : this.opts.store()?.head(feed)?.seq ?? 0
    return hint.ledgerSeq > held(hint.peerId) ||
      (hint.relayedHeads ?? []).slice(0, MAX_RELAYED_HEADS).some(h => h.seq > held(parseAuthor(h.author)?.id))
  }

  private due (key: string, feed: string, seq: number): boolean {
    const held = this.opts.store()?.head(feed)?.seq ?? 0
    if (!(seq > held)) return false
    const last = this.acted.get(key)
    // the last pull reached its hint: a newer hint is new entries, pulled at once
    return !(last != null && held < last.seq && this.now() - last.at < RETRY_MS)
  }

  /** A pull runs for the hint tracked under `key`. */
  private acting (key: string, seq: number): void {
    this.acted.delete(key)
    this.acted.set(key, { seq, at: this.now() })
    if (this.acted.size > MAX_TRACKED) this.acted.delete(this.acted.keys().next().value as string)
    this.pulls++
  }

  private now (): number {
    return (this.opts.now ?? Date.now)()
  }
}
