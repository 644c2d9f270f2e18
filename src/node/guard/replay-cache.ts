/**
 * The gossip router's memory of accepted messages (protocols/README.md §9 "Replay"): each is
 * kept until it expires, never evicted early, so a flood of other messages cannot make an
 * earlier one replayable within its lifetime. A topic's retention is the longest a message on
 * it can stay valid (its maximum lifetime plus the clock skew: a message created at most skew
 * ahead of our clock expires at most lifetime later); after that the topic's own time rules
 * refuse it anyway. Memory is bounded by refusing floods rather than by forgetting: past a
 * per-signer or a global count of live messages, new messages are refused (ignored) until
 * older ones expire.
 */

export interface ReplayCacheLimits {
  /** live messages remembered per signer (default 4096) */
  perSigner: number
  /** live messages remembered in all (default 200 000) */
  total: number
}

export const REPLAY_CACHE_LIMITS: ReplayCacheLimits = { perSigner: 4096, total: 200_000 }

interface Seen { expiresAt: number, signer: string }

export type ReplayVerdict = 'fresh' | 'replayed' | 'signer-full' | 'full'

export class ReplayCache {
  private readonly limits: ReplayCacheLimits
  private readonly now: () => number
  /** per retention: insertion order is expiry order, so expired ones are swept from the front */
  private readonly queues = new Map<number, Map<string, Seen>>()
  private readonly index = new Map<string, Seen>()
  private readonly perSigner = new Map<string, number>()

  constructor (limits: Partial<ReplayCacheLimits> = {}, now: () => number = Date.now) {
    this.limits = { ...REPLAY_CACHE_LIMITS, ...limits }
    this.now = now
  }

  get size (): number {
    this.sweep()
    return this.index.size
  }

  /** Whether `id` may be validated now: not seen within its lifetime, and there is room to remember it. */
  check (id: string, signer: string): ReplayVerdict {
    this.sweep()
    if (this.index.has(id)) return 'replayed'
    if ((this.perSigner.get(signer) ?? 0) >= this.limits.perSigner) return 'signer-full'
    if (this.index.size >= this.limits.total) return 'full'
    return 'fresh'
  }

  /** Remembers an accepted message for `retentionMs` from now. */
  remember (id: string, signer: string, retentionMs: number): void {
    if (this.index.has(id)) return
    const seen = { expiresAt: this.now() + retentionMs, signer }
    let queue = this.queues.get(retentionMs)
    if (queue == null) this.queues.set(retentionMs, queue = new Map())
    queue.set(id, seen)
    this.index.set(id, seen)
    this.perSigner.set(signer, (this.perSigner.get(signer) ?? 0) + 1)
  }

  private sweep (): void {
    const now = this.now()
    for (const queue of this.queues.values()) {
      for (const [id, seen] of queue) {
        if (seen.expiresAt > now) break
        queue.delete(id)
        this.index.delete(id)
        const left = (this.perSigner.get(seen.signer) ?? 1) - 1
        if (left > 0) this.perSigner.set(seen.signer, left)
        else this.perSigner.delete(seen.signer)
      }
    }
  }
}
