/**
 * Who is in a scenario: owners (the trace's nodes split among teams in several regions, some
 * offering only their idle windows), the providers (one per node), renters (teams without
 * GPUs) and the jobs (trace tasks, each either an owner's own work or a renter's).
 *
 * Tiers from the trace's QoS: Guaranteed → gold; LS → gold for a seeded `goldShareOfLs` of
 * them, else silver; Burstable → silver; BE → bronze.
 */

import { TRACE_GPU, type Trace, type TraceNode, type TraceTask } from './trace.js'
import { SimProvider, type Conduct } from './provider.js'
import type { Rng } from './rng.js'
import type { RegionSpec, Scenario } from '../scenario.js'
import type { Tier } from '../../capability/index.js'

export interface SimJob {
  task: TraceTask
  tier: Tier
  /** the owning team, or -1 for a renter without GPUs */
  owner: number
  renter: string
  region: RegionSpec
  /** '' or the residency zone the job's data must stay in */
  residency: string
  /** trace GPU codes mapped to model keys; empty: any */
  models: string[]
}

export interface Population {
  providers: SimProvider[]
  /** provider indices per owner */
  owners: number[][]
  ownerRegion: RegionSpec[]
  jobs: SimJob[]
  sybils: string[]
}

export function tierOfQos (qos: TraceTask['qos'], rng: Rng, goldShareOfLs: number): Tier {
  switch (qos) {
    case 'Guaranteed': return 'gold'
    case 'LS': return rng.chance(goldShareOfLs) ? 'gold' : 'silver'
    case 'Burstable': return 'silver'
    default: return 'bronze'
  }
}

export function residencyOfRegion (region: string): string {
  return region.split('-')[0] ?? region
}

export function buildPopulation (scenario: Scenario, trace: Trace, rng: Rng, now: () => number): Population {
  const pop = scenario.population
  const nodes: TraceNode[] = [...trace.nodes]
  // shuffle so owners get a mix of node types
  for (let i = nodes.length - 1; i > 0; i--) {
    const j = rng.int(i + 1)
    const t = nodes[i] as TraceNode; nodes[i] = nodes[j] as TraceNode; nodes[j] = t
  }
  const ownerCount = Math.min(pop.owners, nodes.length)
  const ownerRegion = Array.from({ length: ownerCount }, (_, i) => pop.regions[i % pop.regions.length] as RegionSpec)
  const ownerWindows = Array.from({ length: ownerCount }, () => rng.chance(pop.idleWindowsShare))
  const owners: number[][] = Array.from({ length: ownerCount }, () => [])
  const adv = scenario.adversarial
  const providers = nodes.map((node, index) => {
    const owner = index % ownerCount
    owners[owner]?.push(index)
    const gpu = TRACE_GPU[node.model] ?? { modelKey: node.model.toLowerCase(), vramMib: 16_384 }
    const roll = rng.next()
    const conduct: Conduct = roll < adv.failing ? 'failing' : roll < adv.failing + adv.lying ? 'lying' : 'honest'
    const floor = scenario.market.floorUsd[gpu.modelKey] ?? scenario.market.floorUsd.default ?? 0.5
    return new SimProvider({
      index,
      owner,
      region: ownerRegion[owner] as RegionSpec,
      modelKey: gpu.modelKey,
      vramMib: gpu.vramMib,
      gpus: node.gpus,
      // a liar undercuts to win work it will not do
      floorUsd: conduct === 'lying' ? floor / 2 : floor,
      idleWindows: ownerWindows[owner] === true,
      conduct
    }, now)
  })
  // owners' own work in proportion to their GPUs
  const ownerGpus = owners.map(list => list.reduce((s, p) => s + (providers[p]?.gpus ?? 0), 0))
  const cumulative: number[] = []
  ownerGpus.reduce((s, g, i) => { cumulative[i] = s + g; return s + g }, 0)
  const totalGpus = cumulative[cumulative.length - 1] ?? 0
  const renterRegion = Array.from({ length: pop.renters }, (_, i) => pop.regions[i % pop.regions.length] as RegionSpec)
  // a million jobs share a few hundred model lists and a few thousand names: make each once
  // (resampled tasks share their source task's list), not once per job
  const modelLists = new Map<readonly string[], string[]>()
  const ownerNames = Array.from({ length: ownerCount }, (_, i) => `sim-owner${i}`)
  const renterNames = Array.from({ length: pop.renters }, (_, i) => `sim-r${i}`)
  const jobs = trace.tasks.map((task): SimJob => {
    const tier = tierOfQos(task.qos, rng, pop.goldShareOfLs)
    let models = modelLists.get(task.models)
    if (models == null) {
      modelLists.set(task.models, (models = task.models.map(m => TRACE_GPU[m]?.modelKey ?? m.toLowerCase())))
    }
    if (rng.chance(pop.ownWorkload) && totalGpus > 0) {
      const owner = firstAbove(cumulative, rng.next() * totalGpus)
      const region = ownerRegion[owner] as RegionSpec
      return { task, tier, owner, renter: ownerNames[owner] as string, region, residency: '', models }
    }
    const r = rng.int(pop.renters)
    const region = renterRegion[r] as RegionSpec
    const residency = rng.chance(pop.residencyShare) ? residencyOfRegion(region.name) : ''
    return { task, tier, owner: -1, renter: renterNames[r] as string, region, residency, models }
  })
  const sybils = Array.from({ length: adv.sybilRenters }, (_, i) => `sim-sybil${i}`)
  return { providers, owners, ownerRegion, jobs, sybils }
}

/** The first index whose cumulative value exceeds x (binary search; the last index at worst). */
function firstAbove (cumulative: readonly number[], x: number): number {
  let lo = 0
  let hi = cumulative.length - 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((cumulative[mid] as number) > x) hi = mid
    else lo = mid + 1
  }
  return lo
}
