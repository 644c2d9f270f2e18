/**
 * Service files (examples/services/*.yaml): a server that listens on $PORT, deployed as
 * replicas on leases. Validated with ConfigErrors that name the field.
 *
 *   name: sentiment
 *   tier: silver                     # gold | silver | bronze
 *   runtime:
 *     command: [node, inputs/server.mjs]   # run in the replica's work dir; listens on $PORT
 *     image: ghcr.io/acme/llm:1      # docker runner (instead of or with a command)
 *     env: { MODEL: small }
 *   files:                           # shipped to the replica's inputs/: path there -> local file or directory
 *     server.mjs: sentiment/server.mjs
 *   health: /health                  # GET, 2xx = healthy
 *   replicas: 2                      # any region; or per region: { eu-west: 1, us-east: 1 };
 *                                    # or per residency zone: { eu: 1, us: 1 }
 *   residency: eu                    # hard rule for every replica
 *   maxPriceUsd: 3.5                 # per GPU-hour
 *   lease: { minutes: 60 }           # or { untilStopped: true }; minMinutes: the shortest acceptable run
 *   constraints: { minVramGb: 8, gpuModels: [l4, a10] }
 *   gateway: { port: 8080, bind: 127.0.0.1, token: ... }   # another bind than loopback needs a token
 *   limits: { maxBodyKiB: 1024, maxInflightPerReplica: 32, timeoutSeconds: 30 }
 *   auction: { bidWindowMs: 1000 }
 */
import { readdir, stat } from 'node:fs/promises'
import { dirname, join as joinPath, resolve } from 'node:path'
import { ConfigError, asBoolean, asNumber, asObject, asString, asStringList, onlyKnownKeys, type Fields } from '../config/index.js'
import { MAX_SHM_MIB, parseJobSpec, readJobFile, type JobSpec } from '../market/index.js'

export interface ServiceSpec {
  name: string
  tier: 'gold' | 'silver' | 'bronze'
  runtime: { command: string[], image?: string, env: Record<string, string>, shmSizeMiB?: number }
  /** path inside inputs/ -> absolute local path (file or directory) */
  files: Record<string, string>
  healthPath: string
  /** one entry per wanted replica: its region ('' = any) */
  replicas: Array<{ region: string }>
  residency?: string
  maxPriceUsd?: number
  /** lease length, ms; 0 = until stopped (each replica runs to the provider's max job length, then is replaced) */
  leaseMs: number
  /** the shortest run a provider must be able to give (its window must stay open that long) */
  minLeaseMs: number
  constraints: { minVramGb?: number, gpuModels?: string[] }
  gateway: { port: number, bind: string, token?: string }
  limits: { maxBodyBytes: number, maxInflightPerReplica: number, timeoutMs: number }
  bidWindowMs: number
}

const TOP = ['name', 'tier', 'runtime', 'files', 'health', 'replicas', 'residency', 'maxPriceUsd', 'lease', 'constraints', 'gateway', 'limits', 'auction'] as const
const NAME = /^[a-z0-9][a-z0-9-]{0,62}$/
const INPUT_PATH = /^(?!\/)(?!.*(^|\/)\.\.?(\/|$))[A-Za-z0-9._\-/@+]{1,512}$/
/** the longest a lease asks for when "until stopped": providers cut it to their max job length */
export const UNTIL_STOPPED_MS = 24 * 60 * 60_000
const MAX_REPLICAS = 32

/** Validates a parsed service file; relative file paths are resolved against `baseDir`. */
export function parseServiceSpec (raw: unknown, baseDir = process.cwd()): ServiceSpec {
  const obj = asObject(raw ?? {}, '(service)')
  onlyKnownKeys(obj, TOP, '')
  const name = asString(obj.name, 'name', { pattern: NAME, patternText: 'a lower-case name of letters, digits and "-" (at most 63)' })
  const tier = (obj.tier ?? 'silver') as string
  if (!['gold', 'silver', 'bronze'].includes(tier)) throw new ConfigError('tier', 'gold, silver or bronze', obj.tier)

  const rt = asObject(obj.runtime ?? {}, 'runtime')
  onlyKnownKeys(rt, ['command', 'image', 'env', 'shmSizeMiB'], 'runtime')
  const command = rt.command === undefined ? [] : asStringList(rt.command, 'runtime.command')
  const image = rt.image === undefined ? undefined : asString(rt.image, 'runtime.image', { nonEmpty: true })
  if (command.length === 0 && image === undefined) throw new ConfigError('runtime', 'a command (runtime.command) or an image (runtime.image) that serves HTTP on $PORT')
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(asObject(rt.env ?? {}, 'runtime.env'))) {
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(k) || k === 'PORT') throw new ConfigError(`runtime.env.${k}`, 'a variable name (PORT is set by the provider)', k)
    env[k] = asString(v, `runtime.env.${k}`)
  }

  const files: Record<string, string> = {}
  for (const [dest, src] of Object.entries(asObject(obj.files ?? {}, 'files'))) {
    if (!INPUT_PATH.test(dest)) throw new ConfigError(`files.${dest}`, 'a relative path inside the replica\'s inputs/ (no "..")', dest)
    files[dest] = resolve(baseDir, asString(src, `files.${dest}`, { nonEmpty: true }))
  }

  const healthPath = asString(obj.health ?? '/health', 'health', { pattern: /^\/[\x21-\x7e]{0,255}$/, patternText: 'an HTTP path starting with "/"' })

  const replicas: ServiceSpec['replicas'] = []
  if (typeof obj.replicas === 'number' || obj.replicas === undefined) {
    const n = asNumber(obj.replicas ?? 1, 'replicas', { integer: true, min: 1, max: MAX_REPLICAS })
    for (let i = 0; i < n; i++) replicas.push({ region: '' })
  } else {
    for (const [region, count] of Object.entries(asObject(obj.replicas, 'replicas'))) {
      if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(region)) throw new ConfigError(`replicas.${region}`, 'a region such as eu-west', region)
      const n = asNumber(count, `replicas.${region}`, { integer: true, min: 0, max: MAX_REPLICAS })
      for (let i = 0; i < n; i++) replicas.push({ region })
    }
    if (replicas.length === 0 || replicas.length > MAX_REPLICAS) throw new ConfigError('replicas', `1 to ${MAX_REPLICAS} replicas in all`, obj.replicas)
  }

  const lease = asObject(obj.lease ?? { untilStopped: true }, 'lease')
  onlyKnownKeys(lease, ['minutes', 'untilStopped', 'minMinutes'], 'lease')
  const untilStopped = lease.untilStopped === undefined ? lease.minutes === undefined : asBoolean(lease.untilStopped, 'lease.untilStopped')
  if (untilStopped && lease.minutes !== undefined) throw new ConfigError('lease', 'either minutes or untilStopped, not both', lease)
  const leaseMs = untilStopped ? 0 : asNumber(lease.minutes, 'lease.minutes', { min: 1, max: 30 * 24 * 60 }) * 60_000
  const minLeaseMs = lease.minMinutes === undefined
    ? Math.min(untilStopped ? 60 * 60_000 : leaseMs, 60 * 60_000)
    : asNumber(lease.minMinutes, 'lease.minMinutes', { min: 0.1, max: untilStopped ? 24 * 60 : leaseMs / 60_000 }) * 60_000

  const c = asObject(obj.constraints ?? {}, 'constraints')
  onlyKnownKeys(c, ['minVramGb', 'gpuModels'], 'constraints')
  const constraints: ServiceSpec['constraints'] = {}
  if (c.minVramGb !== undefined) constraints.minVramGb = asNumber(c.minVramGb, 'constraints.minVramGb', { min: 0, max: 4096 })
  if (c.gpuModels !== undefined) constraints.gpuModels = asStringList(c.gpuModels, 'constraints.gpuModels')

  const g = asObject(obj.gateway ?? {}, 'gateway')
  onlyKnownKeys(g, ['port', 'bind', 'token'], 'gateway')
  const gateway: ServiceSpec['gateway'] = {
    port: asNumber(g.port ?? 0, 'gateway.port', { integer: true, min: 0, max: 65535 }),
    bind: asString(g.bind ?? '127.0.0.1', 'gateway.bind', { nonEmpty: true })
  }
  if (g.token !== undefined) gateway.token = asString(g.token, 'gateway.token', { pattern: /^[\x21-\x7e]{16,256}$/, patternText: '16 to 256 printable characters' })
  if (!['127.0.0.1', '::1', 'localhost'].includes(gateway.bind) && gateway.token == null) throw new ConfigError('gateway.token', 'a token (16+ characters) when the gateway binds beyond loopback', undefined)

  const l = asObject(obj.limits ?? {}, 'limits')
  onlyKnownKeys(l, ['maxBodyKiB', 'maxInflightPerReplica', 'timeoutSeconds'], 'limits')
  const limits: ServiceSpec['limits'] = {
    maxBodyBytes: asNumber(l.maxBodyKiB ?? 1024, 'limits.maxBodyKiB', { min: 1, max: 16 * 1024 }) * 1024,
    maxInflightPerReplica: asNumber(l.maxInflightPerReplica ?? 32, 'limits.maxInflightPerReplica', { integer: true, min: 1, max: 1024 }),
    timeoutMs: asNumber(l.timeoutSeconds ?? 30, 'limits.timeoutSeconds', { min: 0.1, max: 3600 }) * 1000
  }
  const a = asObject(obj.auction ?? {}, 'auction')
  onlyKnownKeys(a, ['bidWindowMs'], 'auction')
  const spec: ServiceSpec = {
    name,
    tier: tier as ServiceSpec['tier'],
    runtime: { command, env },
    files,
    healthPath,
    replicas,
    leaseMs,
    minLeaseMs,
    constraints,
    gateway,
    limits,
    bidWindowMs: asNumber(a.bidWindowMs ?? 1000, 'auction.bidWindowMs', { integer: true, min: 50, max: 60_000 })
  }
  if (image !== undefined) spec.runtime.image = image
  if (rt.shmSizeMiB !== undefined) spec.runtime.shmSizeMiB = asNumber(rt.shmSizeMiB, 'runtime.shmSizeMiB', { integer: true, min: 1, max: MAX_SHM_MIB })
  if (obj.residency !== undefined) spec.residency = asString(obj.residency, 'residency', { pattern: /^[a-z]{2,16}$/, patternText: 'a residency zone such as eu' })
  const otherZone = replicas.find(r => isZone(r.region) && spec.residency != null && r.region !== spec.residency)
  if (otherZone != null) throw new ConfigError(`replicas.${otherZone.region}`, `a zone or region inside residency ${String(spec.residency)}`, otherZone.region)
  if (obj.maxPriceUsd !== undefined) spec.maxPriceUsd = asNumber(obj.maxPriceUsd, 'maxPriceUsd', { min: 0.000001, max: 100_000 })
  // the replica's job spec must validate too (constraints the market checks)
  leaseJobSpec(spec, spec.replicas[0]?.region ?? '')
  return spec
}

/** A replicas key without a hyphen is a residency zone (eu, us), one with a hyphen a region (eu-west). */
function isZone (key: string): boolean {
  return /^[a-z]{2,16}$/.test(key)
}

/** Reads and validates a service file. */
export async function loadServiceFile (path: string): Promise<ServiceSpec> {
  const raw: Fields = await readJobFile(path)
  return parseServiceSpec(raw, dirname(resolve(path)))
}

/** The job one replica's auction runs: workload inference, marked as a lease. */
export function leaseJobSpec (spec: ServiceSpec, region: string): JobSpec {
  const minutes = (spec.leaseMs === 0 ? spec.minLeaseMs : spec.leaseMs) / 60_000
  const job = parseJobSpec({
    name: spec.name,
    tier: spec.tier,
    workload: 'inference',
    runtime: { command: spec.runtime.command.length > 0 ? spec.runtime.command : undefined, image: spec.runtime.image },
    estimatedMinutes: Math.max(0.01, minutes),
    constraints: {
      ...(spec.constraints.minVramGb != null ? { minVramGb: spec.constraints.minVramGb } : {}),
      ...(spec.constraints.gpuModels != null ? { gpuModels: spec.constraints.gpuModels } : {}),
      ...(region !== '' && !isZone(region) ? { regions: [region] } : {}),
      ...(isZone(region) ? { residency: region } : spec.residency != null ? { residency: spec.residency } : {}),
      ...(spec.maxPriceUsd != null ? { maxPriceUsd: spec.maxPriceUsd } : {})
    },
    auction: { bidWindowMs: spec.bidWindowMs }
  })
  job.lease = { minDurationMs: spec.minLeaseMs, healthPath: spec.healthPath }
  return job
}

/** Every file the replica gets, directories walked: path inside inputs/ -> local file. At most 4096. */
export async function serviceInputs (spec: ServiceSpec): Promise<Array<{ path: string, file: string }>> {
  const out: Array<{ path: string, file: string }> = []
  const walk = async (dest: string, src: string): Promise<void> => {
    const st = await stat(src).catch(() => { throw new ConfigError(`files.${dest}`, 'an existing file or directory', src) })
    if (st.isFile()) out.push({ path: dest, file: src })
    else if (st.isDirectory()) {
      for (const entry of (await readdir(src)).sort()) await walk(`${dest}/${entry}`, joinPath(src, entry))
    }
    if (out.length > 4096) throw new ConfigError('files', 'at most 4096 files in all', undefined)
  }
  for (const [dest, src] of Object.entries(spec.files)) await walk(dest, src)
  return out
}
