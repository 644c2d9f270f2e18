/**
 * Why a provider has the score it has in this node's view (`idlegrid reputation PEER`): the
 * evidence split by where the trust in each renter comes from.
 *
 *   direct       receipts by the viewer itself or a peer its operator trusts (seeds, weight 1)
 *   transitive   receipts by renters trusted through the job graph (the counted part)
 *   discounted   what receipts by renters with little or no trust would have added, and did not
 */

import type { Reputation } from './reputation.js'
import type { TrustParams } from './trust.js'

export type EvidencePart = 'direct' | 'transitive' | 'discounted'

export interface EvidenceTotals {
  renters: number
  jobs: number
  /** decayed, capped successes and failures (counted ones, or for `discounted` the uncounted ones) */
  successes: number
  failures: number
}

export interface RenterExplain {
  renter: string
  jobs: number
  /** the viewer's trust share in the renter */
  trust: number
  /** how much of its capped counts entered the score */
  weight: number
  part: EvidencePart
}

export interface ReputationExplain {
  viewer: string
  seeds: number
  /** the score as this node sees it, and with every renter counted fully */
  score: number
  evidenceScore: number
  direct: EvidenceTotals
  transitive: EvidenceTotals
  discounted: EvidenceTotals
  renters: RenterExplain[]
  params: Pick<TrustParams, 'damping' | 'fullTrust'>
}

function totals (): EvidenceTotals {
  return { renters: 0, jobs: 0, successes: 0, failures: 0 }
}

/** Splits `rep`'s counterparties into direct, transitive and discounted evidence. */
export function explainReputation (rep: Reputation, viewer: { id: string, seeds: ReadonlySet<string>, params: TrustParams }): ReputationExplain {
  const out: ReputationExplain = {
    viewer: viewer.id,
    seeds: viewer.seeds.size,
    score: rep.score,
    evidenceScore: rep.evidenceScore,
    direct: totals(),
    transitive: totals(),
    discounted: totals(),
    renters: [],
    params: { damping: viewer.params.damping, fullTrust: viewer.params.fullTrust }
  }
  for (const c of rep.counterparties) {
    const seed = viewer.seeds.has(c.renter)
    const part: EvidencePart = seed ? 'direct' : c.weight > 0 ? 'transitive' : 'discounted'
    out.renters.push({ renter: c.renter, jobs: c.jobs, trust: c.trust, weight: c.weight, part })
    const counted = out[part]
    counted.renters++
    counted.jobs += c.jobs
    counted.successes += c.weight * c.cappedSuccesses
    counted.failures += c.weight * c.cappedFailures
    if (c.weight < 1) {
      // the part of a partly trusted renter that did not count is discounted too
      if (part !== 'discounted') { out.discounted.renters++; out.discounted.jobs += c.jobs }
      out.discounted.successes += (1 - c.weight) * c.cappedSuccesses
      out.discounted.failures += (1 - c.weight) * c.cappedFailures
    }
  }
  return out
}
