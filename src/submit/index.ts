/**
 * Submit: the renter's job path as one service. `submit.job` auctions a job (rounds per
 * attempt), ships it to the winner, verifies the attested outputs, signs and records the
 * receipt, and fails over to another provider (attempts) with the last checkpoint.
 */
export { SUBMIT_SERVICE } from './service.js'
export type { SubmitComponents, SubmitEvent, SubmitStart } from './service.js'
export { submitServices } from './role-services.js'
export { noPeers, SubmitError } from './errors.js'
export type { ReceiptLedger } from './summary.js'
export { checkSubmission } from './payload.js'
export { auctionRounds } from './rounds.js'
export { ROUND_RETRY_MS, ROUNDS_PER_ATTEMPT } from './rounds.js'
