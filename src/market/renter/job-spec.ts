/**
 * Job specs: the YAML job file a renter writes (examples/jobs/*.yaml), the same fields as
 * CLI flags (flags override the file), validation with ConfigErrors that name the field, and
 * the conversion to the wire JobRequest.
 *
 *   name: llama-eval
 *   tier: silver                      # gold | silver | bronze (default silver)
 *   workload: evaluation              # inference | training | batch-inference | evaluation | sweep
 *   gpus: 4                           # GPUs on one box, all for this job (default 1, at most 16)
 *   runtime:
 *     image: ghcr.io/acme/eval:1.2    # and/or
 *     command: [python, eval.py]
 *   inputs: [data/prompts.jsonl]      # files, relative to the job file
 *   publicInputs: [weights.bin]       # inputs too; a provider's cache may reuse them for any renter
 *   outputs: [results.json]
 *   estimatedMinutes: 30
 *   datasets: [<sha256 hex>]          # for data locality
 *   constraints:
 *     minVramGb: 40
 *     gpuModels: [a100, h100]
 *     regions: [eu-west]
 *     residency: eu                   # hard rule
 *     maxPriceUsd: 2.50               # per GPU-hour
 *     maxLatencyMs: 150
 *     minReliability: 0.9
 *     preemptible: false
 *     minPreemptionNoticeSeconds: 30
 *     excludeSimulated: false
 *   auction:
 *     bidWindowMs: 1000
 *     pricing: first-price            # or second-price
 *     acceptTimeoutMs: 3000
 *   limits:                           # what the renter accepts back (defaults: README.md "Renter limits")
 *     maxLogMiB: 16
 *     maxOutputFiles: 4096
 *     maxOutputDepth: 32
 *     maxOutputMiB: 4096
 *     deadlineMarginSeconds: 30       # after the time limit + 30 s grace; progress does not extend it
 *     maxDiskMiB: 8192                # log and outputs of all attempts together
 */

import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { dirname, isAbsolute, resolve } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { ConfigError, asBoolean, asEnum, asNumber, asObject, asString, asStringList, join, onlyKnownKeys, type Fields } from '../../config/index.js'
import { MAX_LIFETIME_MS } from '../../../protocols/codec.js'
import { TIERS, WORKLOAD_KINDS, jobTierToWire, type Tier, type WorkloadKind } from '../../capability/index.js'
import { type JobRequest, MAX_BID_WINDOW_MS, MAX_JOB_GPUS, PPM, pricingRuleToWire, usdToMicro, type PricingRuleName } from '../shared/messages.js'

export interface JobSpec {
  name: string
  tier: Tier
  workload: WorkloadKind
  /** GPUs the job needs on one box (1 … MAX_JOB_GPUS); the price is per GPU-hour, so it pays this many times it */
  gpus: number
  /**
   * shmSizeMiB: the container's /dev/shm (docker; PyTorch data loaders want more than the engine's
   * 64 MiB), within the provider's bound
   */
  runtime: { image?: string, command: string[], shmSizeMiB?: number }
  /** absolute paths */
  inputs: string[]
  /** of `inputs`, those a provider's input cache may reuse for any renter that names their digest (absolute paths) */
  publicInputs?: string[]
  outputs: string[]
  estimatedMinutes: number
  /** lower-case sha256 hex */
  datasets: string[]
  /** bytes of the files behind `datasets`, where known (the renter's own inputs): the ranking's locality term */
  datasetBytes?: number
  constraints: {
    minVramGb: number
    gpuModels: string[]
    regions: string[]
    residency?: string
    maxPriceUsd?: number
    maxLatencyMs?: number
    minReliability?: number
    preemptible: boolean
    minPreemptionNoticeSeconds: number
    excludeSimulated: boolean
  }
  auction: {
    bidWindowMs: number
    pricing: PricingRuleName
    acceptTimeoutMs: number
  }
  /** the renter's own limits on what a provider sends back (only those set; the renter's defaults otherwise) */
  limits?: JobLimits
  /** a service lease (set by src/serve from a service file, never by a job file) */
  lease?: { minDurationMs: number, healthPath: string }
}

/** Per-job overrides of the renter's limits, in the job file's units. */
export interface JobLimits {
  maxLogMiB?: number
  maxOutputFiles?: number
  maxOutputDepth?: number
  maxOutputMiB?: number
  deadlineMarginSeconds?: number
  maxDiskMiB?: number
}

/** The bounds of each `limits:` field: [min, max, integer]. */
const LIMIT_BOUNDS: Record<keyof JobLimits, [number, number, boolean]> = {
  maxLogMiB: [1, 1024, false],
  maxOutputFiles: [1, 4096, true],
  maxOutputDepth: [1, 128, true],
  maxOutputMiB: [1, 64 * 1024, false],
  deadlineMarginSeconds: [0, 24 * 3600, false],
  maxDiskMiB: [1, 256 * 1024, false]
}

export const JOB_DEFAULTS = {
  name: 'job',
  tier: 'silver',
  workload: 'inference',
  estimatedMinutes: 60,
  bidWindowMs: 1000,
  acceptTimeoutMs: 3000
} as const

const TOP_KEYS = ['name', 'tier', 'workload', 'gpus', 'runtime', 'inputs', 'publicInputs', 'outputs', 'estimatedMinutes', 'datasets', 'constraints', 'auction', 'limits'] as const
const CONSTRAINT_KEYS = ['minVramGb', 'gpuModels', 'regions', 'residency', 'maxPriceUsd', 'maxLatencyMs', 'minReliability', 'preemptible', 'minPreemptionNoticeSeconds', 'excludeSimulated'] as const
const AUCTION_KEYS = ['bidWindowMs', 'pricing', 'acceptTimeoutMs'] as const
const LIST_LIMIT = 16
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const LOWER_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/
const SHA256 = /^[0-9a-f]{64}$/
const MAX_FILES = 4096

/** Reads a YAML job file (ConfigError ERR_CONFIG_FILE when unreadable or not YAML); validate with parseJobSpec. */
export async function readJobFile (path: string): Promise<Fields> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err: any) {
    throw new ConfigError('ERR_CONFIG_FILE', err?.code === 'ENOENT' ? `job file ${path} does not exist` : `job file ${path} cannot be read (${String(err?.code ?? err)})`)
  }
  let doc: unknown
  try {
    // warnings (an unknown tag) are not printed to the process: the value is validated like any other
    doc = parseYaml(text, { maxAliasCount: 100, logLevel: 'error' })
  } catch (err: any) {
    throw new ConfigError('ERR_CONFIG_FILE', `job file ${path} is not valid YAML: ${String(err?.message ?? err).split('\n')[0]}`)
  }
  return doc == null ? {} : asObject(doc, '(job file)')
}

function list (value: unknown, field: string, limit = LIST_LIMIT): string[] {
  const items = asStringList(value, field).map(s => s.trim())
  if (items.length > limit) throw new ConfigError(field, `at most ${limit} entries`, value)
  return items
}

/** `gpus:` (or --gpus): a whole number from 1 to MAX_JOB_GPUS; anything else is a ConfigError saying so. */
function jobGpus (value: unknown): number {
  const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_JOB_GPUS) {
    throw new ConfigError('gpus', `a whole number of GPUs from 1 to ${MAX_JOB_GPUS} (all on one box)`, value)
  }
  return n
}

/** The most /dev/shm a job file may ask for, MiB (a provider bounds it lower: its docker runner's maxShmMiB). */
export const MAX_SHM_MIB = 1024 * 1024

/**
 * Validates a raw job spec (parsed YAML with flags applied). Relative input and output paths
 * are resolved against `baseDir` (the job file's directory). Every bad value throws a
 * ConfigError naming the field, e.g. `constraints.maxPriceUsd`.
 */
export function parseJobSpec (raw: unknown, baseDir = process.cwd()): JobSpec {
  const obj = asObject(raw ?? {}, '(job)')
  onlyKnownKeys(obj, TOP_KEYS, '')
  const name = obj.name === undefined ? JOB_DEFAULTS.name : asString(obj.name, 'name', { pattern: NAME, patternText: 'a name of letters, digits, ".", "_" or "-" (at most 64)' })
  const tier = asEnum(obj.tier ?? JOB_DEFAULTS.tier, 'tier', TIERS)
  const workload = asEnum(obj.workload ?? JOB_DEFAULTS.workload, 'workload', WORKLOAD_KINDS)
  const gpus = obj.gpus === undefined ? 1 : jobGpus(obj.gpus)

  const rt = asObject(obj.runtime ?? {}, 'runtime')
  onlyKnownKeys(rt, ['image', 'command', 'shmSizeMiB'], 'runtime')
  const image = rt.image === undefined ? undefined : asString(rt.image, 'runtime.image', { pattern: /^[a-z0-9][a-z0-9._\-/:@]{0,511}$/, patternText: 'a container image reference such as ghcr.io/acme/eval:1.2' })
  const command = rt.command === undefined
    ? []
    : typeof rt.command === 'string' ? rt.command.trim().split(/\s+/).filter(s => s !== '') : asStringList(rt.command, 'runtime.command')
  if (command.length > 256) throw new ConfigError('runtime.command', 'at most 256 arguments', rt.command)
  if (image === undefined && command.length === 0) throw new ConfigError('runtime', 'an image (runtime.image, --image) or a command (runtime.command, -- command args…)')

  const files = (key: 'inputs' | 'outputs' | 'publicInputs'): string[] => {
    if (obj[key] === undefined) return []
    const items = list(obj[key], key, MAX_FILES)
    return items.map((p, i) => {
      if (p === '' || p.includes('\0')) throw new ConfigError(`${key}[${i}]`, 'a file path', p)
      if (key === 'outputs' && (isAbsolute(p) || p.split('/').includes('..'))) throw new ConfigError(`${key}[${i}]`, 'a relative path inside the job\'s output directory', p)
      return key === 'outputs' ? p : resolve(baseDir, p)
    })
  }
  const publicInputs = files('publicInputs')
  // a public input is an input too
  const inputs = [...new Set([...files('inputs'), ...publicInputs])]
  if (inputs.length > MAX_FILES) throw new ConfigError('inputs', `at most ${MAX_FILES} files with publicInputs`, obj.inputs)
  const outputs = files('outputs')

  const estimatedMinutes = asNumber(obj.estimatedMinutes ?? JOB_DEFAULTS.estimatedMinutes, 'estimatedMinutes', { min: 0.01, max: 30 * 24 * 60 })
  const datasets = obj.datasets === undefined
    ? []
    : list(obj.datasets, 'datasets').map((d, i) => {
      const hex = d.toLowerCase().replace(/^sha256:/, '')
      if (!SHA256.test(hex)) throw new ConfigError(`datasets[${i}]`, 'a sha256 digest (64 hex characters)', d)
      return hex
    })

  const cf = 'constraints'
  const c = asObject(obj.constraints ?? {}, cf)
  onlyKnownKeys(c, CONSTRAINT_KEYS, cf)
  const lowerList = (key: string, what: string): string[] => c[key] === undefined
    ? []
    : list(c[key], join(cf, key)).map((v, i) => {
      const s = v.toLowerCase()
      if (!LOWER_NAME.test(s.replace(/\s+/g, '-'))) throw new ConfigError(`${join(cf, key)}[${i}]`, what, v)
      return s.replace(/\s+/g, '-')
    })
  const constraints: JobSpec['constraints'] = {
    minVramGb: c.minVramGb === undefined ? 0 : asNumber(c.minVramGb, join(cf, 'minVramGb'), { min: 0, max: 4096 }),
    gpuModels: lowerList('gpuModels', 'a GPU model such as h100, a100-40gb or rtx-4090'),
    regions: lowerList('regions', 'a region such as eu-west or us-east'),
    preemptible: c.preemptible === undefined ? tier === 'bronze' : asBoolean(c.preemptible, join(cf, 'preemptible')),
    minPreemptionNoticeSeconds: c.minPreemptionNoticeSeconds === undefined ? 0 : asNumber(c.minPreemptionNoticeSeconds, join(cf, 'minPreemptionNoticeSeconds'), { min: 0, max: 3600 }),
    excludeSimulated: c.excludeSimulated === undefined ? false : asBoolean(c.excludeSimulated, join(cf, 'excludeSimulated'))
  }
  if (tier === 'bronze' && !constraints.preemptible) throw new ConfigError(join(cf, 'preemptible'), 'true or unset for a bronze job (bronze is interruptible by definition)', false)
  if (tier === 'gold' && constraints.preemptible) throw new ConfigError(join(cf, 'preemptible'), 'false or unset for a gold job (gold is never preempted)', true)
  if (c.residency !== undefined) {
    const r = asString(c.residency, join(cf, 'residency'), { nonEmpty: true }).trim().toLowerCase()
    if (!/^[a-z]{2,16}$/.test(r)) throw new ConfigError(join(cf, 'residency'), 'a residency zone such as eu or us', c.residency)
    constraints.residency = r
  }
  if (c.maxPriceUsd !== undefined) {
    const p = asNumber(c.maxPriceUsd, join(cf, 'maxPriceUsd'), { max: 100_000 })
    if (!(p > 0)) throw new ConfigError(join(cf, 'maxPriceUsd'), 'a price in USD per GPU-hour greater than 0', c.maxPriceUsd)
    constraints.maxPriceUsd = p
  }
  if (c.maxLatencyMs !== undefined) constraints.maxLatencyMs = asNumber(c.maxLatencyMs, join(cf, 'maxLatencyMs'), { integer: true, min: 1, max: 60_000 })
  if (c.minReliability !== undefined) constraints.minReliability = asNumber(c.minReliability, join(cf, 'minReliability'), { min: 0, max: 1 })

  const af = 'auction'
  const a = asObject(obj.auction ?? {}, af)
  onlyKnownKeys(a, AUCTION_KEYS, af)
  const auction: JobSpec['auction'] = {
    bidWindowMs: asNumber(a.bidWindowMs ?? JOB_DEFAULTS.bidWindowMs, join(af, 'bidWindowMs'), { integer: true, min: 50, max: MAX_BID_WINDOW_MS }),
    pricing: asEnum(a.pricing ?? 'first-price', join(af, 'pricing'), ['first-price', 'second-price'] as const),
    acceptTimeoutMs: asNumber(a.acceptTimeoutMs ?? JOB_DEFAULTS.acceptTimeoutMs, join(af, 'acceptTimeoutMs'), { integer: true, min: 100, max: 60_000 })
  }
  const spec: JobSpec = {
    name,
    tier,
    workload,
    gpus,
    runtime: { command },
    inputs,
    outputs,
    estimatedMinutes,
    datasets,
    constraints,
    auction
  }
  if (image !== undefined) spec.runtime.image = image
  if (publicInputs.length > 0) spec.publicInputs = publicInputs
  if (rt.shmSizeMiB !== undefined) spec.runtime.shmSizeMiB = asNumber(rt.shmSizeMiB, 'runtime.shmSizeMiB', { integer: true, min: 1, max: MAX_SHM_MIB })
  if (obj.limits !== undefined) {
    const l = asObject(obj.limits, 'limits')
    const keys = Object.keys(LIMIT_BOUNDS) as Array<keyof JobLimits>
    onlyKnownKeys(l, keys, 'limits')
    spec.limits = {}
    for (const key of keys) {
      const [min, max, integer] = LIMIT_BOUNDS[key]
      if (l[key] !== undefined) spec.limits[key] = asNumber(l[key], join('limits', key), { min, max, integer })
    }
  }
  return spec
}

/** The submit flags that describe a job, as parsed by the CLI (kebab-case names). */
export type JobFlags = Record<string, string | boolean | string[] | boolean[] | undefined>

/**
 * Overlays job flags on a raw spec (the input is not modified): --name --tier --workload
 * --gpus N --min-vram GB --gpu MODEL… --region R… --residency ZONE --max-price USD --max-latency MS
 * --min-reliability X --preemptible --no-simulated --est-minutes N --image IMAGE
 * --window-ms MS --second-price, and `command` (the arguments after `--`).
 */
export function applyJobFlags (raw: Fields, flags: JobFlags, command: readonly string[] = []): Fields {
  const out: Fields = { ...raw }
  const constraints: Fields = { ...asObject(raw.constraints ?? {}, 'constraints') }
  const runtime: Fields = { ...asObject(raw.runtime ?? {}, 'runtime') }
  const auction: Fields = { ...asObject(raw.auction ?? {}, 'auction') }
  const scalar = (v: unknown): unknown => Array.isArray(v) ? v[v.length - 1] : v
  const set = (target: Fields, key: string, flag: string): void => {
    if (flags[flag] !== undefined) target[key] = scalar(flags[flag])
  }
  set(out, 'name', 'name')
  set(out, 'tier', 'tier')
  set(out, 'workload', 'workload')
  set(out, 'gpus', 'gpus')
  set(out, 'estimatedMinutes', 'est-minutes')
  set(constraints, 'minVramGb', 'min-vram')
  set(constraints, 'residency', 'residency')
  set(constraints, 'maxPriceUsd', 'max-price')
  set(constraints, 'maxLatencyMs', 'max-latency')
  set(constraints, 'minReliability', 'min-reliability')
  if (flags.preemptible === true) constraints.preemptible = true
  if (flags['no-simulated'] === true) constraints.excludeSimulated = true
  for (const [flag, key] of [['gpu', 'gpuModels'], ['region', 'regions']] as const) {
    const v = flags[flag]
    if (v !== undefined) constraints[key] = (Array.isArray(v) ? v : [v]).flatMap(s => String(s).split(',')).map(s => s.trim()).filter(s => s !== '')
  }
  set(runtime, 'image', 'image')
  set(runtime, 'shmSizeMiB', 'shm-size')
  if (command.length > 0) runtime.command = [...command]
  set(auction, 'bidWindowMs', 'window-ms')
  if (flags['second-price'] === true) auction.pricing = 'second-price'
  if (Object.keys(constraints).length > 0) out.constraints = constraints
  if (Object.keys(runtime).length > 0) out.runtime = runtime
  if (Object.keys(auction).length > 0) out.auction = auction
  return out
}

/** Reads, merges flags over and validates a job: the file (optional) plus flags. */
export async function loadJobSpec (
  path: string | undefined,
  flags: JobFlags,
  command: readonly string[] = []
): Promise<JobSpec> {
  const raw = path == null ? {} : await readJobFile(path)
  return parseJobSpec(applyJobFlags(raw, flags, command), path == null ? process.cwd() : dirname(resolve(path)))
}

/** Margin after the bid window for awards and failovers before the request goes stale. */
const REQUEST_TTL_AFTER_WINDOW_MS = 2 * 60_000

export interface JobRequestOptions {
  renter: Uint8Array
  /** keeps the job id across re-auctions; fresh when absent */
  jobId?: Uint8Array
  now?: number
  /** the renter's listen addresses for the bid stream (binary, without /p2p; at most 4 kept) */
  renterAddrs?: Uint8Array[]
  /** the auction nonce (default: 16 random bytes); the simulator passes its own to stay deterministic and cheap */
  nonce?: Uint8Array
}

/** The wire JobRequest for a spec: fresh nonce, times from `now`. */
export function toJobRequest (spec: JobSpec, opts: JobRequestOptions): JobRequest {
  const now = opts.now ?? Date.now()
  const c = spec.constraints
  return {
    jobId: opts.jobId ?? new Uint8Array(randomBytes(16)),
    renter: opts.renter,
    tier: jobTierToWire(spec.tier),
    workload: spec.workload,
    // 1 is sent as absent: a 1-GPU request is byte for byte what it was before the field
    gpus: spec.gpus > 1 ? spec.gpus : 0,
    image: spec.runtime.image ?? '',
    estDurationMs: BigInt(Math.round(spec.estimatedMinutes * 60_000)),
    constraints: {
      // cards report less than their marketing size (an H100 80GB shows 81 559 MiB): a GPU
      // counts as "N GB" from 93 % of N GiB, the rule of the DHT's VRAM buckets
      minVramMib: Math.floor(c.minVramGb * 1024 * 93 / 100),
      gpuModels: c.gpuModels,
      regions: c.regions,
      residency: c.residency ?? '',
      maxPriceMicroUsd: c.maxPriceUsd == null ? 0n : usdToMicro(c.maxPriceUsd),
      maxLatencyMs: c.maxLatencyMs ?? 0,
      minReliabilityPpm: c.minReliability == null ? 0 : Math.round(c.minReliability * PPM),
      preemptible: c.preemptible,
      minPreemptionNoticeMs: Math.round(c.minPreemptionNoticeSeconds * 1000),
      excludeSimulated: c.excludeSimulated
    },
    datasetDigests: spec.datasets.map(d => new Uint8Array(Buffer.from(d, 'hex'))),
    ...(spec.datasetBytes != null && spec.datasetBytes > 0 ? { datasetBytes: BigInt(spec.datasetBytes) } : {}),
    bidWindowMs: spec.auction.bidWindowMs,
    createdAt: BigInt(now),
    expiresAt: BigInt(
      now + Math.min(MAX_LIFETIME_MS.jobRequest, spec.auction.bidWindowMs + REQUEST_TTL_AFTER_WINDOW_MS)
    ),
    nonce: opts.nonce ?? new Uint8Array(randomBytes(16)),
    pricingRule: pricingRuleToWire(spec.auction.pricing),
    renterAddrs: (opts.renterAddrs ?? []).filter(a => a.length > 0 && a.length <= 64).slice(0, 4),
    ...(spec.lease != null
      ? { lease: { minDurationMs: BigInt(Math.round(spec.lease.minDurationMs)), healthPath: spec.lease.healthPath } }
      : {})
  }
}
