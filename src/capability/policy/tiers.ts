/**
 * The one SLA tier type (gold = reserved, not preemptible; silver = on demand; bronze =
 * interruptible) and its mapping to and from the two wire enums that carry it:
 * `JobRequest.Tier` (protocols/market.proto) and `CapabilityRecord.Tier`
 * (protocols/capability.proto). Nothing else maps tiers.
 */

import { CapabilityRecord } from '../../../protocols/capability.js'
import { JobRequest } from '../../../protocols/market.js'

export const TIERS = ['gold', 'silver', 'bronze'] as const
export type Tier = typeof TIERS[number]

const JOB_TIER: Record<Tier, JobRequest.Tier> = {
  gold: JobRequest.Tier.GOLD,
  silver: JobRequest.Tier.SILVER,
  bronze: JobRequest.Tier.BRONZE
}

const RECORD_TIER: Record<Tier, CapabilityRecord.Tier> = {
  gold: CapabilityRecord.Tier.GOLD,
  silver: CapabilityRecord.Tier.SILVER,
  bronze: CapabilityRecord.Tier.BRONZE
}

function fromWire<W> (table: Record<Tier, W>, wire: W): Tier | undefined {
  return TIERS.find(t => table[t] === wire)
}

/** A job request's wire tier. */
export function jobTierToWire (tier: Tier): JobRequest.Tier {
  return JOB_TIER[tier]
}

/** A job request's tier by name; undefined for TIER_UNSPECIFIED or an unknown value. */
export function jobTierFromWire (tier: JobRequest.Tier): Tier | undefined {
  return fromWire(JOB_TIER, tier)
}

/** A capability record's wire tier. */
export function recordTierToWire (tier: Tier): CapabilityRecord.Tier {
  return RECORD_TIER[tier]
}

/** A capability record's tier by name; undefined for TIER_UNSPECIFIED or an unknown value. */
export function recordTierFromWire (tier: CapabilityRecord.Tier): Tier | undefined {
  return fromWire(RECORD_TIER, tier)
}
