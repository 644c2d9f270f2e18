/**
 * Peers this node refuses for a while (peer-guard.ts): each entry expires, and the list holds
 * at most `maxEntries`; past that the entry denied longest ago gives way (a flood of fresh keys
 * cannot grow it, and each of those keys was denied for its own misbehaviour anyway).
 */

export interface Denial {
  peerId: string
  reason: string
  /** when it was denied, and until when (unix ms) */
  since: number
  until: number
}

export class DenyList {
  /** insertion order: the first entry is the one denied longest ago */
  private readonly entries = new Map<string, Denial>()
  private readonly maxEntries: number
  private readonly now: () => number

  constructor (maxEntries: number, now: () => number = Date.now) {
    if (!(maxEntries > 0)) throw new RangeError(`maxEntries must be positive, got ${maxEntries}`)
    this.maxEntries = maxEntries
    this.now = now
  }

  /** Denies `peerId` for `durationMs` from now (a longer denial already held is kept). */
  deny (peerId: string, reason: string, durationMs: number): Denial {
    const now = this.now()
    const held = this.get(peerId)
    const denial = { peerId, reason, since: now, until: Math.max(now + durationMs, held?.until ?? 0) }
    this.entries.delete(peerId)
    this.entries.set(peerId, denial)
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string)
    return denial
  }

  /** The peer's denial while it lasts. */
  get (peerId: string): Denial | undefined {
    const denial = this.entries.get(peerId)
    if (denial == null) return undefined
    if (denial.until > this.now()) return denial
    this.entries.delete(peerId)
    return undefined
  }

  has (peerId: string): boolean {
    return this.get(peerId) != null
  }

  /** The denials still in force (expired ones are dropped on the way). */
  list (): Denial[] {
    const now = this.now()
    for (const [id, d] of this.entries) if (d.until <= now) this.entries.delete(id)
    return [...this.entries.values()]
  }

  get size (): number {
    return this.list().length
  }
}
