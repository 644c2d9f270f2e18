/**
 * Market: job specs, the renter's reverse auction, the provider's bid engine and dynamic
 * pricing, gossip validation of the market topics, and the accept / explain side protocols.
 * Other folders import only from here.
 */

// job specs
export { parseJobSpec, readJobFile, applyJobFlags, loadJobSpec, toJobRequest, JOB_DEFAULTS } from './job-spec.js'
export type { JobSpec, JobFlags, JobRequestOptions } from './job-spec.js'

// wire messages and units
export {
  signJobRequest, signBid, signAward, signAcceptResponse, signDecline, readJobRequest, readBid, readAward, readAcceptResponse, readDecline,
  openSigned, envelopeBytes, usdToMicro, microToUsd, tierToWire, tierFromWire, pricingRuleName, pricingRuleToWire, isPreemptible,
  declineReasonName, toHex, MICRO_USD, PPM, MAX_BID_WINDOW_MS, TIER_NAMES, WORKLOADS, DeclineReason, PricingRule
} from './messages.js'
export type { Signed, TierName, Workload, PricingRuleName } from './messages.js'
export { MarketMessageError, AuctionError, MarketStreamError } from './errors.js'

// ranking and audit (renter rule), reputation input
export { selectValidBids, rankBids, bidsDigest, clearingPrice, scoreFactor, bidProblem, latencyMatters, auditAward, DEFAULT_RANKING } from './ranking.js'
export type { RankingParams, RankedBid, DroppedBid, BidContext, AwardAudit } from './ranking.js'
export { neutralReputation, fixedReputation, NEUTRAL_RELIABILITY } from './reputation.js'
export type { ReputationSource } from './reputation.js'

// provider side: matching, pricing, bid engine
export { matchJob } from './matching.js'
export type { CapacitySnapshot, MatchResult } from './matching.js'
export { quotePrice, timeClassAt, DEFAULT_PRICING } from './pricing.js'
export type { PricingParams, PriceInputs, TimeClass } from './pricing.js'
export { BidEngine, allGpusFree, capacitySnapshot } from './bid-engine.js'
export type { CapacitySource, BidDecision, BidEngineOptions, BidEngineStats } from './bid-engine.js'

// services
export { marketValidation, validateJobRequest, validateBid, AwardValidator } from './validation.js'
export { marketProvider } from './provider-service.js'
export type { MarketProviderService, MarketProviderInit, AcceptedJob, AcceptVerdict, BidEvent, DeclineEvent, AwardSeenEvent } from './provider-service.js'
export { marketRenter } from './renter-service.js'
export type { MarketRenterService, MarketRenterInit } from './renter-service.js'
export { Auctioneer, MAX_ATTEMPTS } from './auction.js'
export type { AuctionReport, AuctionOptions, AuctionEvent, BidRow, AwardRow, DeclineCounts, AttemptOutcome } from './auction.js'
export { marketExtensions, followMarketLog, MARKET_PROVIDER_SERVICE, MARKET_RENTER_SERVICE, MARKET_VALIDATION_SERVICE, MARKET_PROVIDER_CAPABILITY, MARKET_RENTER_CAPABILITY } from './extensions.js'
export type { MarketExtensionOptions } from './extensions.js'
