/**
 * Token buckets by key (a peer, or a peer and a topic class), in a bounded map: the least
 * recently used bucket is dropped past `maxKeys`. A dropped bucket comes back full, which only
 * forgives a key that has been quiet longer than every other tracked key.
 */

export interface RateLimit {
  /** tokens added per second: the sustained rate allowed */
  perSecond: number
  /** bucket size: the burst allowed after a quiet spell */
  burst: number
}

interface Bucket { tokens: number, at: number }

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>()
  private readonly maxKeys: number
  private readonly now: () => number

  constructor (maxKeys: number, now: () => number = Date.now) {
    if (!(maxKeys > 0)) throw new RangeError(`maxKeys must be positive, got ${maxKeys}`)
    this.maxKeys = maxKeys
    this.now = now
  }

  get size (): number {
    return this.buckets.size
  }

  /** Takes one token from `key`'s bucket; false when it is empty (the caller drops the thing). */
  take (key: string, limit: RateLimit): boolean {
    const now = this.now()
    let bucket = this.buckets.get(key)
    if (bucket == null) {
      bucket = { tokens: limit.burst, at: now }
    } else {
      // refill since the last take; re-inserted below so the map's first key is the least recently used
      this.buckets.delete(key)
      bucket.tokens = Math.min(limit.burst, bucket.tokens + (now - bucket.at) * limit.perSecond / 1000)
      bucket.at = now
    }
    this.buckets.set(key, bucket)
    if (this.buckets.size > this.maxKeys) this.buckets.delete(this.buckets.keys().next().value as string)
    if (bucket.tokens < 1) return false
    bucket.tokens -= 1
    return true
  }

  /**
   * Takes one token from `key`'s bucket even when it is empty, going into debt: the ms to wait
   * before acting on it (0: at once). Callers that pace themselves this way keep within `limit`
   * however many of them reserve at once: each waits its turn.
   */
  reserve (key: string, limit: RateLimit): number {
    if (this.take(key, limit)) return 0
    const bucket = this.buckets.get(key) as Bucket
    bucket.tokens -= 1
    // the caller's token is the one that arrives when the balance is back at zero
    return Math.ceil(-bucket.tokens * 1000 / limit.perSecond)
  }

  /** Gives back a token taken for something that turned out to cost nothing (a replay). */
  refund (key: string, limit: RateLimit): void {
    const bucket = this.buckets.get(key)
    if (bucket != null) bucket.tokens = Math.min(limit.burst, bucket.tokens + 1)
  }
}
