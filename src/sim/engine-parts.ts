/** The simulation engine's records and small helpers (engine.ts): job and run state, events, options. */

import type { Lease } from '../exec/provider/slot-lease.js'
import type { TimeClass } from '../market/provider/pricing.js'
import type { LatencyModel } from './latency.js'
import type { SimJob } from './population.js'
import type { SimProvider } from './provider.js'
import type { RunOutcome } from './reputation-book.js'
import type { Rng } from './rng.js'
import type { SimData } from './data-cache.js'

export type Mode = 'market' | 'baseline'

export interface JobState {
  job: SimJob
  index: number
  attempt: number
  rounds: number
  deadline: number
  firstStart: number
  /** providers this job failed on (made on the first failure: most jobs never fail) */
  exclude: Set<string> | undefined
  lastReason: string
}

export interface Run {
  js: JobState
  provider: SimProvider
  leases: Lease[]
  start: number
  /** micro-USD per GPU-hour; 0 for own work */
  price: number
  own: boolean
  timeClass: TimeClass
  state: 'pending' | 'running' | 'over'
  outcome: RunOutcome
  end: number
}

export type Event =
  | { k: 'auction', js: JobState }
  | { k: 'start', run: Run }
  | { k: 'end', run: Run }
  | { k: 'release', lease: Lease, provider: SimProvider }
  | { k: 'sybil' }
  | { k: 'window', provider: SimProvider }

export interface RunRecord { provider: number, gpu: number, start: number, end: number }

export interface EngineOptions {
  mode: Mode
  latency: LatencyModel
  rng: Rng
  horizonMs: number
  onProgress?: (done: number) => void
  /** keep every run's [start, end) per GPU (tests check for double booking) */
  recordRuns?: boolean
  /** the data model (data-cache.ts): market awards move the inputs their winner lacks before the run starts */
  data?: SimData
}

export const renterBytes = new Uint8Array(38)
export const NO_EXCLUSIONS: ReadonlySet<string> = new Set()
/** a task of several GPUs draws this many times the candidates, then keeps those with room */
export const MULTI_GPU_DRAW = 4

export function jobIdOf (index: number): Uint8Array {
  // big-endian index in the last four bytes (no DataView: this runs once per auction)
  const id = new Uint8Array(16)
  id[12] = index >>> 24
  id[13] = (index >>> 16) & 255
  id[14] = (index >>> 8) & 255
  id[15] = index & 255
  return id
}

/** The job index jobIdOf wrote into a job id. */
export function jobIndexOf (id: Uint8Array): number {
  return (((id[12] ?? 0) << 24) | ((id[13] ?? 0) << 16) | ((id[14] ?? 0) << 8) | (id[15] ?? 0)) >>> 0
}

export function topReason (declines: Record<string, number>, dropped: Record<string, number>, asked: number): string {
  if (asked === 0) return 'no provider with a free GPU'
  const all = [...Object.entries(declines), ...Object.entries(dropped).map(([k, v]) => [`dropped ${k}`, v] as [string, number])]
  all.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
  return all[0]?.[0] ?? 'no bids'
}
