/**
 * The provider's bid engine: decides, for each job request, whether to bid and at what
 * price (matching + dynamic pricing), builds the bid, and keeps the provider's market
 * figures (bids, declines by reason, wins, fill rate, expected earnings). No networking
 * here: the provider service feeds it and publishes what it returns.
 */

import { MAX_LIFETIME_MS } from '../../../protocols/codec.js'
import { toHex } from '../../common/index.js'
import { matchJob, type CapacitySnapshot } from './bid-declines.js'
import { DEFAULT_PRICING, clearingSample, quotePrice, timeClassAt, type PricingParams, type TimeClass } from './pricing.js'
import { DeclineReason, MAX_BID_ADDRS, MAX_BID_ADDR_BYTES, declineReasonName, jobGpuCount, microToUsd, tierOf, type Bid, type JobRequest } from '../shared/messages.js'
import type { CapacitySource, ProviderProfile, Tier } from '../../capability/index.js'

function capacitySnapshot (source: CapacitySource, renter?: string): CapacitySnapshot {
  return {
    freeSlots: source.freeSlots(renter),
    preemptibleSlots: source.preemptibleSlots(),
    totalSlots: source.totalSlots(),
    thermalOk: source.thermalOk(),
    powerOk: source.powerOk?.() ?? true
  }
}

export type BidDecision =
  | {
    bid: true
    priceMicroUsd: bigint
    gpuModel: string
    vramMib: number
    simulated: boolean
    cachedDatasets: number
    cachedBytes: number
    timeClass: TimeClass
    utilization: number
  }
  | { bid: false, reason: DeclineReason, detail: string }

export interface BidEngineOptions {
  /** the provider's current profile; undefined while it is not known yet */
  profile: () => ProviderProfile | undefined
  /** the provider's GPU slots now (exec's capacity service) */
  capacity: CapacitySource
  pricing?: PricingParams
  /** sequence of the capability record bids are made under (0 when unknown) */
  capabilitySeq?: () => bigint
  /** renters whose latest verified clearing price is remembered for the pricing nudge (default 20) */
  clearingMemory?: number
}

export interface BidEngineStats {
  jobsSeen: number
  bids: number
  declines: Record<string, number>
  wins: number
  /** wins / bids (0 when no bids) */
  fillRate: number
  /** sum over accepted awards of clearing price × estimated GPU-hours, USD */
  expectedEarningsUsd: number
  /** clearing prices of recent verified awards, one per renter, USD per GPU-hour, newest last */
  recentClearingUsd: number[]
}

export class BidEngine {
  private readonly opts: BidEngineOptions
  private readonly capacity: CapacitySource
  private readonly pricing: PricingParams
  /** the latest verified clearing price per renter (one sample each: a renter's own awards weigh once), oldest first */
  private readonly clearing = new Map<string, { priceMicroUsd: number, tier: Tier }>()
  /**
   * the usable samples of `clearing`, tier-normalised and sorted, kept as they come (decide reads
   * them for every job)
   */
  private readonly clearingSorted: number[] = []
  private readonly counts = { jobsSeen: 0, bids: 0, wins: 0, earningsMicroUsdHours: 0 }
  private readonly declines: Record<string, number> = {}

  constructor (opts: BidEngineOptions) {
    this.opts = opts
    this.capacity = opts.capacity
    this.pricing = opts.pricing ?? DEFAULT_PRICING
  }

  /** Whether to bid on `job` now, and at what price; pure apart from reading the capacity source. */
  decide (job: JobRequest, now = Date.now()): BidDecision {
    const profile = this.opts.profile()
    if (profile == null) return { bid: false, reason: DeclineReason.OTHER, detail: 'provider profile not ready' }
    const capacity = capacitySnapshot(this.capacity, toHex(job.renter))
    const match = matchJob(profile, job, capacity, now)
    if (!match.ok) return { bid: false, reason: match.reason, detail: match.detail }
    const utilization = capacity.totalSlots > 0 ? 1 - Math.max(0, capacity.freeSlots) / capacity.totalSlots : 1
    const timeClass = timeClassAt(profile.policy.availability.timeZone, now, this.pricing)
    let price = BigInt(quotePrice({
      floorMicroUsd: profile.policy.priceFloorMicroUsd,
      tier: tierOf(job),
      utilization,
      timeClass,
      clearingSorted: this.clearingSorted
    }, this.pricing))
    // a dynamic price above the renter's limit still wins nothing: offer the limit (the floor fits, matchJob checked)
    const max = job.constraints?.maxPriceMicroUsd ?? 0n
    if (max > 0n && price > max) price = max
    // what the input cache holds of the job's datasets for this renter counts beside the policy's list
    const held =
      job.datasetDigests.length > 0 ? this.capacity.heldInputs?.(toHex(job.renter), job.datasetDigests) : undefined
    const cachedDatasets = Math.min(job.datasetDigests.length, Math.max(match.cachedDatasets, held?.count ?? 0))
    return {
      bid: true,
      priceMicroUsd: price,
      gpuModel: match.gpu.modelKey,
      vramMib: match.gpu.vramMib,
      simulated: match.gpu.simulated,
      cachedDatasets,
      cachedBytes: held?.bytes ?? 0,
      timeClass,
      utilization
    }
  }

  /** The Bid for a positive decision, expiring with the job request (bounded lifetime). */
  buildBid (
    job: JobRequest, decision: Extract<BidDecision, { bid: true }>,
    { provider, now = Date.now(), addrs = [] }: { provider: Uint8Array, now?: number, addrs?: Uint8Array[] }
  ): Bid {
    const profile = this.opts.profile()
    const expiresAt = Math.min(Number(job.expiresAt), now + MAX_LIFETIME_MS.bid)
    return {
      jobId: job.jobId,
      provider,
      priceMicroUsd: decision.priceMicroUsd,
      gpuModel: decision.gpuModel,
      vramMib: decision.vramMib,
      region: profile?.policy.region ?? '',
      residency: profile?.policy.residency ?? '',
      createdAt: BigInt(now),
      expiresAt: BigInt(expiresAt),
      capabilitySeq: this.opts.capabilitySeq?.() ?? 0n,
      jobNonce: job.nonce,
      simulated: decision.simulated,
      cachedDatasets: decision.cachedDatasets,
      ...(decision.cachedBytes > 0 ? { cachedBytes: BigInt(decision.cachedBytes) } : {}),
      addrs: addrs.filter(a => a.length <= MAX_BID_ADDR_BYTES).slice(0, MAX_BID_ADDRS)
    }
  }

  /** Counts a decision (call once per job request handled). */
  record (decision: BidDecision): void {
    this.counts.jobsSeen++
    if (decision.bid) this.counts.bids++
    else {
      const key = declineReasonName(decision.reason)
      this.declines[key] = (this.declines[key] ?? 0) + 1
    }
  }

  /**
   * Remembers a verified clearing price (clearing-check.ts) for the pricing nudge: one sample per
   * renter, its newest replacing the older; the oldest renter is forgotten past `clearingMemory`.
   */
  observeClearing (renter: string, priceMicroUsd: bigint, tier: Tier): void {
    this.forget(renter)
    const sample = { priceMicroUsd: Number(priceMicroUsd), tier }
    this.clearing.set(renter, sample)
    const v = clearingSample(sample.priceMicroUsd, tier, this.pricing)
    if (!Number.isNaN(v)) {
      const sorted = this.clearingSorted
      let j = sorted.length
      while (j > 0 && (sorted[j - 1] as number) > v) { sorted[j] = sorted[j - 1] as number; j-- }
      sorted[j] = v
    }
    const keep = Math.max(0, this.opts.clearingMemory ?? 20)
    while (this.clearing.size > keep) this.forget(this.clearing.keys().next().value as string)
  }

  /** drops a renter's sample from `clearing` and `clearingSorted` */
  private forget (renter: string): void {
    const old = this.clearing.get(renter)
    if (old == null) return
    this.clearing.delete(renter)
    const v = clearingSample(old.priceMicroUsd, old.tier, this.pricing)
    if (Number.isNaN(v)) return
    // in place (splice would make an array of the removed sample)
    const sorted = this.clearingSorted
    for (let i = sorted.indexOf(v); i >= 0 && i < sorted.length - 1; i++) sorted[i] = sorted[i + 1] as number
    sorted.pop()
  }

  /** Counts a won (accepted) award and its expected earnings: the price per GPU-hour × the job's GPUs × its hours. */
  recordWin (priceMicroUsd: bigint, job: JobRequest): void {
    this.counts.wins++
    this.counts.earningsMicroUsdHours +=
      (Number(priceMicroUsd) * jobGpuCount(job) * Number(job.estDurationMs)) / 3_600_000
  }

  stats (): BidEngineStats {
    return {
      jobsSeen: this.counts.jobsSeen,
      bids: this.counts.bids,
      declines: { ...this.declines },
      wins: this.counts.wins,
      fillRate: this.counts.bids === 0 ? 0 : this.counts.wins / this.counts.bids,
      expectedEarningsUsd: microToUsd(Math.round(this.counts.earningsMicroUsdHours)),
      recentClearingUsd: [...this.clearing.values()].map(c => microToUsd(c.priceMicroUsd))
    }
  }
}
