/**
 * Standing: the authors this node's view vouches for (protocols/README.md §7 "Standing and
 * quarantine"). Entries of authors without it wait in the quarantine (quarantine.ts) and are
 * neither served, gossiped onward nor counted.
 *
 *   roots        the node itself and the peers its operator trusts (`trustedPeers`): depth 0
 *   connected    a peer on a live connection to this node proved its key: depth 1, provisional
 *   referenced   an entry of an author with standing that names another author (an
 *                attestation's renter, a receipt's provider) gives it standing one step
 *                deeper, up to MAX_STANDING_DEPTH (the closure is bounded)
 *
 * Standing reached from a root is "rooted" (and persisted by the store). Standing reached only
 * from a connection is "provisional": every author in that tree is charged to the connected
 * peer that started it (quota.ts gives the whole tree one small byte budget), so one
 * connection cannot vouch for an unbounded number of throwaway keys. A rooted reference
 * upgrades a provisional author. Fraud proofs name the accused but vouch for nobody.
 */

import { decodeStoredBody } from '../entries/body.js'
import { parseAuthor, type LedgerRecord } from '../entries/entry.js'

/** How far the closure reaches from a root (a root is depth 0). */
export const MAX_STANDING_DEPTH = 3
/** Bound on provisional grants held in memory; past it, new connections and their trees get none. */
const MAX_PROVISIONAL_AUTHORS = 50_000

export type Tier = 'self' | 'trusted' | 'standing' | 'provisional' | 'none'

interface Grant {
  depth: number
  /** provisional: the connected peer this author's bytes are charged to */
  root?: string
}

/** A change to persist: `author` now has rooted standing at `depth`. */
export interface RootedGrant {
  authorId: string
  depth: number
}

export class Standing {
  readonly selfId: string
  private readonly trusted: ReadonlySet<string>
  private readonly grants = new Map<string, Grant>()
  private provisionalCount = 0
  /** rooted grants not yet written by the store */
  private unsaved: RootedGrant[] = []

  constructor (selfId: string, trustedPeers: Iterable<string> = []) {
    this.selfId = selfId
    this.trusted = new Set([...trustedPeers].filter(id => id !== selfId))
  }

  tier (authorId: string): Tier {
    if (authorId === this.selfId) return 'self'
    if (this.trusted.has(authorId)) return 'trusted'
    const grant = this.grants.get(authorId)
    if (grant == null) return 'none'
    return grant.root == null ? 'standing' : 'provisional'
  }

  has (authorId: string): boolean {
    return this.tier(authorId) !== 'none'
  }

  depth (authorId: string): number | undefined {
    if (authorId === this.selfId || this.trusted.has(authorId)) return 0
    return this.grants.get(authorId)?.depth
  }

  /** The account an author's bytes are charged to: the connected peer of its provisional tree, else itself. */
  account (authorId: string): string {
    return this.grants.get(authorId)?.root ?? authorId
  }

  /** A rooted grant read back from the store. */
  load (authorId: string, depth: number): void {
    this.setGrant(authorId, { depth: Math.max(1, Math.min(depth, MAX_STANDING_DEPTH)) }, false)
  }

  /** An author the store holds a feed of but no grant for (a provisional tree of an earlier run): its own account. */
  loadHeld (authorId: string): void {
    if (!this.has(authorId)) this.setGrant(authorId, { depth: MAX_STANDING_DEPTH, root: authorId })
  }

  /** `peerId` is connected now. True when it gained standing (its quarantined feed may be promoted). */
  connect (peerId: string): boolean {
    if (this.has(peerId)) return false
    return this.setGrant(peerId, { depth: 1, root: peerId })
  }

  /**
   * A stored entry of `by` names `named`. True when `named` gained standing or moved from
   * provisional to rooted (so its quarantined entries, and what they name, are promoted).
   */
  refer (by: string, named: string): boolean {
    if (named === by || named === this.selfId || this.trusted.has(named)) return false
    const from = this.depth(by)
    if (from == null || from >= MAX_STANDING_DEPTH) return false
    const byGrant = this.grants.get(by)
    const root = by === this.selfId || this.trusted.has(by) ? undefined : byGrant?.root
    const held = this.grants.get(named)
    const next: Grant = { depth: from + 1, root }
    if (held != null) {
      // only a rooted path replaces a provisional one; a shorter rooted path lowers the depth
      if (root != null) return false
      if (held.root == null && held.depth <= next.depth) return false
      const upgraded = held.root != null
      this.setGrant(named, next)
      return upgraded
    }
    return this.setGrant(named, next)
  }

  /** Rooted grants made since the last call, for the store to persist with the entries that made them. */
  takeUnsaved (): RootedGrant[] {
    const out = this.unsaved
    this.unsaved = []
    return out
  }

  private setGrant (authorId: string, grant: Grant, persist = true): boolean {
    const held = this.grants.get(authorId)
    if (grant.root != null && held?.root == null) {
      if (this.provisionalCount >= MAX_PROVISIONAL_AUTHORS) return false
      this.provisionalCount++
    }
    if (grant.root == null && held?.root != null) this.provisionalCount--
    this.grants.set(authorId, grant)
    if (grant.root == null && persist) this.unsaved.push({ authorId, depth: grant.depth })
    return true
  }
}

/** The authors an entry vouches for: an attestation's renter, a receipt's provider. */
export function namedAuthors (record: LedgerRecord): string[] {
  const id = namedAuthor(record)
  return id == null ? [] : [id]
}

/** The one author an entry vouches for (namedAuthors' only one), without an array for it: sync asks for every entry. */
export function namedAuthor (record: LedgerRecord): string | undefined {
  let body
  try {
    body = decodeStoredBody(record)
  } catch {
    return undefined
  }
  // a usage statement names the party other than the author
  const bytes = body.kind === 'attestation'
    ? body.attestation.message.renter
    : body.kind === 'receipt'
      ? body.receipt.message.provider
      : body.kind === 'usage' ? (body.usage.providerId === record.authorId ? body.usage.usage.renter : body.usage.usage.provider) : undefined
  return bytes == null ? undefined : parseAuthor(bytes)?.id
}
