/**
 * One simulated provider (a trace node): the node's own provider profile and policy
 * (parsePolicy, providerProfile), slot scheduler (exec/provider/scheduler.ts: tiers, preemption) and
 * bid engine (market/provider/bid-engine.ts: matching, dynamic pricing). Only its identity is fake: a
 * short id string instead of a peer id, and a 4-byte id instead of a bid hash for tie breaks.
 */

import { parsePolicy, providerProfile, type CapacitySource, type DetectedGpu, type ProviderProfile } from '../../capability/index.js'
import { BidEngine } from '../../market/index.js'
import { SlotScheduler } from '../../exec/index.js'
import type { RegionSpec } from '../scenario.js'
import type { SimData } from './data-cache.js'

/** How a provider behaves beyond its code: honest, failing (runs break off) or lying (bad outputs at a low price). */
export type Conduct = 'honest' | 'failing' | 'lying'

/** Weeknights and weekends: the idle windows of a GPU its owner uses in office hours. */
export const IDLE_WINDOWS = ['mon-fri 19:00-07:00', 'sat-sun']
/** The longest job a simulated provider takes (the policy's upper bound, 30 days). */
export const SIM_MAX_JOB_MINUTES = 30 * 24 * 60

export interface ProviderInit {
  index: number
  owner: number
  region: RegionSpec
  modelKey: string
  vramMib: number
  gpus: number
  floorUsd: number
  idleWindows: boolean
  conduct: Conduct
}

export class SimProvider {
  readonly index: number
  readonly id: string
  /** tie-break bytes standing in for a bid hash (unique per provider) */
  readonly hash: Uint8Array
  readonly owner: number
  readonly region: RegionSpec
  readonly modelKey: string
  readonly gpus: number
  readonly idleWindows: boolean
  readonly conduct: Conduct
  readonly profile: ProviderProfile
  readonly scheduler: SlotScheduler
  readonly engine: BidEngine
  /** the capacity-index keys this provider is filed under */
  indexKeys: string[] = []
  /** the run's data model, where it models data: this provider's input cache is `data.caches[index]` (data-cache.ts) */
  data: SimData | undefined

  constructor (init: ProviderInit, now: () => number) {
    this.index = init.index
    this.id = `sim-p${init.index}`
    this.hash = new Uint8Array([
      init.index >>> 24,
      (init.index >>> 16) & 255,
      (init.index >>> 8) & 255,
      init.index & 255
    ])
    this.owner = init.owner
    this.region = init.region
    this.modelKey = init.modelKey
    this.gpus = init.gpus
    this.idleWindows = init.idleWindows
    this.conduct = init.conduct
    const policy = parsePolicy({
      region: init.region.name,
      priceFloor: init.floorUsd,
      availability: { timeZone: init.region.timeZone, windows: init.idleWindows ? IDLE_WINDOWS : ['always'] },
      maxJobMinutes: SIM_MAX_JOB_MINUTES
    })
    const cards: DetectedGpu[] = Array.from({ length: init.gpus }, (_, i) => ({
      index: i, uuid: `GPU-sim-${init.modelKey}-${init.index}-${i}`, model: init.modelKey, modelKey: init.modelKey, vramMib: init.vramMib, simulated: false
    }))
    this.profile = providerProfile(policy, cards)
    this.scheduler = new SlotScheduler({
      gpus: cards.map(c => ({ index: c.index, uuid: c.uuid, simulated: false })),
      now
    })
    const scheduler = this.scheduler
    const capacity: CapacitySource = {
      freeSlots: () => scheduler.freeCount(),
      preemptibleSlots: () => scheduler.preemptibleCount(),
      totalSlots: () => init.gpus,
      thermalOk: () => true
    }
    const profile = this.profile
    this.engine = new BidEngine({ profile: () => profile, capacity })
  }
}
