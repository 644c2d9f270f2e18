/**
 * The replicated reputation ledger: signed, hash-chained feeds in LevelDB, gossip and sync,
 * fraud proofs and slashing, and reputation as a pure function of the ledger.
 */
export { LedgerStore } from './store.js'
export type { Head, IngestOutcome, LedgerStoreOptions, SlashRecord, StoreStats } from './store.js'
export { LedgerEntry, HeartbeatSummary, FraudProof, openEntry, sealEntry, decodeStoredEntry, decodeStoredBody, kindName, MAX_ENTRY_ENVELOPE_BYTES } from './entry.js'
export type { LedgerRecord, DecodedBody, BodyKindName } from './entry.js'
export { verifyEntry } from './verify.js'
export type { VerifiedEntry, VerifyEntryOptions } from './verify.js'
export { buildEquivocationProof, buildBadOutputProof, verifyFraudProof } from './fraud.js'
export type { BadOutputEvidence, VerifiedFraudProof } from './fraud.js'
export {
  LedgerEntryError, MalformedEntryError, EntrySignatureError, BrokenChainError, FutureEntryError, OversizedBodyError,
  InvalidBodyError, InvalidFraudProofError, LedgerClosedError, SyncProtocolError
} from './errors.js'
export { signTestJob } from './dev.js'
export type { Signer, TestJob, TestJobOptions, TestOutcome } from './dev.js'
export { computeReputation, computeEarnings, collectEvidence, maxLiftPerCounterparty, ReputationEvidence, DEFAULT_REPUTATION } from './reputation.js'
export type { Reputation, ReputationParams, Earnings, CounterpartyEvidence } from './reputation.js'
export { ledgerService } from './service.js'
export type { LedgerService, LedgerServiceInit, LedgerStatus, FlushResult, SyncReport, HeadView, EntryView } from './service.js'
export { MAX_RANGE_ENTRIES, MAX_HEADS } from './sync.js'
export { ledgerExtensions, connectLedger, LEDGER_SERVICE, LEDGER_CAPABILITY } from './extensions.js'
export type { LedgerBuildOptions, LedgerExtensionOptions } from './extensions.js'
