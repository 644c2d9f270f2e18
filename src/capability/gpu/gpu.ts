/**
 * GPU detection: parses `nvidia-smi` CSV output and runs the binary with bounded time and
 * output; groups identical GPUs. Model keys are gpu-model.ts's, simulated GPUs
 * simulated-gpus.ts's.
 */

import { execFile } from 'node:child_process'
import { CapabilityError } from '../errors.js'
import { normaliseGpuModel } from './gpu-model.js'

/** The query used for detection (keep in sync with `parseNvidiaSmi`). */
export const NVIDIA_SMI_QUERY = 'index,uuid,name,memory.total,driver_version,compute_cap,power.limit'
/** The query used for telemetry (keep in sync with `parseTelemetry`). */
export const NVIDIA_SMI_TELEMETRY_QUERY = 'index,temperature.gpu,utilization.gpu,power.draw'

export const NVIDIA_SMI_ARGS = [`--query-gpu=${NVIDIA_SMI_QUERY}`, '--format=csv,noheader,nounits'] as const
export const NVIDIA_SMI_TELEMETRY_ARGS = [`--query-gpu=${NVIDIA_SMI_TELEMETRY_QUERY}`, '--format=csv,noheader,nounits'] as const

export interface DetectedGpu {
  /** nvidia-smi index (simulated: position in the simulated set) */
  index: number
  /** `GPU-<uuid>` as reported, or `GPU-sim-<modelKey>-<i>` when simulated */
  uuid: string
  /** the name as reported, e.g. "NVIDIA H100 80GB HBM3" */
  model: string
  /** normalised model, e.g. "h100-80gb" (see normaliseGpuModel) */
  modelKey: string
  vramMib: number
  driverVersion?: string
  /** e.g. "9.0" */
  computeCapability?: string
  /** enforced power limit in watts; undefined when nvidia-smi reports [N/A] */
  powerLimitW?: number
  simulated: boolean
}

export interface GpuTelemetry {
  index: number
  temperatureC?: number
  utilizationPct?: number
  powerDrawW?: number
}

export interface GpuGroup {
  model: string
  modelKey: string
  vramMib: number
  count: number
  computeCapability?: string
  driverVersion?: string
  simulated: boolean
}

/** nvidia-smi is missing, failed, or printed what cannot be read: ERR_GPU_DETECTION. */
export function gpuDetectionError (message: string, options?: ErrorOptions): CapabilityError<'ERR_GPU_DETECTION'> {
  return new CapabilityError('ERR_GPU_DETECTION', message, options)
}

export const NVIDIA_SMI_NOT_FOUND =
  'nvidia-smi not found: no NVIDIA driver on this machine; use --simulate-gpu MODEL:VRAM_GB[:COUNT] for development'

/** Driver / NVML failure texts that nvidia-smi prints instead of CSV. */
const DRIVER_FAILURE = /NVIDIA-SMI has failed|couldn't communicate with the NVIDIA driver|Failed to initialize NVML|Driver\/library version mismatch|No devices were found|Unable to determine the device handle|GPU is lost/i

/** Values nvidia-smi prints for fields a GPU cannot report. */
function isNotAvailable (v: string): boolean {
  return v === '' || /^\[.*\]$/.test(v) || /^n\/?a$/i.test(v)
}

function firstLine (text: string): string {
  return text.split(/\r?\n/).map(l => l.trim()).find(l => l !== '') ?? ''
}

function checkDriverFailure (text: string): void {
  // bracketed values ("[GPU is lost]", "[Unknown Error]") are per-field, not driver failures
  const line = text.split(/\r?\n/).map(l => l.trim()).find(l => DRIVER_FAILURE.test(l.replace(/\[[^\]]*\]/g, '')))
  if (line !== undefined) throw gpuDetectionError(`nvidia-smi reports a driver problem: ${line}`)
}

/** Splits CSV text into trimmed field lists, skipping blank lines and a header if present. */
function csvRows (text: string): Array<{ lineNo: number, fields: string[], raw: string }> {
  const rows: Array<{ lineNo: number, fields: string[], raw: string }> = []
  text.replace(/^\uFEFF/, '').split(/\r?\n/).forEach((raw, i) => {
    if (raw.trim() === '') return
    const fields = raw.split(',').map(f => f.trim())
    if (/^index$/i.test(fields[0] ?? '')) return // header line (output without noheader)
    rows.push({ lineNo: i + 1, fields, raw: raw.trim() })
  })
  return rows
}

/** A number, tolerating a trailing unit ("81559 MiB", "700.00 W") when `nounits` was forgotten. */
function num (v: string): number | undefined {
  if (isNotAvailable(v)) return undefined
  const m = /^(-?\d+(?:\.\d+)?)\s*(?:[a-z%]+)?$/i.exec(v)
  if (m == null) return undefined
  const n = Number(m[1])
  return Number.isFinite(n) ? n : undefined
}

function lineError (lineNo: number, raw: string, what: string): CapabilityError<'ERR_GPU_DETECTION'> {
  const shown = raw.length > 100 ? raw.slice(0, 97) + '...' : raw
  return gpuDetectionError(`cannot read nvidia-smi output line ${lineNo} (${what}): ${JSON.stringify(shown)}`)
}

/**
 * Parses `nvidia-smi --query-gpu=index,uuid,name,memory.total,driver_version,compute_cap,power.limit
 * --format=csv,noheader,nounits`. Blank lines are skipped and spacing does not matter.
 * Optional fields (driver, compute capability, power limit) reported as `[N/A]`,
 * `[Not Supported]` … become undefined; a line without index, uuid, name or memory, or
 * with the wrong number of fields, is an error, and driver failure text throws
 * CapabilityError ERR_GPU_DETECTION with the driver's message.
 */
export function parseNvidiaSmi (csv: string): DetectedGpu[] {
  checkDriverFailure(csv)
  const gpus: DetectedGpu[] = []
  for (const { lineNo, fields, raw } of csvRows(csv)) {
    if (fields.length !== 7) throw lineError(lineNo, raw, `expected 7 comma-separated fields, got ${fields.length}`)
    const [indexText, uuid, name, memText, driver, cc, power] = fields as [
      string,
      string,
      string,
      string,
      string,
      string,
      string
    ]
    const index = num(indexText)
    if (index === undefined || !Number.isInteger(index) || index < 0) throw lineError(lineNo, raw, 'missing or bad index')
    if (isNotAvailable(uuid)) throw lineError(lineNo, raw, 'missing uuid')
    if (isNotAvailable(name)) throw lineError(lineNo, raw, 'missing name')
    const vram = num(memText)
    if (vram === undefined || vram <= 0) throw lineError(lineNo, raw, 'missing or bad memory.total')
    const powerLimit = num(power)
    const gpu: DetectedGpu = {
      index,
      uuid,
      model: name.replace(/\s+/g, ' '),
      modelKey: normaliseGpuModel(name),
      vramMib: Math.round(vram),
      simulated: false
    }
    if (!isNotAvailable(driver)) gpu.driverVersion = driver
    if (/^\d+\.\d+$/.test(cc)) gpu.computeCapability = cc
    if (powerLimit !== undefined && powerLimit > 0) gpu.powerLimitW = powerLimit
    gpus.push(gpu)
  }
  const seen = new Set<number>()
  for (const g of gpus) {
    if (seen.has(g.index)) throw gpuDetectionError(`nvidia-smi output lists GPU index ${g.index} twice`)
    seen.add(g.index)
  }
  return gpus
}

/**
 * Parses `nvidia-smi --query-gpu=index,temperature.gpu,utilization.gpu,power.draw
 * --format=csv,noheader,nounits`; unreported values are undefined.
 */
export function parseTelemetry (csv: string): GpuTelemetry[] {
  checkDriverFailure(csv)
  const out: GpuTelemetry[] = []
  for (const { lineNo, fields, raw } of csvRows(csv)) {
    if (fields.length !== 4) throw lineError(lineNo, raw, `expected 4 comma-separated fields, got ${fields.length}`)
    const [indexText, temp, util, draw] = fields as [string, string, string, string]
    const index = num(indexText)
    if (index === undefined || !Number.isInteger(index) || index < 0) throw lineError(lineNo, raw, 'missing or bad index')
    const t: GpuTelemetry = { index }
    const temperatureC = num(temp)
    const utilizationPct = num(util)
    const powerDrawW = num(draw)
    if (temperatureC !== undefined) t.temperatureC = temperatureC
    if (utilizationPct !== undefined) t.utilizationPct = utilizationPct
    if (powerDrawW !== undefined) t.powerDrawW = powerDrawW
    out.push(t)
  }
  return out
}

export interface DetectOptions {
  /** the binary (path or name on PATH), default 'nvidia-smi' */
  nvidiaSmi?: string
  /** default 10 000 ms */
  timeoutMs?: number
  /** environment for the child, default process.env */
  env?: NodeJS.ProcessEnv
  /**
   * runs the command instead of a fork of this process (a provider's job launcher: sampled every
   * second while a job runs, a fork would mark the provider's memory copy-on-write each time)
   */
  run?: CommandRunner
}

/** Runs a command once and collects its output, bounded in time and bytes; never throws. */
export type CommandRunner = (
  file: string,
  args: string[],
  options: { env?: Record<string, string>, timeoutMs: number, maxBytes: number }
) => Promise<CommandResult>

export interface CommandResult {
  /** exit code; -1 when it could not start, was killed or timed out */
  code: number
  stdout: string
  stderr: string
  /** why it could not start (ENOENT, EACCES, …) */
  errorCode?: string
  timedOut?: boolean
  /** it printed more than maxBytes on a stream */
  truncated?: boolean
  /** the signal that ended it, other than the timeout's */
  signal?: string
}

const MAX_OUTPUT = 1024 * 1024

async function runNvidiaSmi (args: readonly string[], opts: DetectOptions): Promise<string> {
  const bin = opts.nvidiaSmi ?? 'nvidia-smi'
  const timeoutMs = opts.timeoutMs ?? 10_000
  const env = Object.fromEntries(
    Object.entries(opts.env ?? process.env).filter((e): e is [string, string] => e[1] != null)
  )
  const r = await (opts.run ?? runDirect)(bin, [...args], { env, timeoutMs, maxBytes: MAX_OUTPUT })
  if (r.errorCode === 'ENOENT') throw gpuDetectionError(NVIDIA_SMI_NOT_FOUND)
  if (r.errorCode === 'EACCES') throw gpuDetectionError(`cannot run ${bin}: permission denied`)
  if (r.truncated === true) throw gpuDetectionError(`${bin} printed more than ${MAX_OUTPUT} bytes; refusing to parse it`)
  if (r.timedOut === true) throw gpuDetectionError(`${bin} did not answer within ${timeoutMs} ms (driver hung?)`)
  if (r.signal != null) throw gpuDetectionError(`${bin} was killed by ${r.signal}`)
  if (r.code === 0) return r.stdout
  const line = firstLine(r.stdout) || firstLine(r.stderr) || 'no output'
  throw gpuDetectionError(`${bin} failed (exit ${String(r.code)}): ${line}`)
}

/** A CommandRunner by a fork of this process (execFile): for start-up, and callers without a launcher. */
const runDirect: CommandRunner = async (file, args, options) => await new Promise(resolve => {
  execFile(file, args, { timeout: options.timeoutMs, killSignal: 'SIGKILL', maxBuffer: options.maxBytes, encoding: 'utf8', windowsHide: true, env: options.env }, (err, stdout, stderr) => {
    if (err == null) { resolve({ code: 0, stdout, stderr }); return }
    const e = err as NodeJS.ErrnoException & { killed?: boolean, signal?: string | null, code?: string | number | null }
    resolve({
      code: typeof e.code === 'number' ? e.code : -1,
      stdout: String(stdout),
      stderr: String(stderr),
      errorCode: typeof e.code === 'string' ? e.code : undefined,
      timedOut: e.killed === true,
      truncated: e.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER',
      signal: e.killed === true ? undefined : e.signal ?? undefined
    })
  })
})

/** Runs nvidia-smi and returns the machine's GPUs; throws CapabilityError ERR_GPU_DETECTION with a readable reason. */
export async function detectGpus (opts: DetectOptions = {}): Promise<DetectedGpu[]> {
  return parseNvidiaSmi(await runNvidiaSmi(NVIDIA_SMI_ARGS, opts))
}

/** Runs nvidia-smi for temperature, utilization and power draw. */
export async function readGpuTelemetry (opts: DetectOptions = {}): Promise<GpuTelemetry[]> {
  return parseTelemetry(await runNvidiaSmi(NVIDIA_SMI_TELEMETRY_ARGS, opts))
}

/** Groups identical GPUs (same model, VRAM, compute capability, driver, simulated), in first-seen order. */
export function groupGpus (gpus: readonly DetectedGpu[]): GpuGroup[] {
  const groups = new Map<string, GpuGroup>()
  for (const g of gpus) {
    const key = JSON.stringify([
      g.model,
      g.modelKey,
      g.vramMib,
      g.computeCapability ?? null,
      g.driverVersion ?? null,
      g.simulated
    ])
    const found = groups.get(key)
    if (found != null) { found.count++; continue }
    const group: GpuGroup = {
      model: g.model,
      modelKey: g.modelKey,
      vramMib: g.vramMib,
      count: 1,
      simulated: g.simulated
    }
    if (g.computeCapability !== undefined) group.computeCapability = g.computeCapability
    if (g.driverVersion !== undefined) group.driverVersion = g.driverVersion
    groups.set(key, group)
  }
  return [...groups.values()]
}
