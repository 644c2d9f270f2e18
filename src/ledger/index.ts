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
