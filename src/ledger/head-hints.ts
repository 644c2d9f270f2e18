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
 */

import type { LedgerStore } from './store.js'
import type { SyncClient } from './sync-client.js'

/** A sender whose last hint our pull did not reach is heard again only after this. */
const RETRY_MS = 10_000
/** Senders remembered (the oldest is forgotten first). */
const MAX_TRACKED = 10_000

export interface HeadHint {
  peerId: string
  /** the head seq of the sender's own feed, as its heartbeat says (0: not said) */
  ledgerSeq: number
}

export interface HeadHintsOptions {
  client: SyncClient
  store: () => LedgerStore | undefined
  now?: () => number
}

export class HeadHints {
  private readonly opts: HeadHintsOptions
  /** per sender: the hint we last acted on, and when */
  private readonly acted = new Map<string, { seq: number, at: number }>()
  /** pulls started because of a hint (tests, status) */
  pulls = 0

  constructor (opts: HeadHintsOptions) {
    this.opts = opts
  }

  heard (hint: HeadHint): void {
    const held = this.opts.store()?.head(hint.peerId)?.seq ?? 0
    if (!(hint.ledgerSeq > held)) return
    const now = (this.opts.now ?? Date.now)()
    const last = this.acted.get(hint.peerId)
    // the last pull reached its hint: a newer hint is new entries, pulled at once
    if (last != null && held < last.seq && now - last.at < RETRY_MS) return
    const peer = this.opts.client.connectedPeers().find(p => p.toString() === hint.peerId)
    if (peer == null) return
    this.acted.delete(hint.peerId)
    this.acted.set(hint.peerId, { seq: hint.ledgerSeq, at: now })
    if (this.acted.size > MAX_TRACKED) this.acted.delete(this.acted.keys().next().value as string)
    this.pulls++
    this.opts.client.considerHint(peer, peer.toMultihash().bytes, hint.ledgerSeq)
  }
}
