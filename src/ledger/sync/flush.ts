/**
 * Whether our own feed has left this node: a connected peer that serves our head entry back
 * to a range read holds every entry we wrote (it stores a feed only contiguously). Its heads
 * answer is not taken at its word: a peer could echo our hint's hash without holding
 * anything. The heads request (one head) still goes first, because it carries our hint, which
 * makes a peer that holds less of our feed pull it. A renter's submit waits for that before
 * it reports its receipt safe, and a stopping node says when it could not. A flush reports
 * exactly what was confirmed: our feed up to which seq, held by which peers; never more.
 */

import { sleep } from '../../common/index.js'
import type { LedgerStore } from '../store/store.js'
import type { SyncClient } from './client.js'

export interface FlushResult {
  /** our feed's head when asked: entries 1..seq are ours to publish (0: none, nothing to send) */
  seq: number
  /** our feed up to this seq is held by the peers in `by` (0: no peer confirmed anything) */
  acknowledgedSeq: number
  /** true only when a peer confirmed holding our feed up to `seq` (never when there was nothing to send) */
  acknowledged: boolean
  /** peers that confirmed, by serving our entry `acknowledgedSeq` back, that they hold our feed up to it */
  by: string[]
  /** peers asked in this flush (0 when an earlier confirmation already covered `seq`) */
  asked: number
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
  /** the own head seq a peer last confirmed holding, and who confirmed it */
  private acknowledged = 0
  private acknowledgedBy: string[] = []

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
    if (own == null) return { seq: 0, acknowledgedSeq: 0, acknowledged: false, by: [], asked: 0, note: 'this node has written no ledger entries of its own: nothing to send' }
    if (own.seq <= this.acknowledged) return this.result(own.seq, 0)
    const deadline = Date.now() + (opts.timeoutMs ?? 10_000)
    const asked = new Set<string>()
    while (Date.now() < deadline && !this.signal.aborted) {
      const peers = this.client.connectedPeers().slice(0, PEERS_ASKED)
      for (const peer of peers) asked.add(peer.toString())
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
        this.confirmed(own.seq, by)
        return this.result(own.seq, asked.size)
      }
      await sleep(ROUND_PAUSE_MS, this.signal)
    }
    const why = asked.size === 0 ? 'no peer was connected to ask' : `none of the ${asked.size} peer(s) asked served entry ${own.seq} back`
    return {
      ...this.result(own.seq, asked.size),
      note: `no peer confirmed holding this node's ledger entries up to ${own.seq} (${why}); they are kept locally and will be published on its next run`
    }
  }

  private confirmed (seq: number, by: string[]): void {
    if (seq < this.acknowledged) return
    this.acknowledgedBy = seq === this.acknowledged ? [...new Set([...this.acknowledgedBy, ...by])] : by
    this.acknowledged = seq
  }

  private result (seq: number, asked: number): FlushResult {
    return {
      seq,
      acknowledgedSeq: this.acknowledged,
      acknowledged: this.acknowledged >= seq,
      by: this.acknowledged > 0 ? [...this.acknowledgedBy] : [],
      asked
    }
  }
}
