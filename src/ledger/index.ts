/**
 * The replicated reputation ledger: signed, hash-chained feeds in LevelDB, gossip and sync,
 * fraud proofs and slashing, and reputation as a pure function of the ledger. Other rooms
 * reach the running service as `components[LEDGER_SERVICE]` (a LedgerService).
 */
export { LEDGER_SERVICE, LEDGER_CAPABILITY } from './service.js'
export type { LedgerService } from './service.js'
export { ledgerServices } from './services.js'
export type { LedgerBuildOptions } from './services.js'
export type { FlushResult } from './flush.js'
export type { SyncReport } from './sync-client.js'
export type { LedgerStatus, HeadView, EntryView } from './views.js'
export type { Reputation } from './reputation.js'
export type { ReputationExplain } from './trust-explain.js'
export { encodeStatement, decodeStatement, signStatement, verifyStatementSignature, encodeCoSigned, openCoSignedUsage, usageAmount, MAX_USAGE_INTERVAL_MS, MAX_LEASE_GPUS } from './usage.js'
export type { Usage, VerifiedUsage } from './usage.js'
export { countUsage, UsageBook } from './usage-book.js'
export { computeServiceEarnings, type ServiceEarnings } from './usage-earnings.js'
export { InvalidUsageError, UsageOverlapError, type UsageRejection } from './errors.js'

// the reputation rule, run by the market simulator (src/sim) on facts it keeps in memory
export { computeReputation, DEFAULT_REPUTATION } from './reputation.js'
export { jobFacts } from './reputation-view.js'
export { TrustGraph, TrustScores } from './trust.js'
export type { AttestationFact, ReceiptFact, SummaryFact } from './evidence.js'
