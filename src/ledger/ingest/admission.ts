/**
 * What the ingest step (ingest.ts) asks before it stores an entry of another author: whether
 * the author has standing in this node's view (standing.ts) or goes to the quarantine
 * (quarantine.ts), and whether it is within its quota (quota.ts). After an entry is stored,
 * which authors it gave standing to, so the ingest step promotes their quarantined feeds in
 * the same batch.
 */

import { Quarantine, type QuarantineLimits, type QuarantineResult, type QuarantineStats } from './quarantine.js'
import { Quotas, type QuotaLimits } from './quota.js'
import { namedAuthor, namedAuthors, Standing, type RootedGrant, type Tier } from './standing.js'
import type { LedgerRecord } from '../entries/entry.js'
import type { LedgerError } from '../errors.js'
import type { VerifiedEntry } from './verify.js'

/** No author given standing (most stored entries): one array for all of them. */
const NONE: readonly string[] = []

export interface AdmissionOptions {
  /** this node's peer id (a root) */
  selfId: string
  /** the operator's trust seeds (roots) */
  trustedPeers?: Iterable<string>
  quotas?: Partial<Record<Exclude<Tier, 'self'>, Partial<QuotaLimits>>>
  quarantine?: Partial<QuarantineLimits>
  /** this node's clock: the rate quotas refill by it (default Date.now) */
  now?: () => number
}

/** What an entry held pending was charged, to give back when it leaves pending. */
export interface PendingCharge {
  record: LedgerRecord
  tier: Tier
  account: string
}

export class Admission {
  readonly standing: Standing
  readonly quotas: Quotas
  readonly quarantine: Quarantine

  constructor (opts: AdmissionOptions) {
    this.standing = new Standing(opts.selfId, opts.trustedPeers)
    this.quotas = new Quotas(opts.quotas, opts.now)
    this.quarantine = new Quarantine(this.quotas, opts.quarantine)
  }

  /** After load: a held feed and its stored bytes (an author without a rooted grant keeps provisional standing). */
  loadFeed (authorId: string, bytes: number): void {
    this.standing.loadHeld(authorId)
    this.quotas.preload(this.standing.account(authorId), bytes)
  }

  hasStanding (authorId: string): boolean {
    return this.standing.has(authorId)
  }

  /** Holds an entry of an author without standing. */
  hold (item: VerifiedEntry): QuarantineResult {
    return this.quarantine.offer(item, namedAuthors(item.record))
  }

  /** Why `record` (of an author with standing) may not be stored, or undefined. */
  check (record: LedgerRecord): LedgerError<'ERR_LEDGER_QUOTA'> | undefined {
    return this.quotas.check(record, this.standing.tier(record.authorId), this.standing.account(record.authorId))
  }

  /**
   * Charges an entry held pending a gap to its author's account as if it were stored (junk
   * ahead of the head costs its sender's quota, not this node's memory), or says why not.
   */
  chargePending (record: LedgerRecord): PendingCharge | LedgerError<'ERR_LEDGER_QUOTA'> {
    const tier = this.standing.tier(record.authorId)
    const account = this.standing.account(record.authorId)
    const over = this.quotas.check(record, tier, account)
    if (over != null) return over
    this.quotas.charge(record, tier, account)
    return { record, tier, account }
  }

  /** An entry left pending (stored now, which charges it anew, or dropped): its charge is given back. */
  refundPending (charge: PendingCharge): void {
    this.quotas.refund(charge.record, charge.tier, charge.account)
  }

  /** Counts a stored entry; returns the authors it gave standing to (whose quarantined feeds move in now). */
  stored (record: LedgerRecord): readonly string[] {
    this.quotas.charge(record, this.standing.tier(record.authorId), this.standing.account(record.authorId))
    const named = namedAuthor(record)
    return named != null && this.standing.refer(record.authorId, named) ? [named] : NONE
  }

  /** Stored entries of `authorId` were dropped (retention): their bytes no longer count against its quota. */
  dropped (authorId: string, bytes: number): void {
    this.quotas.release(this.standing.account(authorId), bytes)
  }

  /** A peer connected: true when it gained standing. */
  connect (peerId: string): boolean {
    return this.standing.connect(peerId)
  }

  /** The quarantined feed of an author that just gained standing, removed from the quarantine. */
  release (authorId: string): VerifiedEntry[] {
    return this.quarantine.take(authorId)
  }

  unsavedGrants (): RootedGrant[] {
    return this.standing.takeUnsaved()
  }

  stats (): QuarantineStats {
    return this.quarantine.stats()
  }
}
