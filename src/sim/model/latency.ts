/**
 * The network, as far as the market feels it: a round-trip time per region pair (a base
 * figure plus a seeded jitter). Bids reach the renter half a round trip after the job, an
 * award's answer one round trip after the award, and gold jobs rank bids by the round trip
 * (ranking.ts latencyMatters), as the renter's pings would measure it.
 */

import type { Rng } from './rng.js'

/** Base round trips in ms between the continents of region names ("eu-west" → "eu"). */
const CONTINENT_RTT: Record<string, number> = {
  'eu|eu': 25,
  'us|us': 45,
  'ap|ap': 70,
  'eu|us': 90,
  'ap|eu': 180,
  'ap|us': 150
}
const SAME_REGION_MS = 4
const UNKNOWN_PAIR_MS = 200

export interface LatencyModel {
  /** one measured round trip between two regions, ms */
  rttMs(from: string, to: string): number
}

// the few region pairs of a scenario, asked once per bid: answers kept per pair
const known = new Map<string, Map<string, number>>()

export function baseRttMs (from: string, to: string): number {
  if (from === to) return SAME_REGION_MS
  let row = known.get(from)
  if (row == null) known.set(from, row = new Map())
  let rtt = row.get(to)
  if (rtt == null) row.set(to, rtt = continentRttMs(from, to))
  return rtt
}

function continentRttMs (from: string, to: string): number {
  const a = from.split('-')[0] ?? from
  const b = to.split('-')[0] ?? to
  return CONTINENT_RTT[a < b ? `${a}|${b}` : `${b}|${a}`] ?? UNKNOWN_PAIR_MS
}

/** Base round trip ± `jitter` (a share, e.g. 0.2), drawn from `rng`. */
export function latencyModel (rng: Rng, jitter = 0.2): LatencyModel {
  return {
    rttMs: (from, to) => Math.max(1, Math.round(baseRttMs(from, to) * (1 + jitter * (2 * rng.next() - 1))))
  }
}
