/**
 * Provider policy: what a provider is willing to run, where, when and for how much.
 * Read from the `provider:` section of the config file, overridden by flags
 * (`applyPolicyFlags`), validated by `parsePolicy` with ConfigErrors naming the dotted field.
 *
 * File shape (YAML), every key optional except region and priceFloor:
 *
 *   provider:
 *     region: eu-west                # residency "eu" is derived from the prefix
 *     residency: eu                  # optional; must agree with the region
 *     priceFloor: 1.20               # USD per GPU-hour
 *     tiers: [silver, bronze]        # default gold, silver, bronze
 *     workloads: [inference, evaluation]   # default all five kinds
 *     images: ["nvcr.io/nvidia/pytorch:*", "ghcr.io/acme/infer"]   # default none
 *     availability:
 *       timeZone: Europe/Berlin      # default UTC
 *       windows: ["mon-fri 19:00-07:00", "sat-sun"]   # default ["always"]
 *     maxJobMinutes: 480             # default 1440
 *     thermal: { maxTemperatureC: 83 }   # default 85
 *     power: { maxPowerWatts: 350 }      # default none
 *     datasets: [<sha256 hex>, ...]
 *     preemptionGraceSeconds: 10     # default 10
 *     maxSlotsPerRenter: 2           # default one per GPU
 *     diskBudgetGiB: 64              # default (4 GiB inputs + 4 GiB outputs) x 2 per GPU
 *     inputCacheGiB: 16              # inputs kept for the next jobs, inside the disk budget;
 *                                    # default a quarter of it, 0: none
 */

import { ConfigError, asNumber, asObject, asString, asStringList, asEnum, onlyKnownKeys, join } from '../../config/index.js'
import type { Fields } from '../../config/index.js'
import { isValidTimeZone } from './availability.js'
import { parseWindow, formatWindow } from './windows.js'
import { TIERS, type Tier } from './tiers.js'
import type { AvailabilityWindow } from './windows.js'
export const WORKLOAD_KINDS = ['inference', 'training', 'batch-inference', 'evaluation', 'sweep'] as const
export type WorkloadKind = typeof WORKLOAD_KINDS[number]

export interface ProviderPolicy {
  /** e.g. "eu-west" */
  region: string
  /** residency zone: the region's prefix, e.g. "eu" */
  residency: string
  /** USD per GPU-hour (for display) */
  priceFloor: number
  /** integer micro-USD per GPU-hour (for the wire) */
  priceFloorMicroUsd: number
  tiers: Tier[]
  workloads: WorkloadKind[]
  /** docker image allow-list; entries may end in `*`; empty: no docker images */
  images: string[]
  availability: {
    /** IANA time zone */
    timeZone: string
    windows: AvailabilityWindow[]
    /** canonical text of each window, same order */
    windowsText: string[]
  }
  maxJobMinutes: number
  thermal: { maxTemperatureC: number }
  power: { maxPowerWatts?: number }
  /** sha256 digests of cached datasets, 64 lowercase hex chars */
  datasets: string[]
  preemptionGraceSeconds: number
  /** GPU slots one renter's jobs may hold or wait for at once; undefined: one per GPU */
  maxSlotsPerRenter?: number
  /**
   * disk all jobs in progress may hold together (declared inputs + output bound each), GiB;
   * undefined: the job service's default
   */
  diskBudgetGiB?: number
  /** the input cache's share of the disk budget, GiB; undefined: a quarter of it; 0: no cache */
  inputCacheGiB?: number
}

export const POLICY_DEFAULTS = {
  timeZone: 'UTC',
  windows: ['always'],
  maxJobMinutes: 24 * 60,
  maxTemperatureC: 85,
  preemptionGraceSeconds: 10
} as const

const POLICY_KEYS = ['region', 'residency', 'priceFloor', 'tiers', 'workloads', 'images', 'availability',
  'maxJobMinutes', 'thermal', 'power', 'datasets', 'preemptionGraceSeconds', 'maxSlotsPerRenter', 'diskBudgetGiB', 'inputCacheGiB'] as const

/** list limits, matching the CapabilityRecord wire limits (protocols/capability.proto) */
export const POLICY_LIMITS = { windows: 32, images: 64, datasets: 64 } as const

function atMost (items: readonly unknown[], max: number, field: string, raw: unknown): void {
  if (items.length > max) throw new ConfigError(field, `at most ${max} entries`, raw)
}

const REGION = /^[a-z]{2,}-[a-z0-9-]+$/
const RESIDENCY = /^[a-z]{2,}$/
/** registry/path[:tag][@sha256:digest], optionally ending in `*`; or `*` alone */
const IMAGE = /^(\*|[a-z0-9][a-z0-9._\-/:]*(:[A-Za-z0-9_][A-Za-z0-9_.-]*)?(@sha256:[a-f0-9]{64})?\*?)$/
const SHA256 = /^[0-9a-f]{64}$/

/** The residency zone of a region: its prefix ("eu-west" → "eu", "us-east-1" → "us"). */
export function residencyOf (region: string): string {
  const i = region.indexOf('-')
  return i < 0 ? region : region.slice(0, i)
}

/** A list that may be given as one string separated by commas (or semicolons, for windows). */
function list (value: unknown, field: string, separators: RegExp = /,/): string[] {
  if (typeof value === 'string') return value.split(separators).map(s => s.trim()).filter(s => s !== '')
  return asStringList(value, field).map(s => s.trim())
}

function enumList<T extends string> (value: unknown, field: string, allowed: readonly T[], def: readonly T[]): T[] {
  if (value === undefined) return [...def]
  const items = list(value, field).map((item, i) => asEnum(item, `${field}[${i}]`, allowed))
  if (items.length === 0) throw new ConfigError(field, `at least one of ${allowed.join(', ')}`, value)
  return [...new Set(items)]
}

/**
 * Validates a provider policy. Every bad value throws a ConfigError naming the full dotted
 * field, e.g. `provider.availability.windows[1]`.
 */
export function parsePolicy (raw: unknown, field = 'provider'): ProviderPolicy {
  const obj = asObject(raw ?? {}, field)
  onlyKnownKeys(obj, POLICY_KEYS, field)
  const f = (key: string): string => join(field, key)

  if (obj.region === undefined) throw new ConfigError(f('region'), 'a region such as eu-west, us-east or ap-south (required)')
  const region = asString(obj.region, f('region')).trim().toLowerCase()
  if (!REGION.test(region)) throw new ConfigError(f('region'), 'a region such as eu-west, us-east or ap-south (zone-area, lowercase)', obj.region)
  let residency = residencyOf(region)
  if (obj.residency !== undefined) {
    const given = asString(obj.residency, f('residency')).trim().toLowerCase()
    if (!RESIDENCY.test(given)) throw new ConfigError(f('residency'), 'a residency zone such as eu, us or ap', obj.residency)
    if (given !== residency) {
      throw new ConfigError(f('residency'), `"${residency}" to agree with region "${region}" (or leave it out)`, obj.residency)
    }
    residency = given
  }

  if (obj.priceFloor === undefined) throw new ConfigError(f('priceFloor'), 'a price floor in USD per GPU-hour, e.g. 1.20 (required)')
  const priceFloor = asNumber(obj.priceFloor, f('priceFloor'), { max: 100_000 })
  const priceFloorMicroUsd = Math.round(priceFloor * 1_000_000)
  if (!(priceFloor > 0) || priceFloorMicroUsd < 1) {
    throw new ConfigError(f('priceFloor'), 'a price in USD per GPU-hour greater than 0', obj.priceFloor)
  }

  const tiers = enumList(obj.tiers, f('tiers'), TIERS, TIERS)
  const workloads = enumList(obj.workloads, f('workloads'), WORKLOAD_KINDS, WORKLOAD_KINDS)

  const images = obj.images === undefined ? [] : list(obj.images, f('images'))
  atMost(images, POLICY_LIMITS.images, f('images'), obj.images)
  images.forEach((img, i) => {
    if (!IMAGE.test(img) || img.length > 512 || img.slice(0, -1).includes('*')) {
      throw new ConfigError(`${f('images')}[${i}]`, 'a docker image reference such as "nvcr.io/nvidia/pytorch:24.05-py3", optionally ending in *', img)
    }
  })

  const availField = f('availability')
  const avail = asObject(obj.availability ?? {}, availField)
  onlyKnownKeys(avail, ['timeZone', 'windows'], availField)
  const tzField = join(availField, 'timeZone')
  const timeZone = avail.timeZone === undefined
    ? POLICY_DEFAULTS.timeZone
    : asString(avail.timeZone, tzField, { nonEmpty: true }).trim()
  if (!isValidTimeZone(timeZone)) throw new ConfigError(tzField, 'an IANA time zone such as Europe/Berlin or UTC', avail.timeZone)
  const winField = join(availField, 'windows')
  const windowTexts = avail.windows === undefined ? [...POLICY_DEFAULTS.windows] : list(avail.windows, winField, /[;,]/)
  if (windowTexts.length === 0) throw new ConfigError(winField, 'at least one window (use "always" for all the time)', avail.windows)
  atMost(windowTexts, POLICY_LIMITS.windows, winField, avail.windows)
  const windows = windowTexts.map((w, i) => parseWindow(w, `${winField}[${i}]`))

  const maxJobMinutes = obj.maxJobMinutes === undefined
    ? POLICY_DEFAULTS.maxJobMinutes
    : asNumber(obj.maxJobMinutes, f('maxJobMinutes'), { integer: true, min: 1, max: 30 * 24 * 60 })

  const thermalField = f('thermal')
  const thermal = asObject(obj.thermal ?? {}, thermalField)
  onlyKnownKeys(thermal, ['maxTemperatureC'], thermalField)
  const maxTemperatureC = thermal.maxTemperatureC === undefined
    ? POLICY_DEFAULTS.maxTemperatureC
    : asNumber(thermal.maxTemperatureC, join(thermalField, 'maxTemperatureC'), { integer: true, min: 30, max: 120 })

  const powerField = f('power')
  const powerRaw = asObject(obj.power ?? {}, powerField)
  onlyKnownKeys(powerRaw, ['maxPowerWatts'], powerField)
  const power: { maxPowerWatts?: number } = {}
  if (powerRaw.maxPowerWatts !== undefined) {
    const w = asNumber(powerRaw.maxPowerWatts, join(powerField, 'maxPowerWatts'), { integer: true, max: 100_000 })
    if (!(w > 0)) throw new ConfigError(join(powerField, 'maxPowerWatts'), 'a power limit in watts greater than 0', powerRaw.maxPowerWatts)
    power.maxPowerWatts = w
  }

  const datasets = obj.datasets === undefined ? [] : list(obj.datasets, f('datasets'))
  atMost(datasets, POLICY_LIMITS.datasets, f('datasets'), obj.datasets)
  const digests = datasets.map((d, i) => {
    const hex = d.toLowerCase().replace(/^sha256:/, '')
    if (!SHA256.test(hex)) throw new ConfigError(`${f('datasets')}[${i}]`, 'a sha256 digest (64 hex characters)', d)
    return hex
  })

  const preemptionGraceSeconds = obj.preemptionGraceSeconds === undefined
    ? POLICY_DEFAULTS.preemptionGraceSeconds
    : asNumber(obj.preemptionGraceSeconds, f('preemptionGraceSeconds'), { integer: true, min: 0, max: 3600 })

  const maxSlotsPerRenter = obj.maxSlotsPerRenter === undefined
    ? undefined
    : asNumber(obj.maxSlotsPerRenter, f('maxSlotsPerRenter'), { integer: true, min: 1, max: 1024 })
  let diskBudgetGiB: number | undefined
  if (obj.diskBudgetGiB !== undefined) {
    diskBudgetGiB = asNumber(obj.diskBudgetGiB, f('diskBudgetGiB'), { max: 1_000_000 })
    if (!(diskBudgetGiB > 0)) throw new ConfigError(f('diskBudgetGiB'), 'a disk budget in GiB greater than 0, e.g. 64', obj.diskBudgetGiB)
  }
  const inputCacheGiB = obj.inputCacheGiB === undefined ? undefined : asNumber(obj.inputCacheGiB, f('inputCacheGiB'), { min: 0, max: 1_000_000 })
  if (inputCacheGiB !== undefined && diskBudgetGiB !== undefined && inputCacheGiB > diskBudgetGiB) {
    throw new ConfigError(f('inputCacheGiB'), `at most the disk budget (${diskBudgetGiB} GiB): the cache lives inside it`, obj.inputCacheGiB)
  }

  return {
    region,
    residency,
    priceFloor,
    priceFloorMicroUsd,
    tiers,
    workloads,
    images: [...new Set(images)],
    availability: { timeZone, windows, windowsText: windows.map(formatWindow) },
    maxJobMinutes,
    thermal: { maxTemperatureC },
    power,
    datasets: [...new Set(digests)],
    preemptionGraceSeconds,
    ...(maxSlotsPerRenter !== undefined ? { maxSlotsPerRenter } : {}),
    ...(diskBudgetGiB !== undefined ? { diskBudgetGiB } : {}),
    ...(inputCacheGiB !== undefined ? { inputCacheGiB } : {})
  }
}

/** Flag name (without dashes) → dotted path in the raw policy object. */
export const POLICY_FLAGS: Readonly<Record<string, readonly string[]>> = {
  region: ['region'],
  residency: ['residency'],
  'price-floor': ['priceFloor'],
  tiers: ['tiers'],
  workloads: ['workloads'],
  images: ['images'],
  windows: ['availability', 'windows'],
  'time-zone': ['availability', 'timeZone'],
  'max-job-minutes': ['maxJobMinutes'],
  'max-temp': ['thermal', 'maxTemperatureC'],
  'max-power': ['power', 'maxPowerWatts'],
  datasets: ['datasets'],
  grace: ['preemptionGraceSeconds'],
  'max-slots-per-renter': ['maxSlotsPerRenter'],
  'disk-budget': ['diskBudgetGiB'],
  'input-cache': ['inputCacheGiB']
}

const LIST_FLAGS = new Set(['tiers', 'workloads', 'images', 'windows', 'datasets'])

/**
 * Overlays flag values on the raw policy from the file and returns a new raw object for
 * parsePolicy (the input is not modified). `flags` maps flag names without dashes
 * (`price-floor`, `time-zone` …, see POLICY_FLAGS) to their values; other keys are ignored.
 * A list flag (tiers, workloads, images, windows, datasets) replaces the file's list; its
 * values may be repeated and/or comma-separated (windows also `;`). A repeated scalar
 * flag: the last one wins.
 */
export function applyPolicyFlags (raw: unknown, flags: Record<string, string | string[] | undefined>, field = 'provider'): Fields {
  const base = asObject(raw ?? {}, field)
  const out: Fields = { ...base }
  for (const [flag, path] of Object.entries(POLICY_FLAGS)) {
    const value = flags[flag]
    if (value === undefined) continue
    const values = Array.isArray(value) ? value : [value]
    let v: unknown
    if (LIST_FLAGS.has(flag)) {
      const sep = flag === 'windows' ? /[;,]/ : /,/
      v = values.flatMap(s => s.split(sep)).map(s => s.trim()).filter(s => s !== '')
    } else {
      if (values.length === 0) continue
      v = values[values.length - 1]
    }
    if (path.length === 1) {
      out[path[0] as string] = v
    } else {
      const [parent, child] = path as [string, string]
      const nested = asObject(out[parent] ?? {}, join(field, parent))
      out[parent] = { ...nested, [child]: v }
    }
  }
  return out
}

/** The repository part of an image reference (no tag, no digest). */
function repository (ref: string): string {
  const at = ref.indexOf('@')
  const noDigest = at < 0 ? ref : ref.slice(0, at)
  const colon = noDigest.lastIndexOf(':')
  return colon > noDigest.lastIndexOf('/') ? noDigest.slice(0, colon) : noDigest
}

/**
 * Whether a docker image reference is allowed by the list: an exact match; an entry ending
 * in `*` matches every reference starting with what precedes it; an entry without tag or
 * digest matches every tag and digest of that repository (not other repositories that merely
 * start with the same name).
 */
export function imageAllowed (allowed: readonly string[], ref: string): boolean {
  return allowed.some(entry => {
    if (entry === ref) return true
    if (entry.endsWith('*')) return ref.startsWith(entry.slice(0, -1))
    return repository(entry) === entry && repository(ref) === entry
  })
}
