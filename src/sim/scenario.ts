/**
 * Scenario files (examples/sim/*.yaml): where supply and demand come from (a trace, a
 * synthetic resample of it, or both), how the cluster is split among owners and regions, the
 * market's settings, and the adversaries. Every field is optional except the demand source;
 * bad values throw ConfigErrors naming the dotted field. Paths are relative to the file.
 */

import { readFile } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { ConfigError, asEnum, asNumber, asObject, asString, join, onlyKnownKeys, type Fields } from '../config/index.js'
import { isValidTimeZone, TIERS, type Tier } from '../capability/index.js'
import { SimError } from './errors.js'
import { parseDataParams, type DataParams } from './model/data-cache.js'

export interface RegionSpec { name: string, timeZone: string }

export interface Scenario {
  name: string
  description: string
  seed: number
  trace: { nodes: string, tasks: string }
  /** resample the trace's jobs (and nodes, unless providers is 0) to this size; absent: the trace as it is */
  synthetic?: { providers: number, jobs: number, spanDays: number }
  population: {
    owners: number
    /** share of tasks that are the owners' own work, run first on their own GPUs */
    ownWorkload: number
    renters: number
    regions: RegionSpec[]
    /** share of owners who offer GPUs only in idle windows (weeknights and weekends) */
    idleWindowsShare: number
    /** share of LS tasks that are gold (the rest silver) */
    goldShareOfLs: number
    /** share of rented jobs that must stay in their renter's residency zone */
    residencyShare: number
  }
  market: {
    /** providers with capacity that one auction hears from at most */
    candidates: number
    pricing: 'first-price' | 'second-price'
    bidWindowMs: number
    acceptTimeoutMs: number
    patienceMinutes: Record<Tier, number>
    retryMinutes: number
    /** USD per GPU-hour by model key; `default` for the rest */
    floorUsd: Record<string, number>
    /** minutes between a provider's reputation refreshes (ledger sync delay) */
    reputationRefreshMinutes: number
  }
  adversarial: { failing: number, lying: number, sybilRenters: number }
  report: { bucketMinutes: number }
  /** the data model and the providers' input caches (data-cache.ts); absent: data is not modelled */
  data?: DataParams
}

const DEFAULT_REGIONS: RegionSpec[] = [
  { name: 'eu-west', timeZone: 'Europe/Berlin' },
  { name: 'us-east', timeZone: 'America/New_York' },
  { name: 'ap-southeast', timeZone: 'Asia/Singapore' }
]

/**
 * Floors in USD per GPU-hour: an owner's running cost plus a margin, well under cloud list prices
 * (see examples/sim/README.md).
 */
export const DEFAULT_FLOORS_USD: Record<string, number> = {
  'p100-16gb': 0.30, 't4-16gb': 0.15, 'v100-16gb': 0.60, 'v100-32gb': 0.75, 'a10-24gb': 0.35, g2: 0.40, g3: 0.60, default: 0.50
}

type NumberReader = (key: string, fallback: number, bounds: { min?: number, max?: number, integer?: boolean }) => number

/** The numbers of one section (`field`): a missing key is `fallback`, a present one is checked against `bounds`. */
function numbersIn (obj: Fields, field: string): NumberReader {
  return (key, fallback, bounds) => obj[key] === undefined ? fallback : asNumber(obj[key], join(field, key), bounds)
}

function section (obj: Fields, key: string, keys: readonly string[]): Fields {
  const s = asObject(obj[key] ?? {}, key)
  onlyKnownKeys(s, keys, key)
  return s
}

/** Validates a parsed scenario; `baseDir` resolves relative trace paths. */
export function parseScenario (raw: unknown, baseDir: string): Scenario {
  const top = asObject(raw, 'scenario')
  onlyKnownKeys(top, ['name', 'description', 'seed', 'trace', 'synthetic', 'population', 'market', 'adversarial', 'report', 'data'], '')
  const trace = section(top, 'trace', ['nodes', 'tasks'])
  if (trace.nodes === undefined || trace.tasks === undefined) throw new ConfigError('trace', 'nodes and tasks CSV paths (or --trace)', top.trace)
  const pop = section(top, 'population', ['owners', 'ownWorkload', 'renters', 'regions', 'idleWindowsShare', 'goldShareOfLs', 'residencyShare'])
  const market = section(top, 'market', ['candidates', 'pricing', 'bidWindowMs', 'acceptTimeoutMs', 'patienceMinutes', 'retryMinutes', 'floorUsd', 'reputationRefreshMinutes'])
  const adv = section(top, 'adversarial', ['failing', 'lying', 'sybilRenters'])
  const report = section(top, 'report', ['bucketMinutes'])
  const share = { min: 0, max: 1 }
  const topNumber = numbersIn(top, '')
  const populationNumber = numbersIn(pop, 'population')
  const marketNumber = numbersIn(market, 'market')
  const adversarialNumber = numbersIn(adv, 'adversarial')
  const reportNumber = numbersIn(report, 'report')
  const scenario: Scenario = {
    name: top.name === undefined ? 'scenario' : asString(top.name, 'name', { nonEmpty: true }),
    description: top.description === undefined ? '' : asString(top.description, 'description'),
    seed: topNumber('seed', 1, { min: 0, max: 2 ** 32 - 1, integer: true }),
    trace: { nodes: resolve(baseDir, asString(trace.nodes, 'trace.nodes')), tasks: resolve(baseDir, asString(trace.tasks, 'trace.tasks')) },
    population: {
      owners: populationNumber('owners', 40, { min: 1, max: 100_000, integer: true }),
      ownWorkload: populationNumber('ownWorkload', 0.6, share),
      renters: populationNumber('renters', 100, { min: 1, max: 1_000_000, integer: true }),
      regions: pop.regions === undefined ? DEFAULT_REGIONS : parseRegions(pop.regions),
      idleWindowsShare: populationNumber('idleWindowsShare', 0.3, share),
      goldShareOfLs: populationNumber('goldShareOfLs', 0.3, share),
      residencyShare: populationNumber('residencyShare', 0.2, share)
    },
    market: {
      candidates: marketNumber('candidates', 8, { min: 1, max: 256, integer: true }),
      pricing: market.pricing === undefined ? 'first-price' : asEnum(market.pricing, 'market.pricing', ['first-price', 'second-price'] as const),
      bidWindowMs: marketNumber('bidWindowMs', 1000, { min: 1, max: 60_000 }),
      acceptTimeoutMs: marketNumber('acceptTimeoutMs', 3000, { min: 1, max: 60_000 }),
      patienceMinutes: parsePatience(market.patienceMinutes),
      retryMinutes: marketNumber('retryMinutes', 5, { min: 0.1, max: 1440 }),
      floorUsd: parseFloors(market.floorUsd),
      reputationRefreshMinutes: marketNumber('reputationRefreshMinutes', 60, { min: 0, max: 10_080 })
    },
    adversarial: {
      failing: adversarialNumber('failing', 0, share),
      lying: adversarialNumber('lying', 0, share),
      sybilRenters: adversarialNumber('sybilRenters', 0, { min: 0, max: 10_000, integer: true })
    },
    report: { bucketMinutes: reportNumber('bucketMinutes', 60, { min: 1, max: 7 * 1440 }) }
  }
  if (top.data !== undefined) scenario.data = parseDataParams(top.data)
  if (top.synthetic !== undefined) {
    const s = section(top, 'synthetic', ['providers', 'jobs', 'spanDays'])
    const syntheticNumber = numbersIn(s, 'synthetic')
    scenario.synthetic = {
      providers: syntheticNumber('providers', 0, { min: 0, max: 100_000, integer: true }),
      jobs: syntheticNumber('jobs', 10_000, { min: 1, max: 5_000_000, integer: true }),
      spanDays: syntheticNumber('spanDays', 7, { min: 0.01, max: 365 })
    }
  }
  return scenario
}

function parseRegions (raw: unknown): RegionSpec[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > 32) throw new ConfigError('population.regions', 'a list of 1 to 32 { name, timeZone }', raw)
  return raw.map((r, i) => {
    const field = `population.regions[${i}]`
    const o = asObject(r, field)
    onlyKnownKeys(o, ['name', 'timeZone'], field)
    const name = asString(o.name, `${field}.name`, { pattern: /^[a-z]{2,}-[a-z0-9-]+$/, patternText: 'a region like eu-west' })
    const timeZone = o.timeZone === undefined ? 'UTC' : asString(o.timeZone, `${field}.timeZone`)
    if (!isValidTimeZone(timeZone)) throw new ConfigError(`${field}.timeZone`, 'an IANA time zone', timeZone)
    return { name, timeZone }
  })
}

function parsePatience (raw: unknown): Record<Tier, number> {
  const out: Record<Tier, number> = { gold: 30, silver: 240, bronze: 1440 }
  if (raw === undefined) return out
  const o = asObject(raw, 'market.patienceMinutes')
  onlyKnownKeys(o, TIERS, 'market.patienceMinutes')
  for (const t of TIERS) if (o[t] !== undefined) out[t] = asNumber(o[t], `market.patienceMinutes.${t}`, { min: 0, max: 525_600 })
  return out
}

function parseFloors (raw: unknown): Record<string, number> {
  const out = { ...DEFAULT_FLOORS_USD }
  if (raw === undefined) return out
  const o = asObject(raw, 'market.floorUsd')
  for (const [k, v] of Object.entries(o)) out[k] = asNumber(v, `market.floorUsd.${k}`, { min: 0.000001, max: 1000 })
  return out
}

/** Reads and validates a scenario file. */
export async function loadScenario (path: string): Promise<Scenario> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err: any) {
    throw new SimError('ERR_SIM_SCENARIO', `cannot read scenario ${path}: ${String(err?.message ?? err)}`)
  }
  let raw: unknown
  try {
    raw = parseYaml(text)
  } catch (err: any) {
    throw new SimError('ERR_SIM_SCENARIO', `scenario ${path} is not valid YAML: ${String(err?.message ?? err)}`)
  }
  return parseScenario(raw, dirname(path))
}
