/**
 * Which providers a job's auction asks: the renter's discovery in the simulation. Providers are
 * filed in two capacity indexes (capacity-index.ts), one of those with a free slot and one of
 * those with displaceable (bronze) slots, while their availability window is open; a job draws
 * its candidates from the keys of its model list and residency, free ones first.
 */

import { CapacityIndex, indexKeys, jobKeys } from './capacity-index.js'
import { residencyOfRegion, type SimJob } from '../model/population.js'
import type { SimProvider } from '../model/provider.js'
import type { Rng } from '../model/rng.js'
import type { Tier } from '../../capability/index.js'

/** a task of several GPUs draws this many times the candidates, then keeps those with room */
export const MULTI_GPU_DRAW = 4

export interface PickOptions {
  /** candidates wanted */
  count: number
  rng: Rng
  /** providers not to pick, by index */
  skip?: Set<number>
}

export class Candidates {
  private readonly free = new CapacityIndex()
  private readonly displaceable = new CapacityIndex()
  /** per capacity-index key, the most GPUs one provider filed under it has */
  private readonly servable = new Map<string, number>()
  private readonly keys = new Map<readonly string[], Map<string, string[]>>()

  constructor (private readonly providers: readonly SimProvider[]) {}

  /** Files a provider under its model and residency keys (once, before the run). */
  file (p: SimProvider): void {
    p.indexKeys = indexKeys(p.modelKey, residencyOfRegion(p.region.name))
    for (const k of p.indexKeys) this.servable.set(k, Math.max(this.servable.get(k) ?? 0, p.gpus))
  }

  /** A provider's slots changed, or its window opened or closed (`open`). */
  update (p: SimProvider, open: boolean): void {
    this.free.update(p.index, p.indexKeys, open && p.scheduler.freeCount() > 0)
    this.displaceable.update(p.index, p.indexKeys, open && p.scheduler.preemptibleCount() > 0)
  }

  /** The most GPUs one provider that could serve the job's models and residency has; undefined when none could. */
  mostGpus (job: SimJob): number | undefined {
    let most: number | undefined
    for (const k of this.keysOf(job)) {
      const gpus = this.servable.get(k)
      if (gpus != null) most = Math.max(most ?? 0, gpus)
    }
    return most
  }

  /**
   * Candidates for a job: a task of several GPUs is asked of providers with room for all of them
   * (drawn from more): the request carries the GPU count (JobRequest.gpus) and each provider's
   * bid engine decides whether N slots fit, as on the network. Gold and silver jobs top up with
   * providers whose bronze work they would displace. `skip` gains those picked.
   */
  pick (job: SimJob, opts: PickOptions): number[] {
    const { count: k, rng } = opts
    let skip = opts.skip
    const keys = this.keysOf(job)
    const gpus = job.task.gpus
    const draw = gpus > 1 ? k * MULTI_GPU_DRAW : k
    const room = (list: number[]): number[] =>
      gpus > 1 ? list.filter(i => this.hasRoom(i, gpus, job.tier)).slice(0, k) : list
    let picked = room(this.free.sample(keys, draw, rng, skip))
    if (job.tier !== 'bronze' && picked.length < k) {
      skip ??= new Set()
      for (const p of picked) skip.add(p)
      picked = picked.concat(
        room(this.displaceable.sample(keys, gpus > 1 ? draw : k - picked.length, rng, skip)).slice(
          0,
          k - picked.length
        )
      )
    }
    return picked
  }

  /**
   * Whether provider `i` could take `gpus` slots now: free ones, or for gold/silver also bronze
   * ones to displace (the scheduler's own rule).
   */
  private hasRoom (i: number, gpus: number, tier: Tier): boolean {
    return !('refused' in (this.providers[i] as SimProvider).scheduler.canAccept({ tier, gpus }))
  }

  /** A job's capacity-index keys, made once per model list and residency (jobs share their model lists). */
  private keysOf (job: SimJob): string[] {
    let byResidency = this.keys.get(job.models)
    if (byResidency == null) this.keys.set(job.models, byResidency = new Map())
    let keys = byResidency.get(job.residency)
    if (keys == null) byResidency.set(job.residency, keys = jobKeys(job.models, job.residency))
    return keys
  }
}
