/**
 * Why a provider has the score it has in this node's view (`idlegrid reputation PEER`): the
 * evidence split by where the trust in each renter comes from.
 *
 *   direct       receipts by the viewer itself or a peer its operator trusts (seeds, weight 1)
 *   transitive   receipts by renters trusted through the job graph (the counted part)
 *   discounted   what receipts by renters with little or no trust would have added, and did not
 *
 * and which trust anchors counted: the seeds of the viewer's trust are itself, its operator's
 * peers (bootstrap, --trust) and the peers of the trust lists it adopted (anchors/adopt.ts);
 * each direct renter is named with the anchors that made it a seed, each list with its
 * operator key, sequence and expiry, and `why` says in sentences where the score comes from.
 */

import type { Reputation } from './reputation.js'
import type { TrustParams } from './trust.js'
import type { RefusedList, TrustListView } from './anchors/adopt.js'

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
  /** for a seed: what made it one ('self', 'operator', 'list <operator key>#<sequence>') */
  anchors?: string[]
}

/** The anchors of the viewer's trust, and which of them this provider's score rests on. */
export interface AnchorsExplain {
  /** the operator's trusted peers (bootstrap peers, --trust), not counting the node itself */
  operatorPeers: number
  /** the trust lists adopted, counting or expired */
  lists: TrustListView[]
  /** lists given that were not adopted, with the typed reason */
  refused: RefusedList[]
  /** per anchor: how many of this provider's renters it made seeds, with their jobs */
  counted: Array<{ anchor: string, renters: number, jobs: number }>
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
  anchors: AnchorsExplain
  /** why the score is what it is, in sentences */
  why: string[]
}

export interface ExplainViewer {
  id: string
  seeds: ReadonlySet<string>
  params: TrustParams
  /** what made a seed one (none: every seed is the viewer's own) */
  anchorsOf?: (peer: string) => string[]
  operatorPeers?: number
  lists?: TrustListView[]
  refused?: readonly RefusedList[]
}

function totals (): EvidenceTotals {
  return { renters: 0, jobs: 0, successes: 0, failures: 0 }
}

/** Splits `rep`'s counterparties into direct, transitive and discounted evidence. */
export function explainReputation (rep: Reputation, viewer: ExplainViewer): ReputationExplain {
  const out: ReputationExplain = {
    viewer: viewer.id,
    seeds: viewer.seeds.size,
    score: rep.score,
    evidenceScore: rep.evidenceScore,
    direct: totals(),
    transitive: totals(),
    discounted: totals(),
    renters: [],
    params: { damping: viewer.params.damping, fullTrust: viewer.params.fullTrust },
    anchors: {
      operatorPeers: viewer.operatorPeers ?? 0,
      lists: viewer.lists ?? [],
      refused: [...(viewer.refused ?? [])],
      counted: []
    },
    why: []
  }
  const counted = new Map<string, { anchor: string, renters: number, jobs: number }>()
  for (const c of rep.counterparties) {
    const seed = viewer.seeds.has(c.renter)
    const part: EvidencePart = seed ? 'direct' : c.weight > 0 ? 'transitive' : 'discounted'
    const anchors = seed ? (viewer.anchorsOf?.(c.renter) ?? ['self']) : undefined
    out.renters.push({
      renter: c.renter,
      jobs: c.jobs,
      trust: c.trust,
      weight: c.weight,
      part,
      ...(anchors != null ? { anchors } : {})
    })
    for (const anchor of anchors ?? []) {
      const row = counted.get(anchor) ?? { anchor, renters: 0, jobs: 0 }
      row.renters++
      row.jobs += c.jobs
      counted.set(anchor, row)
    }
    const totals = out[part]
    totals.renters++
    totals.jobs += c.jobs
    totals.successes += c.weight * c.cappedSuccesses
    totals.failures += c.weight * c.cappedFailures
    if (c.weight < 1) {
      // the part of a partly trusted renter that did not count is discounted too
      if (part !== 'discounted') { out.discounted.renters++; out.discounted.jobs += c.jobs }
      out.discounted.successes += (1 - c.weight) * c.cappedSuccesses
      out.discounted.failures += (1 - c.weight) * c.cappedFailures
    }
  }
  out.anchors.counted = [...counted.values()].sort((a, b) => a.anchor < b.anchor ? -1 : a.anchor > b.anchor ? 1 : 0)
  out.why = reasons(rep, out)
  return out
}

/** The score's story: which evidence counted, and what did not and why. */
function reasons (rep: Reputation, e: ReputationExplain): string[] {
  const why: string[] = []
  const lists = e.anchors.lists.filter(l => l.status === 'counting')
  why.push(`trust starts from ${e.seeds} seeds: this node, ${e.anchors.operatorPeers} operator peers (bootstrap, --trust)` +
    (lists.length === 0 ? ' and no trust list' : ` and ${lists.length} trust list${lists.length === 1 ? '' : 's'} (${lists.map(l => `"${l.name}" of ${l.operator} #${l.sequence}, ${l.peers} peers`).join('; ')})`))
  if (rep.slashed) why.push('slashed by a verified equivocation proof: the score is 0 whatever the evidence')
  if (rep.jobs === 0) {
    why.push('no paired job of this provider is held: the score is the prior (a newcomer\'s)' + (e.anchors.lists.length === 0 ? '; a fresh node holds no job whose renter it trusts until it has jobs of its own or adopts a trust list' : ''))
    return why
  }
  if (e.direct.renters > 0) why.push(`${e.direct.renters} renters are seeds (${e.anchors.counted.map(c => c.anchor).join(', ')}): their ${e.direct.jobs} jobs count fully`)
  if (e.transitive.renters > 0) why.push(`${e.transitive.renters} renters are trusted through the job graph: ${e.transitive.successes.toFixed(2)} successes and ${e.transitive.failures.toFixed(2)} failures counted`)
  const none = e.renters.filter(r => r.part === 'discounted')
  if (none.length > 0) why.push(`${none.length} renters (${none.reduce((s, r) => s + r.jobs, 0)} jobs) have no path of trust from any seed other than through this provider: they count 0`)
  if (Math.abs(e.score - e.evidenceScore) > 1e-9) why.push(`counted fully, every renter would give ${e.evidenceScore.toFixed(3)}; this node's trust gives ${e.score.toFixed(3)}`)
  return why
}
