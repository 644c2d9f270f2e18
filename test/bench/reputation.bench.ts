/**
 * Reputation benchmark (issue 12, item 6): 10,000 providers, 5,000 renters, 200,000 paired
 * jobs, as one node (a renter with three operator-trusted peers) sees them.
 *
 * - full: the trust graph from the facts (trust.ts), personalised PageRank from the seeds, and
 *   every provider's trust-weighted job score (per-renter cap, Beta prior: jobScoreOf).
 * - update: one new paired job: its provider's evidence and the graph edge grow, and that
 *   provider's score is recomputed against the last trust vector (the node recomputes trust in
 *   full at most every 30 s, reputation-view.ts), per entry.
 *
 * Facts are built directly (signing 400,000 envelopes would measure signing, not reputation).
 * Goals: full ≤ 2 s, update ≤ 1 ms on the project's 2 cores.
 */
import { DEFAULT_REPUTATION, jobScoreOf } from '../../src/ledger/reputation/reputation.js'
import { TrustGraph, type TrustScores } from '../../src/ledger/reputation/trust.js'

const PROVIDERS = 10_000
const RENTERS = 5_000
const JOBS = 200_000
const UPDATES = 10_000
const NOW = 1_800_000_000_000
const DAY = 24 * 3600_000

interface Fact { renter: string, provider: string, time: number, ok: boolean }

/** mulberry32: the same synthetic market on every run */
function random (seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function facts (n: number, rand: () => number): Fact[] {
  const out: Fact[] = []
  for (let i = 0; i < n; i++) {
    // renters favour a few providers each (a skewed market), 95 % of jobs go well
    const renter = Math.floor(rand() * RENTERS)
    const provider = rand() < 0.5 ? (renter * 7 + Math.floor(rand() * 8)) % PROVIDERS : Math.floor(rand() * PROVIDERS)
    out.push({ renter: `r${renter}`, provider: `p${provider}`, time: NOW - Math.floor(rand() * 30 * DAY), ok: rand() < 0.95 })
  }
  return out
}

const decay = (time: number, now: number): number =>
  Math.pow(0.5, Math.max(0, now - time) / DEFAULT_REPUTATION.halfLifeMs)

/** Per provider, per renter: decayed successes and failures. */
type Evidence = Map<string, Map<string, { s: number, f: number }>>

function addEvidence (evidence: Evidence, fact: Fact, now: number): void {
  let row = evidence.get(fact.provider)
  if (row == null) evidence.set(fact.provider, row = new Map())
  let c = row.get(fact.renter)
  if (c == null) row.set(fact.renter, c = { s: 0, f: 0 })
  if (fact.ok) c.s += decay(fact.time, now)
  else c.f += decay(fact.time, now)
}

/** The same sums as computeReputation: capped per renter, weighted by trust besides the provider. */
function score (evidence: Evidence, provider: string, trust: TrustScores): number {
  const p = DEFAULT_REPUTATION
  let s = 0
  let f = 0
  for (const [renter, c] of [...(evidence.get(provider) ?? new Map<string, { s: number, f: number }>())].sort(
    (a, b) => (a[0] < b[0] ? -1 : 1)
  )) {
    const w = trust.weight(renter, provider)
    s += w * Math.min(c.s, p.counterpartyCap)
    f += w * Math.min(c.f, p.counterpartyCap * p.breakPenalty)
  }
  return jobScoreOf(s, f, p)
}

function full (
  all: Fact[],
  seeds: string[]
): {
    evidence: Evidence
    graph: TrustGraph
    trust: TrustScores
    scores: Map<string, number>
    ms: number
    trustMs: number
  } {
  const started = performance.now()
  const graph = new TrustGraph()
  const evidence: Evidence = new Map()
  for (const fact of all) {
    addEvidence(evidence, fact, NOW)
    if (fact.ok) graph.add({ renter: fact.renter, provider: fact.provider, okWeight: decay(fact.time, NOW) })
  }
  const t0 = performance.now()
  const trust = graph.compute(seeds)
  const trustMs = performance.now() - t0
  const scores = new Map<string, number>()
  for (const provider of evidence.keys()) scores.set(provider, score(evidence, provider, trust))
  return { evidence, graph, trust, scores, ms: performance.now() - started, trustMs }
}

export default async function (): Promise<Record<string, unknown>> {
  const rand = random(12)
  const all = facts(JOBS, rand)
  const seeds = ['r0', 'r1', 'r2', 'r3']
  const runs = [full(all, seeds), full(all, seeds), full(all, seeds)]
  const times = runs.map(r => r.ms).sort((a, b) => a - b)
  const { evidence, graph, trust, scores } = runs[0]

  // incremental: one new paired job at a time, trust as last computed
  const extra = facts(UPDATES, random(99))
  const started = performance.now()
  for (const fact of extra) {
    addEvidence(evidence, fact, NOW)
    if (fact.ok) graph.add({ renter: fact.renter, provider: fact.provider, okWeight: decay(fact.time, NOW) })
    scores.set(fact.provider, score(evidence, fact.provider, trust))
  }
  const updateMs = (performance.now() - started) / UPDATES

  const values = [...scores.values()]
  const counted = [...Array(RENTERS).keys()].filter(i => trust.weight(`r${i}`) === 1).length
  return {
    providers: evidence.size,
    renters: RENTERS,
    jobs: JOBS,
    graphNodes: graph.nodes,
    graphEdges: graph.edges,
    pageRankIterations: trust.iterations,
    fullMedianMs: Math.round(times[1]),
    fullRunsMs: times.map(t => Math.round(t)),
    pageRankMs: Math.round(runs[0].trustMs),
    updatePerEntryMs: Number(updateMs.toFixed(4)),
    rentersCountingFully: counted,
    meanScore: Number((values.reduce((a, b) => a + b, 0) / values.length).toFixed(4)),
    goalsMet: { fullUnder2s: times[1] <= 2000, updateUnder1ms: updateMs <= 1 }
  }
}
