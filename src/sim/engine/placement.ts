/**
 * Where a job's run can go (engine.ts): the placement of a run, the node own work takes, and the
 * reasons no provider in the scenario could ever serve a job.
 */
import { MAX_JOB_GPUS, type TimeClass } from '../../market/index.js'
import type { Candidates } from './candidates.js'
import type { SimJob } from '../model/population.js'
import { SIM_MAX_JOB_MINUTES, type SimProvider } from '../model/provider.js'

/**
 * Where and how a job's run goes: its provider and slots, its price (micro-USD per GPU-hour, 0 for
 * own work) and start.
 */
export interface Placement {
  provider: SimProvider
  gpus: number
  price: number
  /** the owner's own work (takes slots as gold does, is not paid) */
  own: boolean
  timeClass: TimeClass
  start: number
}

/** Own work of `need` GPUs on a free node of `nodes`, else one whose bronze work it displaces. */
export function ownPlacement (
  providers: readonly SimProvider[],
  nodes: readonly number[],
  need: number,
  now: number
): Placement | undefined {
  let target: SimProvider | undefined
  let displacing = false
  for (const i of nodes) {
    const s = (providers[i] as SimProvider).scheduler
    const free = s.freeCount()
    if (free >= need) { target = providers[i]; displacing = false; break }
    if (target == null && free + s.preemptibleCount() >= need) { target = providers[i]; displacing = true }
  }
  if (target == null) return undefined
  return {
    provider: target,
    gpus: need,
    price: 0,
    own: true,
    timeClass: 'normal',
    start: now + (displacing ? target.scheduler.graceMs : 0)
  }
}

/** Reasons no provider in the scenario could ever serve the job (checked once, on arrival). */
export function refusalOf (job: SimJob, candidates: Candidates): string | undefined {
  if (job.task.durationMs > SIM_MAX_JOB_MINUTES * 60_000) return 'longer than any provider\'s max job length'
  const most = candidates.mostGpus(job)
  if (most == null) return 'no provider has the GPU model in the residency zone'
  if (job.task.gpus > MAX_JOB_GPUS) return `multi-gpu: more than ${MAX_JOB_GPUS} GPUs, the most one job request may ask`
  if (most < job.task.gpus) return 'multi-gpu: no provider has that many GPUs of the model in the residency zone'
  return undefined
}
