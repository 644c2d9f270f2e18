/**
 * Transitive trust: how much this node (the viewer) believes each key's receipts, in the
 * spirit of EigenTrust and MeritRank (issue 12, "Sybil-resistant reputation").
 *
 * The graph: every paired job (a provider's attestation and its renter's receipt, both
 * signed) that went well makes two edges, renter → provider ("it served me") and provider →
 * renter ("it really rented from me"), each weighted by the decayed count of such jobs and
 * capped per pair (edgeCap). One key alone cannot draw an edge: both ends signed.
 *
 * The trust vector is a personalised PageRank from the viewer's seeds (itself and the peers
 * its operator trusts, `trustedPeers`):
 *
 *   t = (1 − d) · s + d · Σ_u t_u · w(u→v) / W(u)      (mass of keys with no edges returns to s)
 *
 * d is the decay per hop. t sums to 1, so trust is conserved: a set of keys reached only
 * through an "attack edge" holds at most what flows over that edge, times 1 / (1 − d) for a
 * closed ring (2 with d = 0.5). Keys with no path from a seed hold exactly 0.
 *
 * A renter's receipts for provider P count with weight(r, P) = min(1, t_r¬P / fullTrust)
 * (seeds: 1), where t_r¬P = t_r − d · t_P · share(P → r) leaves out the trust r got straight
 * from P itself: a provider's own attestations cannot make its renters count for it. Σ weight
 * over any set of keys is at most its trust mass / fullTrust, so a ring can buy at most that
 * many fully counted renters, whatever its size.
 *
 * The core takes facts (JobFact), not ledger entries, so benchmarks can feed it directly.
 */

export interface TrustParams {
  /** d: the share of trust passed on at each hop (the rest returns to the seeds) */
  damping: number
  /** the trust share at which a key's receipts count fully */
  fullTrust: number
  /** most decayed jobs one edge counts for, so one busy pair does not take all of a key's trust */
  edgeCap: number
  /** power iterations at most, and the L1 change that ends them earlier */
  maxIterations: number
  tolerance: number
}

export const DEFAULT_TRUST: TrustParams = {
  damping: 0.5,
  fullTrust: 0.001,
  edgeCap: 10,
  maxIterations: 50,
  tolerance: 1e-10
}

/** One paired job, as trust sees it: who ran it for whom, and its decayed weight if it went well. */
export interface JobFact {
  renter: string
  provider: string
  /** decayed weight of the job when both sides said it went well, else 0 */
  okWeight: number
}

/**
 * The job graph: keys and edges, aggregated per (from, to) pair. Adding facts in the same
 * order gives the same graph, and `compute` works in sorted key order, so the same facts and
 * seeds give the same trust on every node.
 */
export class TrustGraph {
  private readonly index = new Map<string, number>()
  private readonly ids: string[] = []
  /** out-edges per node: target index → summed weight */
  private readonly out: Array<Map<number, number>> = []
  private edgeCount = 0

  get nodes (): number {
    return this.ids.length
  }

  get edges (): number {
    return this.edgeCount
  }

  /** Adds one paired job: both edges grow by its weight. */
  add (fact: JobFact): void {
    if (!(fact.okWeight > 0) || fact.renter === fact.provider) return
    const r = this.node(fact.renter)
    const p = this.node(fact.provider)
    this.grow(r, p, fact.okWeight)
    this.grow(p, r, fact.okWeight)
  }

  /** Personalised PageRank from `seeds` (unknown seeds are fine: they hold their restart share). */
  compute (seeds: Iterable<string>, params: TrustParams = DEFAULT_TRUST): TrustScores {
    const seedIds = [...new Set(seeds)].sort()
    for (const id of seedIds) this.node(id)
    // a sorted order so that sums run the same way on every node holding the same facts
    const order = [...this.ids.keys()].sort((a, b) => this.ids[a] < this.ids[b] ? -1 : 1)
    const rank = new Int32Array(this.ids.length)
    order.forEach((node, i) => { rank[node] = i })
    const n = order.length
    // compressed rows: for each node (in sorted order) its targets and their shares of its out-weight
    const start = new Int32Array(n + 1)
    const targets: number[] = []
    const shares: number[] = []
    for (let i = 0; i < n; i++) {
      const edges = [...(this.out[order[i]] ?? new Map<number, number>()).entries()]
        .map(([to, w]): [number, number] => [rank[to], Math.min(w, params.edgeCap)])
        .sort((a, b) => a[0] - b[0])
      let total = 0
      for (const [, w] of edges) total += w
      for (const [to, w] of edges) { targets.push(to); shares.push(w / total) }
      start[i + 1] = targets.length
    }
    const restart = new Float64Array(n)
    for (const id of seedIds) restart[rank[this.index.get(id) as number]] = 1 / seedIds.length
    let t = Float64Array.from(restart)
    let next = new Float64Array(n)
    const d = params.damping
    let iterations = 0
    for (; iterations < params.maxIterations; iterations++) {
      next.fill(0)
      let dangling = 0
      for (let i = 0; i < n; i++) {
        const mass = t[i]
        if (mass === 0) continue
        if (start[i] === start[i + 1]) { dangling += mass; continue }
        for (let e = start[i]; e < start[i + 1]; e++) next[targets[e]] += d * mass * shares[e]
      }
      // what is not passed on (1 − d, and all of a dead end's) returns to the seeds
      const back = (1 - d) + d * dangling
      let change = 0
      for (let i = 0; i < n; i++) {
        next[i] += back * restart[i]
        change += Math.abs(next[i] - t[i])
      }
      ;[t, next] = [next, t]
      if (change < params.tolerance) { iterations++; break }
    }
    const values = new Map<string, number>()
    for (let i = 0; i < n; i++) if (t[i] > 0) values.set(this.ids[order[i]], t[i])
    // what each key passed straight to each of its neighbours, for t_r¬P
    const passed = (from: string, to: string): number => {
      const f = this.index.get(from)
      const r = this.index.get(to)
      if (f == null || r == null) return 0
      const i = rank[f]
      for (let e = start[i]; e < start[i + 1]; e++) if (targets[e] === rank[r]) return d * t[i] * shares[e]
      return 0
    }
    return new TrustScores({ values, seeds: new Set(seedIds), fullTrust: params.fullTrust, iterations, passed })
  }

  private node (id: string): number {
    let i = this.index.get(id)
    if (i == null) {
      i = this.ids.length
      this.index.set(id, i)
      this.ids.push(id)
      this.out.push(new Map())
    }
    return i
  }

  private grow (from: number, to: number, w: number): void {
    const row = this.out[from]
    const held = row.get(to)
    if (held == null) this.edgeCount++
    row.set(to, (held ?? 0) + w)
  }
}

/** Trust left after subtracting a neighbour's share below this is rounding error (power iteration stops at 1e-10). */
const RESIDUAL = 1e-9

export interface TrustScoresInit {
  values: ReadonlyMap<string, number>
  seeds: ReadonlySet<string>
  fullTrust: number
  /** power iterations the computation took */
  iterations?: number
  /** the trust `from` passed to `to` */
  passed?: (from: string, to: string) => number
}

/** The viewer's trust in each key, and the weight its receipts get. */
export class TrustScores {
  readonly iterations: number
  private readonly values: ReadonlyMap<string, number>
  private readonly seeds: ReadonlySet<string>
  private readonly fullTrust: number
  private readonly passed: (from: string, to: string) => number

  constructor (init: TrustScoresInit) {
    this.values = init.values
    this.seeds = init.seeds
    this.fullTrust = init.fullTrust
    this.iterations = init.iterations ?? 0
    this.passed = init.passed ?? (() => 0)
  }

  /** The key's share of the viewer's trust (0 with no path from a seed). */
  trust (peerId: string): number {
    return this.values.get(peerId) ?? 0
  }

  isSeed (peerId: string): boolean {
    return this.seeds.has(peerId)
  }

  /** The key's trust without what `provider` passed to it directly (t_r¬P). */
  trustBesides (peerId: string, provider: string): number {
    const rest = this.trust(peerId) - this.passed(provider, peerId)
    // below the iteration's own precision, what is left is rounding, not trust
    return rest > RESIDUAL ? rest : 0
  }

  /**
   * How much of the key's receipts for `provider` count, in [0, 1]: 1 for seeds, else
   * min(1, t¬provider / fullTrust); without a provider, min(1, t / fullTrust).
   */
  weight (peerId: string, provider?: string): number {
    if (this.seeds.has(peerId)) return 1
    const t = provider == null ? this.trust(peerId) : this.trustBesides(peerId, provider)
    return Math.min(1, t / this.fullTrust)
  }

  /** Keys holding any trust. */
  get size (): number {
    return this.values.size
  }
}
