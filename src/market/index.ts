/**
 * Market: job specs, the renter's reverse auction, the provider's bid engine and dynamic
 * pricing, gossip validation of the market topics, the accept / explain side protocols and
 * the one award check. The face other src/ folders use; tests import module files directly.
 */

// job specs
export { loadJobSpec, parseJobSpec, readJobFile, MAX_SHM_MIB } from './job-spec.js'
export type { JobSpec, JobFlags, JobLimits } from './job-spec.js'

// the award check (exec's Start frame)
export { verifyAwardForWinner, openAward, AwardCheckError } from './award-check.js'
export { peerIdFromBytes, jobGpuCount, MAX_JOB_GPUS } from './messages.js'
export type { VerifiedAward } from './award-check.js'

// the auction's report
export type { AuctionEvent, AuctionReport, BidRow } from './auction-report.js'

// services
export { marketServices } from './services.js'
export { followMarketLog } from './market-log.js'
export { MARKET_VALIDATION_SERVICE } from './validation.js'
export { MARKET_PROVIDER_SERVICE, MARKET_PROVIDER_CAPABILITY } from './provider-service.js'
export type { MarketProviderService } from './provider-service.js'
export { MARKET_RENTER_SERVICE, MARKET_RENTER_CAPABILITY } from './renter-service.js'
export type { MarketRenterService } from './renter-service.js'

// the auction's own decisions, run by the market simulator (src/sim) in virtual time
export { toJobRequest } from './job-spec.js'
export { declineReasonName, microToUsd } from './messages.js'
export { bidProblem, clearingPrice, compareScored, latencyMatters, scoreOffer } from './ranking.js'
export type { BidContext, ScoredOffer } from './ranking.js'
export { BidEngine } from './bid-engine.js'
export { timeClassAt } from './pricing.js'
export type { TimeClass } from './pricing.js'
export type { ReputationSource } from './reputation.js'
