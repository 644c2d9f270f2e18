/**
 * The replicated reputation ledger: signed, hash-chained feeds in LevelDB, gossip and sync,
 * fraud proofs and slashing, and reputation as a pure function of the ledger. Other rooms
 * reach the running service as `components[LEDGER_SERVICE]` (a LedgerService).
 *
 *   entries/     what an entry is: envelope and chain (entry.ts), bodies, receipt rules, fraud proofs
 *   ingest/      whether an entry may be stored, and nothing is stored otherwise: ingest.ts
 *                verifies (verify.ts), admits by standing and quota or quarantines, holds entries
 *                until gaps fill (pending.ts), detects equivocation, then hands the batch to the store
 *   store/       LedgerStore: reads and atomic writes, one repository per LevelDB key prefix (keys.ts)
 *   sync/        moving entries between nodes: the sync protocol's client and server, announcements,
 *                head hints, the legacy gossip topic, replication scope, flush
 *   reputation/  evidence, trust and scores from stored entries; uptime summaries; trust lists (anchors/)
 *   usage/       co-signed usage statements, the book of those that count, earnings
 *   service/     the libp2p service: its contract (ledger-service.ts), the running node (ledger-node.ts),
 *                its wiring from the node config (from-config.ts), control methods and views
 */export { LEDGER_SERVICE, LEDGER_CAPABILITY } from './service/ledger-service.js'
export type { LedgerService } from './service/ledger-service.js'
export { ledgerServices } from './service/from-config.js'
export type { LedgerBuildOptions } from './service/from-config.js'
export type { FlushResult } from './sync/flush.js'
export type { SyncReport } from './sync/client.js'
export type { LedgerStatus, HeadView, EntryView } from './service/views.js'
export type { Reputation } from './reputation/reputation.js'
export type { ReputationExplain } from './reputation/trust-explain.js'
export { MAX_TRUST_LIST_BYTES, openTrustList, sealTrustList } from './reputation/anchors/list.js'
export { encodeStatement, decodeStatement, signStatement, verifyStatementSignature, encodeCoSigned, openCoSignedUsage, usageAmount, MAX_USAGE_INTERVAL_MS } from './usage/statement.js'
export type { Usage } from './usage/statement.js'
export { isInvalidUsage, isUsageOverlap, trustListRejected } from './errors.js'

// the reputation rule, run by the market simulator (src/sim) on facts it keeps in memory
export { computeReputation, DEFAULT_REPUTATION } from './reputation/reputation.js'
export { jobFacts } from './reputation/view.js'
export { TrustGraph, TrustScores } from './reputation/trust.js'
export type { AttestationFact, ReceiptFact, SummaryFact } from './reputation/evidence.js'
