/**
 * The ingest step's public shapes (ingest.ts): its options, what became of each entry, and
 * what it holds beside the store.
 */

import type { AdmissionOptions } from './admission.js'
import type { QuarantineStats } from './quarantine.js'
import type { ProofBudgetLimits } from './quota.js'
import type { RangeExpectation, VerifyEntryOptions } from './verify.js'
import type { LedgerEntryError } from '../errors.js'
import type { LedgerRecord } from '../entries/entry.js'
import type { StoredStats } from '../store/store.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

/** What happened to one ingested entry. */
export type IngestOutcome =
  | { status: 'added', record: LedgerRecord }
  | { status: 'duplicate', record: LedgerRecord }
  /** ahead of the held head: kept in memory until the gap is filled */
  | { status: 'pending', record: LedgerRecord }
  /** its author has no standing in this node's view: held in the quarantine, not stored (admission.ts) */
  | { status: 'quarantined', record: LedgerRecord }
  /**
   * a second entry at a held (or pending) seq: the author equivocated; `proof` is our entry
   * carrying the fraud proof, absent when the author is slashed already (or one is staged), or
   * when our proof budget is spent (then it is not slashed here until a proof of it is stored)
   */
  | { status: 'equivocation', record: LedgerRecord, held: LedgerRecord, proof?: LedgerRecord }
  /** below the feed's base: that part of the feed was dropped here (retention, README §7), so it is not taken back */
  | { status: 'pruned', record: LedgerRecord }
  | { status: 'rejected', error: LedgerEntryError }

export interface LedgerIngestOptions {
  /** our node key: signs our own feed and the fraud proofs we build */
  privateKey: Ed25519PrivateKey
  peerId: PeerId
  /** the clock (tests move it) */
  now?: () => number
  /** bound on entries held ahead of their author's head (default 4096; 256 per author) */
  maxPending?: number
  /**
   * standing, quarantine and quotas (admission.ts); without it every verified entry of any
   * author is stored (tests and tools that fill a store directly)
   */
  admission?: Omit<AdmissionOptions, 'selfId'>
  /** fsync every batch (default true; a benchmark may turn it off to see the verifier alone) */
  syncWrites?: boolean
  /** the bound on fraud proofs we write into our own feed (quota.ts PROOF_BUDGET) */
  proofBudget?: Partial<ProofBudgetLimits>
}

export interface LedgerStats extends StoredStats {
  pending: number
  /** present when the ledger admits by standing */
  quarantine?: QuarantineStats
}

export type IngestOptions = Omit<VerifyEntryOptions, 'now'> & { range?: RangeExpectation }
