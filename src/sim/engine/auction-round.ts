/**
 * One auction in the simulation, with the node's own decision code: every candidate provider's
 * bid engine decides (matching + dynamic pricing) and builds its Bid; the renter drops bids
 * that fail its checks (ranking.ts bidProblem: constraints, exclusions, reliability), scores
 * the rest (scoreOffer: price / reliability^w with latency for gold) and orders them
 * (compareScored); the clearing price of each place is clearingPrice's. What is simulated:
 * who hears the job (the sampled candidates) and the round trips.
 */

import type { JobRequest } from '../../../protocols/market.js'
import { bidProblem, clearingPrice, compareScored, declineReasonName, latencyMatters, scoreOffer, toJobRequest, type BidContext, type JobSpec, type ReputationSource, type ScoredOffer, type TimeClass } from '../../market/index.js'
import type { SimProvider } from '../model/provider.js'
import type { SimJob } from '../model/population.js'
import type { LatencyModel } from '../model/latency.js'
import type { Scenario } from '../scenario.js'

/** Reliability a gold job asks for: a newcomer (0.5) qualifies, a provider that broke jobs does not. */
export const GOLD_MIN_RELIABILITY = 0.45

export interface Offer {
  provider: SimProvider
  scored: ScoredOffer
  timeClass: TimeClass
  rttMs: number
}

export interface AuctionResult {
  request: JobRequest
  /** best first */
  ranked: Offer[]
  /** the clearing price of each place, micro-USD per GPU-hour */
  prices: bigint[]
  declines: Record<string, number>
  dropped: Record<string, number>
}

/** A job request's identity and time: its id, its renter's key, the scenario's market and the wall-clock instant. */
export interface JobRequestContext {
  jobId: Uint8Array
  renter: Uint8Array
  scenario: Scenario
  now: number
}

/** The job file a renter would write for this task (market/job-spec.ts), turned into its JobRequest. */
export function jobRequestFor (job: SimJob, { jobId, renter, scenario, now }: JobRequestContext): JobRequest {
  const spec: JobSpec = {
    name: `task-${job.task.id}`,
    tier: job.tier,
    workload: 'training',
    gpus: job.task.gpus,
    runtime: { command: ['run'] },
    inputs: [],
    outputs: [],
    estimatedMinutes: job.task.durationMs / 60_000,
    datasets: [],
    constraints: {
      minVramGb: 0,
      gpuModels: job.models,
      regions: [],
      residency: job.residency === '' ? undefined : job.residency,
      minReliability: job.tier === 'gold' ? GOLD_MIN_RELIABILITY : undefined,
      preemptible: job.tier === 'bronze',
      minPreemptionNoticeSeconds: 0,
      excludeSimulated: false
    },
    auction: {
      bidWindowMs: scenario.market.bidWindowMs,
      pricing: scenario.market.pricing,
      acceptTimeoutMs: scenario.market.acceptTimeoutMs
    }
  }
  // the job id doubles as the nonce: one auction per job at a time, and no randomness in a run
  return toJobRequest(spec, { renter, jobId, now, nonce: jobId })
}

export interface AuctionInput {
  request: JobRequest
  candidates: readonly SimProvider[]
  renterRegion: string
  reputation: ReputationSource
  exclude: ReadonlySet<string>
  latency: LatencyModel
  now: number
}

export function runAuction (input: AuctionInput): AuctionResult {
  const { request, now } = input
  const closeAt = now + request.bidWindowMs
  const declines: Record<string, number> = {}
  const dropped: Record<string, number> = {}
  // where the run models data, the renter names the job's dataset, also asks providers that hold
  // it (its `market ls --dataset` lookup), and each bid claims what its provider's cache holds of it
  const data = input.candidates[0]?.data
  data?.nameInputs(request)
  const candidates =
    data == null
      ? input.candidates
      : input.candidates.concat(data.holdersToAsk(request, input.candidates, input.exclude))
  const rtt = new Map<string, number>()
  for (const p of candidates) rtt.set(p.id, input.latency.rttMs(input.renterRegion, p.region.name))
  const ctx: BidContext = {
    reputation: input.reputation,
    exclude: input.exclude,
    rttMs: latencyMatters(request) ? rtt : undefined
  }
  const offers: Offer[] = []
  for (const p of candidates) {
    const decision = p.engine.decide(request, now)
    p.engine.record(decision)
    if (!decision.bid) {
      const name = declineReasonName(decision.reason)
      declines[name] = (declines[name] ?? 0) + 1
      continue
    }
    const bid = p.engine.buildBid(request, decision, { provider: p.hash, now })
    if (data != null) {
      const held = data.held(p.index, request)
      bid.cachedDatasets = held.datasets
      bid.cachedBytes = held.bytes
    }
    const problem = bidProblem({ bid, job: request, provider: p.id, ctx, now: closeAt })
    if (problem != null) {
      dropped[problem] = (dropped[problem] ?? 0) + 1
      continue
    }
    offers.push({
      provider: p,
      scored: scoreOffer({ provider: p.id, priceMicroUsd: bid.priceMicroUsd, held: bid, job: request, ctx }),
      timeClass: decision.timeClass,
      rttMs: rtt.get(p.id) ?? 0
    })
  }
  offers.sort((a, b) => compareScored(a.scored, b.scored, a.provider.hash, b.provider.hash))
  const scored = offers.map(o => o.scored)
  const max = request.constraints?.maxPriceMicroUsd ?? 0n
  const prices = offers.map((_, i) => clearingPrice(scored, i, request.pricingRule, max))
  return { request, ranked: offers, prices, declines, dropped }
}
