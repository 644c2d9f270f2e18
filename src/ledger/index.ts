/**
 * The replicated reputation ledger: signed, hash-chained feeds in LevelDB, gossip and sync,
 * fraud proofs and slashing, and reputation as a pure function of the ledger. Other rooms
 * reach the running service as `components[LEDGER_SERVICE]` (a LedgerService).
 */
export { LEDGER_SERVICE, LEDGER_CAPABILITY } from './service/ledger-node.js'
export type { LedgerService } from './service/ledger-node.js'
export { ledgerServices } from './service/from-config.js'
export type { LedgerBuildOptions } from './service/from-config.js'
export type { FlushResult } from './sync/flush.js'
export type { SyncReport } from './sync/client.js'
export type { LedgerStatus, HeadView, EntryView } from './service/views.js'
export type { Reputation } from './reputation/reputation.js'
export type { ReputationExplain } from './reputation/trust-explain.js'
export { encodeStatement, decodeStatement, signStatement, verifyStatementSignature, encodeCoSigned, openCoSignedUsage, usageAmount, MAX_USAGE_INTERVAL_MS, MAX_LEASE_GPUS } from './usage/statement.js'
export type { Usage, VerifiedUsage } from './usage/statement.js'
export { countUsage, UsageBook } from './usage/book.js'
export { computeServiceEarnings, type ServiceEarnings } from './usage/earnings.js'
export { InvalidUsageError, UsageOverlapError, type UsageRejection } from './errors.js'
