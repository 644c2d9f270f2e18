/**
 * Market: job specs, the renter's reverse auction, the provider's bid engine and dynamic
 * pricing, gossip validation of the market topics, the accept / explain side protocols and
 * the one award check. The face other src/ folders use; tests import module files directly.
 *
 * Where things are:
 *  - renter/   the renter's side: job specs, one auction round (auction.ts: collect bids, rank,
 *              offer the award), the bid window, award offers, "why not?" questions
 *  - provider/ the provider's side: the bid engine and its pricing, the declines at bid time
 *              (bid-declines.ts) and at award time (award-declines.ts), the accept answer
 *  - shared/   what both sides read and anyone can re-run: the wire messages, the award rule
 *              (ranking.ts: which bid wins), the award check, the bids audit, gossip validation
 * A provider's third and last chance to decline a job is at start time: exec/provider/admission.ts.
 */

// job specs
export { loadJobSpec, parseJobSpec, readJobFile, MAX_SHM_MIB } from './renter/job-spec.js'
export type { JobSpec, JobFlags, JobLimits } from './renter/job-spec.js'

// the award check (exec's Start frame)
export { verifyAwardForWinner, openAward } from './shared/award-check.js'
export { isAwardCheckError } from './errors.js'
export { peerIdFromBytes, jobGpuCount, MAX_JOB_GPUS } from './shared/messages.js'
export type { VerifiedAward } from './shared/award-check.js'

// the winner's cache claim against its Held frame (exec's attempt)
export { judgeCacheClaim } from './shared/locality.js'

// the auction's report
export type { AuctionEvent, AuctionReport, BidRow } from './renter/auction-report.js'

// services
export { marketServices } from './role-services.js'
export { followMarketLog } from './provider/market-log.js'
export { MARKET_PROVIDER_SERVICE, MARKET_PROVIDER_CAPABILITY } from './provider/provider-service.js'
export type { MarketProviderService } from './provider/provider-service.js'
export { MARKET_RENTER_SERVICE, MARKET_RENTER_CAPABILITY } from './renter/renter-service.js'
export type { MarketRenterService } from './renter/renter-service.js'

// the auction's own decisions, run by the market simulator (src/sim) in virtual time
export { toJobRequest } from './renter/job-spec.js'
export { declineReasonName, microToUsd } from './shared/messages.js'
export { bidProblem, clearingPrice, compareScored, latencyMatters, scoreOffer } from './shared/ranking.js'
export type { BidContext, ScoredOffer } from './shared/ranking.js'
export { BidEngine } from './provider/bid-engine.js'
export { timeClassAt } from './provider/pricing.js'
export type { TimeClass } from './provider/pricing.js'
export type { ReputationSource } from './shared/reputation.js'
