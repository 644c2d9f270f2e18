/**
 * Whether our own feed has left this node: a connected peer that serves our head entry back
 * to a range read holds every entry we wrote (it stores a feed only contiguously). Its heads
 * answer is not taken at its word: a peer could echo our hint's hash without holding
 * anything. The heads request (one head) still goes first, because it carries our hint, which
 * makes a peer that holds less of our feed pull it. A renter's short-lived peer waits for
 * that before it exits, and a stopping node says when it could not.
 */

import { sleep } from '../common/index.js'
import type { LedgerStore } from './store.js'
import type { SyncClient } from './sync-client.js'

export interface FlushResult {
  /** true when a peer holds our feed up to `seq` (or there is nothing to hold) */
  acknowledged: boolean
  seq: number
  /** peers that said they hold it */
  by: string[]
  /** when not acknowledged: what the user should know */
  note?: string
}

/** Peers asked at once. */
const PEERS_ASKED = 8
/** A pause between rounds of asking while no peer holds our head yet. */
const ROUND_PAUSE_MS = 250

export class FeedFlusher {
  private readonly client: SyncClient
  private readonly store: () => LedgerStore | undefined
  private readonly selfId: string
  private readonly signal: AbortSignal
  /** the own head seq a peer last confirmed holding */
  private acknowledged = 0

  constructor (client: SyncClient, store: () => LedgerStore | undefined, selfId: string, signal: AbortSignal) {
    this.client = client
    this.store = store
    this.selfId = selfId
    this.signal = signal
  }

  /** The highest seq of our feed a peer confirmed holding. */
  get acknowledgedSeq (): number {
    return this.acknowledged
  }

  /** Resolves when a connected peer holds our feed's head, or after timeoutMs (default 10 s). */
  async flush (opts: { timeoutMs?: number } = {}): Promise<FlushResult> {
    const own = this.store()?.head(this.selfId)
    if (own == null) return { acknowledged: true, seq: 0, by: [] }
    if (own.seq <= this.acknowledged) return { acknowledged: true, seq: own.seq, by: [] }
    const deadline = Date.now() + (opts.timeoutMs ?? 10_000)
    while (Date.now() < deadline && !this.signal.aborted) {
      const peers = this.client.connectedPeers().slice(0, PEERS_ASKED)
      const holders = await Promise.all(peers.map(async (peer) => {
        try {
          const signal = AbortSignal.timeout(Math.max(100, Math.min(3_000, deadline - Date.now())))
          await this.client.heads(peer, signal, undefined, 1)
          return await this.client.holds(peer, own, signal) ? peer.toString() : undefined
        } catch {
          return undefined
        }
      }))
      const by = holders.filter((p): p is string => p != null)
      if (by.length > 0) {
        this.acknowledged = Math.max(this.acknowledged, own.seq)
        return { acknowledged: true, seq: own.seq, by }
      }
      await sleep(ROUND_PAUSE_MS, this.signal)
    }
    return {
      acknowledged: false,
      seq: own.seq,
      by: [],
      note: `no peer confirmed holding this node's ledger entries up to ${own.seq}; they are kept locally and will be published on its next run`
    }
  }
}
