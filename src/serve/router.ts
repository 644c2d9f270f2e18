/**
 * Which replica serves a request: power of two choices over the ready replicas, each scored
 * by its EWMA latency grown by its requests in flight, never one at its in-flight bound. Two random
 * candidates, the lower score wins: load spreads without herding on one "best" replica, and a
 * slow one gets little once it has been measured.
 */
import type { PeerId } from '@libp2p/interface'

export type ReplicaState = 'starting' | 'ready' | 'draining'

export interface Replica {
  /** lease id, hex */
  id: string
  leaseId: Uint8Array
  provider: PeerId
  region: string
  state: ReplicaState
  /** EWMA of the time to the response head, ms (undefined until measured) */
  ewmaMs?: number
  inflight: number
  served: number
  failed: number
  since: number
}

/** Weight of a new sample in the EWMA. */
const ALPHA = 0.2

export class ReplicaPool {
  private readonly replicas = new Map<string, Replica>()

  constructor (private readonly maxInflight: number, private readonly random: () => number = Math.random) {}

  add (r: Omit<Replica, 'inflight' | 'served' | 'failed' | 'since' | 'state'> & { state?: ReplicaState }): Replica {
    const replica: Replica = { state: 'starting', ...r, inflight: 0, served: 0, failed: 0, since: Date.now() }
    this.replicas.set(replica.id, replica)
    return replica
  }

  remove (id: string): void {
    this.replicas.delete(id)
  }

  get (id: string): Replica | undefined {
    return this.replicas.get(id)
  }

  list (): Replica[] {
    return [...this.replicas.values()]
  }

  /** Ready replicas below their in-flight bound, not among `exclude`. */
  candidates (exclude: ReadonlySet<string> = new Set()): Replica[] {
    return this.list().filter(r => r.state === 'ready' && r.inflight < this.maxInflight && !exclude.has(r.id))
  }

  /** The replica for the next request, or undefined when none can take it. */
  pick (exclude?: ReadonlySet<string>): Replica | undefined {
    const c = this.candidates(exclude)
    if (c.length <= 1) return c[0]
    const i = Math.floor(this.random() * c.length)
    let j = Math.floor(this.random() * (c.length - 1))
    if (j >= i) j++
    const a = c[i] as Replica
    const b = c[j] as Replica
    return score(a) <= score(b) ? a : b
  }

  /** A measured time to the response head. */
  observe (r: Replica, ms: number): void {
    r.ewmaMs = r.ewmaMs == null ? ms : (1 - ALPHA) * r.ewmaMs + ALPHA * ms
  }
}

/** Requests a replica is taken to serve side by side before queueing: in-flight ones add to its expected latency by this share. */
const PARALLELISM = 8

/**
 * Lower is better: the expected latency, EWMA × (1 + in flight / PARALLELISM). An unmeasured
 * replica gets one request at a time until its first answer measures it.
 */
function score (r: Replica): number {
  if (r.ewmaMs == null) return r.inflight === 0 ? 0 : Number.MAX_SAFE_INTEGER
  return r.ewmaMs * (1 + r.inflight / PARALLELISM)
}
