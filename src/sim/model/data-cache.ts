/**
 * The simulator's model of job data and the providers' input caches (issue 39, items 2 and 3).
 * The trace has no data sizes or dataset identities, so all of it is a stated assumption
 * (examples/sim/README.md, "Data and the input cache"):
 *
 * - a task reads one dataset: a public one (open model weights or an open dataset, shared by
 *   every renter) with probability `publicShare`, else with probability `reuse` one of its
 *   renter's `datasetsPerRenter` datasets of its kind, else a dataset of its own that no
 *   other task reads. Kind: batch tasks (trace QoS BE, Burstable) train, the rest
 *   (LS, Guaranteed) serve models; sizes are log-normal per kind, drawn once per dataset;
 * - a private dataset is reused only by its own renter's tasks (they have their own ids),
 *   a public one by anyone who names it: the cache's privacy rule;
 * - each provider keeps an LRU cache of whole datasets bounded by `cacheGiB`; a dataset
 *   bigger than the budget streams through and is not kept;
 * - the renter names the dataset in its job request and, besides the sampled candidates, asks
 *   up to `askHolders` providers whose caches hold it (its `market ls --dataset` lookup); each
 *   bid claims what its provider holds, and the ranking's locality term counts it;
 * - an award moves the bytes its winner does not hold from the renter, at the lesser of the
 *   renter's and the provider's bandwidth, after the award's round trip and grace: the run
 *   starts that much later. With the cache off nothing is held and every award moves all.
 *
 * All draws come from a generator of their own, so the cache-on and cache-off runs of one seed
 * see the same datasets; what differs is what the winners hold, and, through the bids'
 * cached bytes, who wins.
 */

import { asBoolean, asNumber, asObject, onlyKnownKeys, type Fields } from '../../config/index.js'
import { percentile } from '../report/metrics.js'
import { jobIndexOf } from '../engine/engine-parts.js'
import type { JobRequest } from '../../../protocols/market.js'
import type { SimJob } from './population.js'
import type { SimProvider } from './provider.js'
import type { Rng } from './rng.js'

const GIB = 2 ** 30

/** A log-normal size: half the datasets are smaller than `medianGiB`; `sigma` is the spread of ln(size). */
export interface SizeDistribution { medianGiB: number, sigma: number }

export interface DataParams {
  /** providers keep input caches (false: nothing is held, every award moves all its bytes) */
  cache: boolean
  /** each provider's cache budget (its disk), GiB */
  cacheGiB: number
  /** a renter's upload bandwidth, Gbit/s */
  renterGbps: number
  /** a provider's download bandwidth, Gbit/s */
  providerGbps: number
  /** datasets of each kind a renter owns */
  datasetsPerRenter: number
  /** share of a renter's non-public tasks that read one of its datasets (the rest read a new one) */
  reuse: number
  /** share of tasks that read a public dataset */
  publicShare: number
  /** public datasets of each kind (popularity Zipf, s = 1) */
  publicDatasets: number
  /**
   * providers holding the job's dataset the renter asks besides the sampled candidates (its `market
   * ls --dataset` lookup); 0: none
   */
  askHolders: number
  training: SizeDistribution
  inference: SizeDistribution
}

/** Defaults: assumptions, not measurements (examples/sim/README.md says why each). */
export const DATA_DEFAULTS: DataParams = {
  cache: true,
  cacheGiB: 200,
  renterGbps: 1,
  providerGbps: 1,
  datasetsPerRenter: 4,
  reuse: 0.8,
  publicShare: 0.2,
  publicDatasets: 20,
  askHolders: 4,
  training: { medianGiB: 8, sigma: 1 },
  inference: { medianGiB: 2, sigma: 1 }
}

const DATA_KEYS = ['cache', 'cacheGiB', 'renterGbps', 'providerGbps', 'datasetsPerRenter', 'reuse', 'publicShare', 'publicDatasets', 'askHolders', 'training', 'inference'] as const

/** The scenario's `data:` section (every key optional); bad values throw ConfigErrors naming the field. */
export function parseDataParams (raw: unknown): DataParams {
  const o = asObject(raw ?? {}, 'data')
  onlyKnownKeys(o, DATA_KEYS, 'data')
  const num = (key: string, opts: { min: number, max: number, integer?: boolean }): number => asNumber(o[key], `data.${key}`, opts)
  const d = DATA_DEFAULTS
  const size = (key: 'training' | 'inference'): SizeDistribution => {
    if (o[key] === undefined) return { ...d[key] }
    const s: Fields = asObject(o[key], `data.${key}`)
    onlyKnownKeys(s, ['medianGiB', 'sigma'], `data.${key}`)
    return {
      medianGiB: s.medianGiB === undefined ? d[key].medianGiB : asNumber(s.medianGiB, `data.${key}.medianGiB`, { min: 0.000001, max: 100_000 }),
      sigma: s.sigma === undefined ? d[key].sigma : asNumber(s.sigma, `data.${key}.sigma`, { min: 0, max: 5 })
    }
  }
  return {
    cache: o.cache === undefined ? d.cache : asBoolean(o.cache, 'data.cache'),
    cacheGiB: o.cacheGiB === undefined ? d.cacheGiB : num('cacheGiB', { min: 0, max: 1_000_000 }),
    renterGbps: o.renterGbps === undefined ? d.renterGbps : num('renterGbps', { min: 0.001, max: 10_000 }),
    providerGbps: o.providerGbps === undefined ? d.providerGbps : num('providerGbps', { min: 0.001, max: 10_000 }),
    datasetsPerRenter: o.datasetsPerRenter === undefined ? d.datasetsPerRenter : num('datasetsPerRenter', { min: 1, max: 10_000, integer: true }),
    reuse: o.reuse === undefined ? d.reuse : num('reuse', { min: 0, max: 1 }),
    publicShare: o.publicShare === undefined ? d.publicShare : num('publicShare', { min: 0, max: 1 }),
    publicDatasets: o.publicDatasets === undefined ? d.publicDatasets : num('publicDatasets', { min: 1, max: 100_000, integer: true }),
    askHolders: o.askHolders === undefined ? d.askHolders : num('askHolders', { min: 0, max: 256, integer: true }),
    training: size('training'),
    inference: size('inference')
  }
}

/** Whole datasets by id, least recently used first out, never more than `budgetBytes` held. */
export class LruStore {
  private readonly held = new Map<number, number>()
  usedBytes = 0
  peakBytes = 0
  evictions = 0

  constructor (readonly budgetBytes: number, private readonly onEvict?: (id: number) => void) {}

  has (id: number): boolean {
    return this.held.has(id)
  }

  /**
   * One use of dataset `id`: true when it was held (and is now the most recent); else it is added
   * if it fits, evicting the least recent.
   */
  use (id: number, bytes: number): boolean {
    if (this.held.has(id)) {
      this.held.delete(id)
      this.held.set(id, bytes)
      return true
    }
    if (bytes > this.budgetBytes) return false
    for (const [old, size] of this.held) {
      if (this.usedBytes + bytes <= this.budgetBytes) break
      this.held.delete(old)
      this.usedBytes -= size
      this.evictions++
      this.onEvict?.(old)
    }
    this.held.set(id, bytes)
    this.usedBytes += bytes
    this.peakBytes = Math.max(this.peakBytes, this.usedBytes)
    return false
  }
}

/** Who reads what: each job's dataset, and each dataset's size and whether it is public. */
export interface Catalogue {
  /** per job index, its dataset id */
  datasetOfJob: Int32Array
  /** per dataset id, bytes */
  bytes: number[]
  /** per dataset id, 1 for public */
  isPublic: number[]
}

function isTraining (job: SimJob): boolean {
  return job.task.qos === 'BE' || job.task.qos === 'Burstable'
}

/** A log-normal draw (Box–Muller), bytes, at least one. */
function drawBytes (rng: Rng, size: SizeDistribution): number {
  const u = 1 - rng.next()
  const normal = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next())
  return Math.max(1, Math.round(size.medianGiB * GIB * Math.exp(size.sigma * normal)))
}

/** Draws every job's dataset in job order (so one seed gives one catalogue). */
export function drawCatalogue (jobs: readonly SimJob[], params: DataParams, rng: Rng): Catalogue {
  const bytes: number[] = []
  const isPublic: number[] = []
  const make = (training: boolean, pub: boolean): number => {
    bytes.push(drawBytes(rng, training ? params.training : params.inference))
    isPublic.push(pub ? 1 : 0)
    return bytes.length - 1
  }
  const publicIds = [true, false].map(training =>
    Array.from({ length: params.publicDatasets }, () => make(training, true))
  )
  // Zipf (s = 1) popularity over the public datasets of a kind: a few open models are most used
  const zipf: number[] = []
  for (let i = 0, sum = 0; i < params.publicDatasets; i++) zipf.push(sum += 1 / (i + 1))
  const own = new Map<string, number[]>()
  const datasetOfJob = new Int32Array(jobs.length)
  for (const [j, job] of jobs.entries()) {
    const training = isTraining(job)
    let id: number
    if (rng.chance(params.publicShare)) {
      const x = rng.next() * (zipf[zipf.length - 1] as number)
      id = (publicIds[training ? 0 : 1] as number[])[Math.min(zipf.length - 1, zipf.findIndex(c => c > x))] as number
    } else if (rng.chance(params.reuse)) {
      const key = `${job.renter}/${training ? 't' : 'i'}`
      let list = own.get(key)
      if (list == null) own.set(key, list = [])
      const k = rng.int(params.datasetsPerRenter)
      // a renter's datasets come into being when first read
      while (list.length <= k) list.push(-1)
      if (list[k] === -1) list[k] = make(training, false)
      id = list[k] as number
    } else {
      id = make(training, false)
    }
    datasetOfJob[j] = id
  }
  return { datasetOfJob, bytes, isPublic }
}

function idOfDigest (d: Uint8Array): number {
  return ((d[28] as number) << 24 | (d[29] as number) << 16 | (d[30] as number) << 8 | (d[31] as number)) >>> 0
}

export interface Spread { mean: number, p50: number, p95: number }

export interface DataSummary {
  cache: boolean
  /** market awards (a re-award after a failure or preemption counts again) */
  awards: number
  /** awards whose winner already held the task's dataset */
  hitRatio: number
  /** of the bytes the awards needed, the share the winners held */
  byteHitRatio: number
  neededGiB: number
  movedGiB: number
  movedPerAwardGiB: Spread
  /** award (the bid window's close) to the run's start: round trip, grace for displaced work, transfer */
  timeToStartSeconds: Spread
  evictions: number
  /** the most one provider's cache held at once */
  peakCacheGiB: number
}

/** The data side of one market run: the catalogue, every provider's cache, and what the awards moved. */
export class SimData {
  readonly caches: LruStore[]
  private readonly moved: number[] = []
  private readonly toStartMs: number[] = []
  private neededBytes = 0
  private hits = 0
  private readonly bytesPerMs: number
  /** per dataset id, the providers whose caches hold it, oldest holder first */
  private readonly holders = new Map<number, Set<number>>()

  constructor (
    readonly catalogue: Catalogue,
    readonly params: DataParams,
    private readonly providers: readonly SimProvider[]
  ) {
    this.caches = providers.map(
      (_, i) =>
        new LruStore(params.cache ? params.cacheGiB * GIB : 0, id => {
          this.holders.get(id)?.delete(i)
        })
    )
    this.bytesPerMs = Math.min(params.renterGbps, params.providerGbps) * 1e9 / 8 / 1000
  }

  /** The digest standing in for dataset `id`'s sha256 (the simulator hashes nothing). */
  static digest (id: number): Uint8Array {
    const d = new Uint8Array(32)
    d[0] = 0xda
    d[28] = id >>> 24; d[29] = (id >>> 16) & 255; d[30] = (id >>> 8) & 255; d[31] = id & 255
    return d
  }

  /**
   * Names the job's dataset in its request, as the renter's job file would (the digest and its
   * bytes): the job request builder (auction-round.ts jobRequestFor) does not know the data.
   */
  nameInputs (request: JobRequest): void {
    const id = this.catalogue.datasetOfJob[jobIndexOf(request.jobId)] as number
    request.datasetDigests = [SimData.digest(id)]
    request.datasetBytes = BigInt(this.catalogue.bytes[id] as number)
  }

  /**
   * Providers holding the request's dataset that the renter asks too: at most `askHolders`, not
   * already asked nor excluded, with free slots for all the job's GPUs and not paused (the others would decline).
   */
  holdersToAsk (request: JobRequest, asked: readonly SimProvider[], exclude: ReadonlySet<string>): SimProvider[] {
    const out: SimProvider[] = []
    const digest = request.datasetDigests[0]
    if (this.params.askHolders === 0 || digest == null) return out
    const holders = this.holders.get(idOfDigest(digest))
    if (holders == null) return out
    for (const i of holders) {
      if (out.length >= this.params.askHolders) break
      const p = this.providers[i] as SimProvider
      if (asked.includes(p) || exclude.has(p.id) || 'refused' in p.scheduler.canAccept({ tier: 'bronze', gpus: Math.max(1, request.gpus) })) continue
      out.push(p)
    }
    return out
  }

  /** What provider `provider` holds of the request's datasets: its bid's claim. */
  held (provider: number, request: JobRequest): { datasets: number, bytes: bigint } {
    const cache = this.caches[provider] as LruStore
    let datasets = 0
    let bytes = 0
    for (const d of request.datasetDigests) {
      const id = idOfDigest(d)
      if (!cache.has(id)) continue
      datasets++
      bytes += this.catalogue.bytes[id] as number
    }
    return { datasets, bytes: BigInt(bytes) }
  }

  /**
   * An award of job `jobIndex` to `provider` at `awardAt`, its run due to start at `start` but
   * for the data: moves what the winner lacks (and caches it); returns the transfer's ms.
   */
  award (provider: number, jobIndex: number, awardAt: number, start: number): number {
    const id = this.catalogue.datasetOfJob[jobIndex] as number
    const bytes = this.catalogue.bytes[id] as number
    const cache = this.caches[provider] as LruStore
    const hit = cache.use(id, bytes)
    if (!hit && cache.has(id)) {
      let set = this.holders.get(id)
      if (set == null) this.holders.set(id, set = new Set())
      set.add(provider)
    }
    const moved = hit ? 0 : bytes
    // whole ms: the simulation's clock ticks in them
    const transferMs = Math.ceil(moved / this.bytesPerMs)
    this.neededBytes += bytes
    if (hit) this.hits++
    this.moved.push(moved)
    this.toStartMs.push(start + transferMs - awardAt)
    return transferMs
  }

  summary (): DataSummary {
    const r4 = (x: number): number => Math.round(x * 1e4) / 1e4
    const spread = (xs: number[], unit: number): Spread => ({
      mean: r4(xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length / unit),
      p50: r4(percentile(xs, 50) / unit),
      p95: r4(percentile(xs, 95) / unit)
    })
    const movedBytes = this.moved.reduce((a, b) => a + b, 0)
    const awards = this.moved.length
    return {
      cache: this.params.cache,
      awards,
      hitRatio: r4(awards === 0 ? 0 : this.hits / awards),
      byteHitRatio: r4(this.neededBytes === 0 ? 0 : 1 - movedBytes / this.neededBytes),
      neededGiB: r4(this.neededBytes / GIB),
      movedGiB: r4(movedBytes / GIB),
      movedPerAwardGiB: spread(this.moved, GIB),
      timeToStartSeconds: spread(this.toStartMs, 1000),
      evictions: this.caches.reduce((s, c) => s + c.evictions, 0),
      peakCacheGiB: r4(this.caches.reduce((m, c) => Math.max(m, c.peakBytes), 0) / GIB)
    }
  }
}
