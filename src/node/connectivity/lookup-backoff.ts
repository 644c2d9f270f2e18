/**
 * When the peer connector next looks for peers in the DHT. A lookup is a full kad-dht walk
 * (FIND_NODE to every close peer, each answer merged into the peer store on both sides): in a
 * network smaller than the connection target a node never reaches the target, and looking
 * every 10 s for ever was most of an idle node's CPU (test/bench/idle.bench.ts). So a lookup
 * that finds no peer to dial doubles the wait, up to `maxMs`; one that finds a peer, or a
 * lost connection (the network changed), brings it back to `baseMs`. A peer whose dials keep
 * failing stops counting as found after a few tries (connector.ts, RETRIES_BEFORE_GIVING_UP).
 */
export class LookupBackoff {
  private waitMs: number
  private nextAt: number

  constructor (private readonly baseMs: number, private readonly maxMs: number, now: number = Date.now()) {
    this.waitMs = baseMs
    this.nextAt = now + baseMs
  }

  /** whether a lookup is due at `now` */
  due (now: number = Date.now()): boolean {
    return now >= this.nextAt
  }

  /** the wait before the lookup after the next one (ms) */
  get currentWaitMs (): number {
    return this.waitMs
  }

  /** a lookup ended at `now`; `foundPeers`: it turned up a peer we were not connected to */
  done (foundPeers: boolean, now: number = Date.now()): void {
    this.waitMs = foundPeers ? this.baseMs : Math.min(this.maxMs, this.waitMs * 2)
    this.nextAt = now + this.waitMs
  }

  /** something changed (a connection closed): look again within the base interval */
  reset (now: number = Date.now()): void {
    this.waitMs = this.baseMs
    this.nextAt = Math.min(this.nextAt, now + this.baseMs)
  }
}
