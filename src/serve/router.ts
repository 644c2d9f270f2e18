/**
 * Which replica serves a request: power of two choices over the ready replicas, each scored
 * by its EWMA latency grown by its requests in flight, never one at its in-flight bound. Two random
 * candidates, the lower score wins: load spreads without herding on one "best" replica, and a
 * slow one gets little once it has been measured. A replica's first answers are not its
 * measure (they include the dial and the service's warm-up), a measure that has aged is taken
 * again, and one pick in EXPLORE_EVERY goes to the candidate the scores passed over: a replica
 * measured slow once would otherwise never be picked to show it is not.
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
  /** answers timed so far (the first WARM_UP_ANSWERS are not counted in the EWMA) */
  timed: number
  /** when the EWMA last took an answer, ms */
  measuredAt?: number
  inflight: number
  served: number
  failed: number
  since: number
  /**
   * aborted when the replica's provider went silent: requests waiting on it stop waiting (and
   * idempotent ones go elsewhere)
   */
  silenced: AbortController
}

/** Weight of a new sample in the EWMA. */
const ALPHA = 0.2
/** A new replica's first answers carry the dial and the service's warm-up: they are not its measure. */
const WARM_UP_ANSWERS = 2
/**
 * A measure older than this is stale: the replica gets the next request when it has none in flight,
 * and that answer restarts its EWMA.
 */
export const STALE_MS = 500
/**
 * Every this many picks between two candidates, the one the scores passed over is taken. Under
 * steady load a replica measured slow while cold has requests in flight elsewhere all the time,
 * so the stale rule reaches it only every STALE_MS; the demo's replacement replica, measured
 * during its first second, got none of the next 200 requests 2 times in 9 runs.
 */
const EXPLORE_EVERY = 32

export class ReplicaPool {
  private readonly replicas = new Map<string, Replica>()
  private picks = 0

  constructor (
    private readonly maxInflight: number,
    private readonly random: () => number = Math.random,
    private readonly now: () => number = Date.now
  ) {}

  add (r: Omit<Replica, 'inflight' | 'served' | 'failed' | 'since' | 'state' | 'timed' | 'silenced'> & { state?: ReplicaState }): Replica {
    const replica: Replica = { state: 'starting', ...r, inflight: 0, served: 0, failed: 0, timed: 0, since: this.now(), silenced: new AbortController() }
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
    const now = this.now()
    const [better, other] = score(a, now) <= score(b, now) ? [a, b] : [b, a]
    return ++this.picks % EXPLORE_EVERY === 0 ? other : better
  }

  /** A measured time to the response head. */
  observe (r: Replica, ms: number): void {
    const now = this.now()
    if (++r.timed <= WARM_UP_ANSWERS) return
    r.ewmaMs = r.ewmaMs == null || isStale(r, now) ? ms : (1 - ALPHA) * r.ewmaMs + ALPHA * ms
    r.measuredAt = now
  }
}

/**
 * What an answer (its `draining` flag) or a refusal (its code) says of a replica: one its
 * provider is stopping (preempted, cancelled, its lease over) gets no new request from then on,
 * whoever heard it, the gateway from a request or the deployment from a health probe.
 */
export function noteDraining (r: Replica, said: { draining?: boolean, wireCode?: string }): void {
  if (said.draining === true || said.wireCode === 'DRAINING' || said.wireCode === 'NO_LEASE') r.state = 'draining'
}

function isStale (r: Replica, now: number): boolean {
  return r.measuredAt != null && now - r.measuredAt > STALE_MS
}

/**
 * Requests a replica is taken to serve side by side before queueing: in-flight ones add to its
 * expected latency by this share.
 */
const PARALLELISM = 8

/**
 * Lower is better: the expected latency, EWMA × (1 + in flight / PARALLELISM). An unmeasured
 * replica gets one request at a time until it is measured; a stale one gets the next request
 * when it has none in flight, and its old measure otherwise.
 */
function score (r: Replica, now: number): number {
  if (r.ewmaMs == null) return r.inflight === 0 ? 0 : Number.MAX_SAFE_INTEGER
  if (r.inflight === 0 && isStale(r, now)) return 0
  return r.ewmaMs * (1 + r.inflight / PARALLELISM)
}
