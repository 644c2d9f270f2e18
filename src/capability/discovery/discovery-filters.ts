/**
 * Discovery filters: validated from a user or a control call, turned into the index keys to
 * look up (narrowest first), and applied to each verified record.
 */

import { toString as uint8ArrayToString } from 'uint8arrays/to-string'
import { ConfigError, asNumber, asString, asStringList, asEnum } from '../../config/index.js'
import { gpuModelMatches } from '../gpu/gpu-model.js'
import { gpuIndexValue, vramAtLeast, vramBucketFor, type IndexKey } from './index-keys.js'
import { residencyOf, WORKLOAD_KINDS, type WorkloadKind } from '../policy/policy.js'
import { TIERS, recordTierFromWire, type Tier } from '../policy/tiers.js'
import { isAvailable } from '../policy/availability.js'
import type { CapabilityRecord } from '../../../protocols/capability.js'

export interface DiscoveryFilters {
  /** any of these models (gpuModelMatches: "h100" matches "h100-80gb") */
  gpus?: string[]
  /** at least one matching GPU with this much memory (GiB, 93 % tolerance as the VRAM buckets) */
  minVramGb?: number
  region?: string
  residency?: string
  tier?: Tier
  workload?: WorkloadKind
  /** inside one of its availability windows now */
  availableNow?: boolean
  /** drop records advertising simulated GPUs */
  excludeSimulated?: boolean
  /** caches every one of these datasets (sha256 hex) */
  datasets?: string[]
}

/**
 * Validates filters from a user or a control call; ConfigErrors name the flag
 * (`gpu`, `min-vram`, `region` …). Unknown keys are ignored.
 */
export function parseDiscoveryFilters (raw: Record<string, unknown>): DiscoveryFilters {
  const f: DiscoveryFilters = {}
  if (raw.gpus != null) {
    f.gpus = asStringList(raw.gpus, 'gpu').map(s => s.trim()).filter(s => s !== '')
    if (f.gpus.length > 16) throw new ConfigError('gpu', 'at most 16 models', raw.gpus)
    f.gpus.forEach(g => { if (g.length > 64 || !/[a-z0-9]/i.test(g)) throw new ConfigError('gpu', 'a GPU model such as H100 or rtx-4090', g) })
    if (f.gpus.length === 0) delete f.gpus
  }
  if (raw.minVramGb != null) f.minVramGb = asNumber(raw.minVramGb, 'min-vram', { min: 0, max: 4096 })
  if (raw.region != null) {
    f.region = asString(raw.region, 'region', { nonEmpty: true }).trim().toLowerCase()
    if (!/^[a-z]{2,}-[a-z0-9-]+$/.test(f.region)) throw new ConfigError('region', 'a region such as eu-west', raw.region)
  }
  if (raw.residency != null) {
    f.residency = asString(raw.residency, 'residency', { nonEmpty: true }).trim().toLowerCase()
    if (!/^[a-z]{2,}$/.test(f.residency)) throw new ConfigError('residency', 'a residency zone such as eu or us', raw.residency)
  }
  if (f.region != null && f.residency != null && residencyOf(f.region) !== f.residency) {
    throw new ConfigError('residency', `"${residencyOf(f.region)}" to agree with --region ${f.region} (or leave one out)`, raw.residency)
  }
  if (raw.tier != null) f.tier = asEnum(String(raw.tier).toLowerCase(), 'tier', TIERS)
  if (raw.workload != null) f.workload = asEnum(String(raw.workload).toLowerCase(), 'workload', WORKLOAD_KINDS)
  if (raw.availableNow === true) f.availableNow = true
  if (raw.excludeSimulated === true) f.excludeSimulated = true
  if (raw.datasets != null) {
    f.datasets = asStringList(raw.datasets, 'dataset').map(d => d.toLowerCase().replace(/^sha256:/, ''))
    if (f.datasets.length > 16) throw new ConfigError('dataset', 'at most 16 digests', raw.datasets)
    f.datasets.forEach(d => { if (!/^[0-9a-f]{64}$/.test(d)) throw new ConfigError('dataset', 'a sha256 digest (64 hex characters)', d) })
    if (f.datasets.length === 0) delete f.datasets
  }
  return f
}

/**
 * The index keys to look up, narrowest first: a cached dataset, the GPU models, the region,
 * a VRAM bucket (40 GiB and up), the residency zone, then `any`.
 */
export function indexKeysFor (filters: DiscoveryFilters): IndexKey[][] {
  const groups: IndexKey[][] = []
  if (filters.datasets != null) groups.push([{ dim: 'dataset', value: filters.datasets[0] as string }])
  if (filters.gpus != null) {
    const values = filters.gpus.map(gpuIndexValue)
    if (values.every(v => v !== undefined)) groups.push([...new Set(values as string[])].map(value => ({ dim: 'gpu', value })))
  }
  if (filters.region != null) groups.push([{ dim: 'region', value: filters.region }])
  const bucket = filters.minVramGb != null ? vramBucketFor(filters.minVramGb) : undefined
  if (bucket != null) groups.push([{ dim: 'vram', value: String(bucket) }])
  if (filters.residency != null) groups.push([{ dim: 'residency', value: filters.residency }])
  groups.push([{ dim: 'any', value: 'all' }])
  return groups
}

/** The first filter `record` fails, or undefined when it passes them all. */
export function failedFilter (record: CapabilityRecord, filters: DiscoveryFilters, now: number): string | undefined {
  if (filters.excludeSimulated === true && record.gpus.some(g => g.simulated)) return 'no-simulated'
  const gpusOk =
    filters.gpus == null
      ? record.gpus
      : record.gpus.filter(g => filters.gpus?.some(f => gpuModelMatches(f, g.model)) === true)
  if (gpusOk.length === 0) return 'gpu'
  if (filters.minVramGb != null && !gpusOk.some(g => vramAtLeast(g.vramMib, filters.minVramGb as number))) return 'min-vram'
  if (filters.region != null && record.region !== filters.region) return 'region'
  if (filters.residency != null && record.residency !== filters.residency) return 'residency'
  if (filters.tier != null && !record.acceptedTiers.some(t => recordTierFromWire(t) === filters.tier)) return 'tier'
  if (filters.workload != null && !record.workloads.includes(filters.workload)) return 'workload'
  if (filters.datasets != null) {
    const cached = new Set(record.cachedDatasets.map(d => uint8ArrayToString(d, 'base16')))
    if (!filters.datasets.every(d => cached.has(d))) return 'dataset'
  }
  if (filters.availableNow === true && !recordAvailableAt(record, now)) return 'available-now'
  return undefined
}

/** Whether a record's provider is inside one of its availability windows at `atMs`. */
export function recordAvailableAt (record: CapabilityRecord, atMs: number): boolean {
  if (record.availability.length === 0) return true
  return isAvailable(record.availability, record.timeZone === '' ? 'UTC' : record.timeZone, atMs)
}
