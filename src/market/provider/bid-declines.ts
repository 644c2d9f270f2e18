/**
 * Declines at bid time (the provider side of matching): whether this provider can and will
 * serve a job, checked against the job's hard constraints and the provider's own policy and
 * state. Pure: the caller passes the profile, a capacity snapshot and the clock.
 *
 * Vocabulary: a provider *declines* a job, with a DeclineReason (protocols/market.proto), at
 * three moments: at bid time (here), at award time (award-declines.ts) and at start time
 * (exec/provider/admission.ts, whose wire frame is JobFrame.Rejected).
 */

import { availableFor, gpuModelMatches, imageAllowed, type ProviderProfile } from '../../capability/index.js'
import { DeclineReason, type JobRequest, isPreemptible, jobGpuCount, tierOf } from '../shared/messages.js'

type GpuGroup = ProviderProfile['groups'][number]

/** What the provider's slots look like right now (see CapacitySource). */
export interface CapacitySnapshot {
  freeSlots: number
  /** slots running bronze/preemptible work that gold and silver jobs may displace */
  preemptibleSlots: number
  totalSlots: number
  thermalOk: boolean
  powerOk: boolean
}

export type MatchResult =
  | { ok: true, gpu: GpuGroup, cachedDatasets: number }
  | { ok: false, reason: DeclineReason, detail: string }

const GIB = 1024
const NONE: readonly GpuGroup[] = []

function decline (reason: DeclineReason, detail: string): MatchResult {
  return { ok: false, reason, detail: detail.slice(0, 256) }
}

function gib (mib: number): string {
  return `${(mib / GIB).toFixed(mib % GIB === 0 ? 0 : 1)} GiB`
}

/**
 * Checks `job` against the provider; the first failing check is reported, in the order of
 * the DeclineReason enum (protocols/market.proto). On success returns the GPU group to offer:
 * the cheapest fit is not our concern here, so the smallest card that satisfies the job.
 */
export function matchJob (
  profile: ProviderProfile,
  job: JobRequest,
  capacity: CapacitySnapshot,
  now: number
): MatchResult {
  const { policy } = profile
  const c = job.constraints
  if (Number(job.expiresAt) <= now) return decline(DeclineReason.EXPIRED, 'the job request has expired')
  // a multi-GPU job takes `need` slots on this box at once: free ones, or (gold/silver) bronze ones to displace
  const need = jobGpuCount(job)
  if (need > capacity.totalSlots) return decline(DeclineReason.GPU_COUNT, `needs ${need} GPUs on one box, this provider has ${capacity.totalSlots}`)
  const canDisplace =
    !isPreemptible(job) && capacity.preemptibleSlots > 0 && capacity.freeSlots + capacity.preemptibleSlots >= need
  if (capacity.freeSlots < need && !canDisplace) {
    if (need > 1) return decline(DeclineReason.NO_CAPACITY, `needs ${need} GPUs, ${Math.max(0, capacity.freeSlots)} of ${capacity.totalSlots} free${isPreemptible(job) ? '' : ` and ${capacity.preemptibleSlots} preemptible`}`)
    return decline(DeclineReason.NO_CAPACITY, `all ${capacity.totalSlots} GPU slots busy${isPreemptible(job) ? '' : ' and none preemptible'}`)
  }
  const minVram = c?.minVramMib ?? 0
  // (one GPU group is the common case: no arrays are made for it; a provider answers every job it sees)
  const groups = profile.groups
  const bigEnough =
    groups.length === 1
      ? (groups[0] as GpuGroup).vramMib >= minVram
          ? groups
          : NONE
      : groups.filter(g => g.vramMib >= minVram)
  if (bigEnough.length === 0) {
    const largest = Math.max(0, ...profile.groups.map(g => g.vramMib))
    return decline(DeclineReason.VRAM, `needs ${gib(minVram)} per GPU, largest GPU has ${gib(largest)}`)
  }
  const models = c?.gpuModels ?? []
  const fits = (g: GpuGroup): boolean => models.some(m => gpuModelMatches(m, g.modelKey))
  const fitting =
    models.length === 0
      ? bigEnough
      : bigEnough.length === 1
        ? fits(bigEnough[0] as GpuGroup)
          ? bigEnough
          : NONE
        : bigEnough.filter(fits)
  if (fitting.length === 0) {
    return decline(DeclineReason.GPU_MODEL, `wants ${models.join(' or ')}, has ${profile.groups.map(g => g.modelKey).join(', ')}`)
  }
  const regions = c?.regions ?? []
  if (regions.length > 0 && !regions.includes(policy.region)) {
    return decline(DeclineReason.REGION, `wants region ${regions.join(' or ')}, provider is in ${policy.region}`)
  }
  const residency = c?.residency ?? ''
  if (residency !== '' && residency !== policy.residency) {
    return decline(DeclineReason.RESIDENCY, `data must stay in ${residency}, provider is in ${policy.residency}`)
  }
  const tier = tierOf(job)
  if (!policy.tiers.includes(tier)) return decline(DeclineReason.TIER, `provider does not take ${tier} jobs (takes ${policy.tiers.join(', ')})`)
  if (!(policy.workloads as readonly string[]).includes(job.workload)) {
    return decline(DeclineReason.WORKLOAD, `provider does not run ${job.workload} (runs ${policy.workloads.join(', ')})`)
  }
  if (job.image !== '' && !imageAllowed(policy.images, job.image)) {
    return decline(DeclineReason.IMAGE, policy.images.length === 0 ? 'provider allows no container images' : `image ${job.image} is not on the provider's allow-list`)
  }
  // a service lease must fit its whole minimum length, never just the estimate (issue 17)
  const durationMs = Math.max(Number(job.estDurationMs), Number(job.lease?.minDurationMs ?? 0n))
  if (!availableFor(policy.availability.windows, policy.availability.timeZone, now, durationMs)) {
    return decline(DeclineReason.AVAILABILITY_WINDOW, `the estimated ${Math.ceil(durationMs / 60_000)} min do not fit the provider's availability windows (${policy.availability.windowsText.join(', ')}, ${policy.availability.timeZone})`)
  }
  const maxPrice = c?.maxPriceMicroUsd ?? 0n
  if (maxPrice > 0n && BigInt(policy.priceFloorMicroUsd) > maxPrice) {
    return decline(DeclineReason.PRICE_FLOOR, `floor ${usd(policy.priceFloorMicroUsd)} USD/GPU-h is above the max price ${usd(maxPrice)}`)
  }
  if (!capacity.thermalOk) return decline(DeclineReason.THERMAL, 'GPU temperature above the provider\'s limit')
  if (!capacity.powerOk) return decline(DeclineReason.POWER, 'GPU power draw at the provider\'s limit')
  if (durationMs > policy.maxJobMinutes * 60_000) {
    return decline(DeclineReason.MAX_JOB_LENGTH, `estimated ${Math.ceil(durationMs / 60_000)} min exceeds the provider's ${policy.maxJobMinutes} min limit`)
  }
  const notice = c?.minPreemptionNoticeMs ?? 0
  if (isPreemptible(job) && notice > policy.preemptionGraceSeconds * 1000) {
    return decline(DeclineReason.PREEMPTION_NOTICE, `job needs ${notice / 1000} s preemption notice, provider gives ${policy.preemptionGraceSeconds} s`)
  }
  const offered = c?.excludeSimulated === true ? fitting.filter(g => !g.simulated) : fitting
  if (offered.length === 0) return decline(DeclineReason.OTHER, 'the job excludes simulated GPUs')
  if (need > 1) {
    // every one of its GPUs must meet the constraints, all on this box
    let fit = 0
    for (const g of offered) fit += g.count
    if (fit < need) return decline(DeclineReason.GPU_COUNT, `needs ${need} GPUs${minVram > 0 ? ` of ${gib(minVram)}` : ''}${models.length > 0 ? ` (${models.join(' or ')})` : ''} on one box, this provider has ${fit} such`)
  }
  // (a provider answers every job it sees: no copies or sets when there is one group or no dataset)
  const gpu = (offered.length === 1 ? offered[0] : [...offered].sort((a, b) => a.vramMib - b.vramMib)[0]) as GpuGroup
  let cachedDatasets = 0
  if (job.datasetDigests.length > 0 && policy.datasets.length > 0) {
    const cached = new Set(policy.datasets)
    cachedDatasets = job.datasetDigests.filter(d => cached.has(Buffer.from(d).toString('hex'))).length
  }
  return { ok: true, gpu, cachedDatasets }
}

function usd (micro: bigint | number): string {
  return (Number(micro) / 1_000_000).toFixed(2)
}
