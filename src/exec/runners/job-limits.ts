/**
 * Resource limits (rlimits) of a process job, set by `prlimit` (util-linux) in front of the
 * command, or by the shell's `ulimit` where prlimit is absent. rlimits are per process (CPU
 * time, file size, address space) or per uid (process count), so they bound a job only
 * roughly; the job's cgroup, where there is one, bounds its process count and memory as a
 * whole, and the wall-clock time limit stops it in any case.
 */
import { accessSync, constants, readFileSync } from 'node:fs'

export interface ProcessLimits {
  /** CPU seconds per process (SIGXCPU, then SIGKILL 5 s later) */
  cpuSeconds?: number
  /** largest file the job may write, bytes (SIGXFSZ / EFBIG beyond) */
  fileBytes?: number
  /** processes of the job's uid (RLIMIT_NPROC; only applied when jobs have a uid of their own) */
  processes?: number
  /** address space per process, bytes (RLIMIT_AS; only where no cgroup bounds memory and no real GPU is used) */
  addressSpaceBytes?: number
}

const RLIMIT_ROWS: Record<keyof ProcessLimits, string> = {
  cpuSeconds: 'Max cpu time',
  fileBytes: 'Max file size',
  processes: 'Max processes',
  addressSpaceBytes: 'Max address space'
}

/** Our own hard limits: a job's limit may not exceed them (prlimit would fail raising one). */
function hardLimits (): Partial<Record<keyof ProcessLimits, number>> {
  const out: Partial<Record<keyof ProcessLimits, number>> = {}
  let text = ''
  try { text = readFileSync('/proc/self/limits', 'utf8') } catch { return out }
  for (const [key, row] of Object.entries(RLIMIT_ROWS) as Array<[keyof ProcessLimits, string]>) {
    const line = text.split('\n').find(l => l.startsWith(row))
    const hard = line?.slice(row.length).trim().split(/\s+/)[1]
    if (hard != null && /^\d+$/.test(hard)) out[key] = Number(hard)
  }
  return out
}

/** The first executable of `names`, or undefined. */
export function findTool (paths: string[]): string | undefined {
  for (const p of paths) {
    try { accessSync(p, constants.X_OK); return p } catch {}
  }
  return undefined
}

const PRLIMIT = findTool(['/usr/bin/prlimit', '/bin/prlimit'])

/** The limits cut to our own hard limits, whole numbers, at least 1. */
export function effectiveLimits (limits: ProcessLimits): ProcessLimits {
  const hard = hardLimits()
  const out: ProcessLimits = {}
  for (const key of Object.keys(RLIMIT_ROWS) as Array<keyof ProcessLimits>) {
    const want = limits[key]
    if (want == null || !Number.isFinite(want)) continue
    out[key] = Math.max(1, Math.min(Math.floor(want), hard[key] ?? Number.MAX_SAFE_INTEGER))
  }
  return out
}

export interface LimitWrapping {
  /** argv placed in front of the command (prlimit …), or empty */
  prefix: string[]
  /** shell lines run before exec where prlimit is absent (ulimit …) */
  shell: string
  /** which tool set them, for logs */
  via: 'prlimit' | 'ulimit'
}

/**
 * How to apply `limits` to the command. With prlimit every limit is set in bytes; the `ulimit`
 * fallback sets CPU time, file size (512-byte blocks) and address space (KiB), not the process
 * count (its flag differs between shells).
 */
export function limitWrapping (limits: ProcessLimits, prlimit = PRLIMIT): LimitWrapping {
  const l = effectiveLimits(limits)
  if (prlimit != null) {
    const prefix = [prlimit]
    if (l.cpuSeconds != null) prefix.push(`--cpu=${l.cpuSeconds}:${l.cpuSeconds + 5}`)
    if (l.fileBytes != null) prefix.push(`--fsize=${l.fileBytes}`)
    if (l.processes != null) prefix.push(`--nproc=${l.processes}`)
    if (l.addressSpaceBytes != null) prefix.push(`--as=${l.addressSpaceBytes}`)
    prefix.push('--')
    return { prefix: prefix.length > 2 ? prefix : [], shell: '', via: 'prlimit' }
  }
  const lines: string[] = []
  if (l.cpuSeconds != null) lines.push(`ulimit -t ${l.cpuSeconds}`)
  if (l.fileBytes != null) lines.push(`ulimit -f ${Math.max(1, Math.floor(l.fileBytes / 512))}`)
  if (l.addressSpaceBytes != null) lines.push(`ulimit -v ${Math.max(1, Math.floor(l.addressSpaceBytes / 1024))}`)
  return { prefix: [], shell: lines.map(s => `${s} || exit 125`).join('\n'), via: 'ulimit' }
}
