/**
 * The renter's book of cache overclaimers (protocols/README.md §7 "Auction", *Input cache
 * claims*): providers whose Held frame, on a job this renter awarded them, bore out less of their
 * bid's cache claim than the claim bought in the ranking (locality.ts judgeCacheClaim). Their bids
 * get no locality credit from this renter for OVERCLAIM_BOOK.forMs after the last overclaim; the
 * award says so for each such bid (Award.RankingInput.locality_denied), so audits still re-derive
 * the winner.
 *
 * Local, in memory and bounded: at most OVERCLAIM_BOOK.maxProviders entries, the oldest noted
 * forgotten first. An entry costs its provider an award won from this renter, so flooding it means
 * winning that many jobs; a restart forgets the book.
 */

/** How long an overclaim costs the provider its locality credit here, and how many are kept. */
export const OVERCLAIM_BOOK = {
  forMs: 24 * 60 * 60_000,
  maxProviders: 1_000
} as const

/** What the book remembers of one provider's last overclaim. */
export interface Overclaim {
  /** unix ms until which its bids get no locality credit */
  untilMs: number
  claimedBytes: number
  heldBytes: number
}

export interface OverclaimBookInit {
  forMs?: number
  maxProviders?: number
  now?: () => number
}

export class OverclaimBook {
  private readonly forMs: number
  private readonly maxProviders: number
  private readonly now: () => number
  /** by provider peer id, in the order noted (the oldest first) */
  private readonly entries = new Map<string, Overclaim>()

  constructor (init: OverclaimBookInit = {}) {
    this.forMs = init.forMs ?? OVERCLAIM_BOOK.forMs
    this.maxProviders = Math.max(1, init.maxProviders ?? OVERCLAIM_BOOK.maxProviders)
    this.now = init.now ?? Date.now
  }

  /** Records an overclaim by `provider` now: the period starts again from now. */
  note (provider: string, figures: { claimedBytes: number, heldBytes: number }): void {
    const now = this.now()
    this.entries.delete(provider)
    const { claimedBytes, heldBytes } = figures
    this.entries.set(provider, { untilMs: now + this.forMs, claimedBytes, heldBytes })
    for (const [id, entry] of this.entries) {
      if (this.entries.size <= this.maxProviders && entry.untilMs > now) break
      this.entries.delete(id)
    }
  }

  /** The provider's overclaim still in force, if any. */
  get (provider: string): Overclaim | undefined {
    const entry = this.entries.get(provider)
    if (entry == null) return undefined
    if (entry.untilMs > this.now()) return entry
    this.entries.delete(provider)
    return undefined
  }

  /** Whether the provider's bids get no locality credit now (the ranking's BidContext.noLocality). */
  has (provider: string): boolean {
    return this.get(provider) != null
  }

  /** Entries held, expired ones included until they are next looked at. */
  get size (): number {
    return this.entries.size
  }
}
