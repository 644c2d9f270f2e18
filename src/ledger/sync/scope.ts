/**
 * Replication scope (protocols/README.md §7 "Replication scope", issue 40 item 3): which
 * feeds a node pulls at sync. With `replicate: all` (a bootstrap's default: a seed) every feed
 * is in scope. With `replicate: bounded` (a renter's and a provider's default) a feed is in scope
 * when its author is within `horizon` hops of a root in the counterparty graph:
 *
 *   roots (hop 0)   the node itself; its operator's trust seeds (bootstrap and --trust peers,
 *                   trust-list peers); providers it may award: a provider that bid to it (the
 *                   auction asked its reliability) or whose capability record it was shown
 *                   (`mayAward`)
 *   counterparties  an author named by a stored entry of an author at hop h (an attestation's
 *                   renter, a receipt's provider, a usage statement's other party), or whose
 *                   stored entry names one at hop h, is at hop h + 1 while h < horizon
 *
 * So with the default horizon 2 a renter holds its own and its counterparties' feeds, the feeds
 * of the providers it may award, their renters (whose receipts pair with their attestations)
 * and those renters' other providers (the trust graph's paths from its seeds). The graph is
 * learnt from stored entries only: a feed that enters scope because an entry pulled in this
 * session names it is pulled in the same session (client.ts re-reads the heads it
 * skipped). A head out of scope is not pulled: it is counted (`ledger status`), nothing else.
 * A peer's own feed that it announces to us (a heads request's hint: one feed per peer that
 * talks to us, which is how a counterparty's entries about us arrive) is pulled whatever the
 * scope, and once stored it links its author as any entry does.
 *
 * Heartbeats are not a source of providers: every node hears them from the whole network,
 * so they would put every provider in scope.
 */

import { namedAuthor } from '../ingest/standing.js'
import type { LedgerRecord } from '../entries/entry.js'

export const REPLICATE_MODES = ['all', 'bounded'] as const
export type ReplicateMode = typeof REPLICATE_MODES[number]

/** Hops from a root that are in scope by default. */
export const DEFAULT_HORIZON = 2
/** Bound on authors given a hop (past it, new authors stay out of scope until restart). */
const MAX_SCOPE_AUTHORS = 200_000
/** Bound on counterparties remembered per author (a busy provider's renters past it are not linked). */
const MAX_LINKS_PER_AUTHOR = 10_000
/** Bound on providers remembered as ones this node may award. */
const MAX_AWARDABLE = 20_000
/** Distinct skipped authors counted exactly up to this; past it the count is a lower bound. */
const MAX_SKIPPED_TRACKED = 100_000

export interface ReplicationScopeOptions {
  selfId: string
  mode: ReplicateMode
  horizon?: number
  /** the operator's trust seeds: roots */
  seeds?: Iterable<string>
}

export interface ScopeStats {
  mode: ReplicateMode
  horizon: number
  /** authors in scope (bounded mode; all: the authors held) */
  inScope: number
  /** providers this node may award (roots) */
  awardable: number
  /** heads out of scope a peer offered and we did not pull (all sessions) */
  skippedHeads: number
  /** distinct authors among them */
  skippedAuthors: number
}

export class ReplicationScope {
  readonly mode: ReplicateMode
  readonly horizon: number
  private readonly hops = new Map<string, number>()
  private readonly links = new Map<string, Set<string>>()
  private readonly awardable = new Set<string>()
  private readonly skipped = new Set<string>()
  private skippedHeads = 0

  constructor (opts: ReplicationScopeOptions) {
    this.mode = opts.mode
    this.horizon = Math.max(0, Math.floor(opts.horizon ?? DEFAULT_HORIZON))
    this.reach(opts.selfId, 0)
    for (const seed of opts.seeds ?? []) this.reach(seed, 0)
  }

  /** Whether `authorId`'s feed is pulled and kept. */
  includes (authorId: string): boolean {
    return this.mode === 'all' || this.hops.has(authorId)
  }

  /** Hops from the nearest root (undefined: out of the bounded scope). */
  hop (authorId: string): number | undefined {
    return this.hops.get(authorId)
  }

  /** A provider this node may award (it bid, or its capability record was seen): a root. */
  mayAward (providerId: string): void {
    if (this.awardable.has(providerId)) {
      this.reach(providerId, 0)
      return
    }
    if (this.awardable.size >= MAX_AWARDABLE) return
    this.awardable.add(providerId)
    this.reach(providerId, 0)
  }

  /** A stored entry: its author and the authors it names are counterparties. */
  noteStored (record: LedgerRecord): void {
    if (this.mode === 'all') return
    const named = namedAuthor(record)
    if (named != null) this.link(record.authorId, named)
  }

  /** A head a peer offered that is out of scope. */
  noteSkipped (authorId: string): void {
    this.skippedHeads++
    if (this.skipped.size < MAX_SKIPPED_TRACKED) this.skipped.add(authorId)
  }

  stats (heldAuthors: number): ScopeStats {
    return {
      mode: this.mode,
      horizon: this.horizon,
      inScope: this.mode === 'all' ? heldAuthors : this.hops.size,
      awardable: this.awardable.size,
      skippedHeads: this.skippedHeads,
      skippedAuthors: this.skipped.size
    }
  }

  private link (a: string, b: string): void {
    if (a === b) return
    this.addLink(a, b)
    this.addLink(b, a)
    const ha = this.hops.get(a)
    const hb = this.hops.get(b)
    // most links (a pair's next job) bring no one nearer: no walk for them
    if (ha != null && this.nearer(b, ha + 1)) this.reach(b, ha + 1)
    if (hb != null && this.nearer(a, hb + 1)) this.reach(a, hb + 1)
  }

  /** Whether `hop` is within the horizon and nearer than `id`'s held one. */
  private nearer (id: string, hop: number): boolean {
    return hop <= this.horizon && hop < (this.hops.get(id) ?? Infinity)
  }

  private addLink (from: string, to: string): void {
    let set = this.links.get(from)
    if (set == null) {
      set = new Set()
      this.links.set(from, set)
    }
    if (set.size < MAX_LINKS_PER_AUTHOR) set.add(to)
  }

  /** Gives `start` hop `hop` if that is nearer, and its counterparties theirs, breadth first within the horizon. */
  private reach (start: string, hop: number): void {
    const queue: Array<[string, number]> = [[start, hop]]
    for (let i = 0; i < queue.length; i++) {
      const [id, h] = queue[i]
      if (h > this.horizon) continue
      const held = this.hops.get(id)
      if (held != null && held <= h) continue
      if (held == null && this.hops.size >= MAX_SCOPE_AUTHORS) continue
      this.hops.set(id, h)
      for (const next of this.links.get(id) ?? []) queue.push([next, h + 1])
    }
  }
}
