/**
 * A trace resampled to any size, as the openb paper builds its workloads (its tasks are too
 * few to load its own cluster: ~60,000 GPU-hours against 6,212 GPUs over 149 days). Nodes are
 * the trace's own, or drawn from them (its GPU-model and GPUs-per-node mix); jobs from its finished tasks (GPUs, share,
 * model constraint, QoS and run time kept together, so their correlations stay), arriving as
 * a Poisson process over `spanDays`. Tasks cut at the trace end are not drawn: their run time
 * is only a lower bound.
 */

import { SimError } from '../errors.js'
import type { Rng } from './rng.js'
import type { Trace, TraceTask } from './trace.js'

export function resampleTrace (
  trace: Trace,
  spec: { providers: number, jobs: number, spanDays: number },
  rng: Rng
): Trace {
  const finished = trace.tasks.filter(t => !t.cut)
  if (trace.nodes.length === 0 || finished.length === 0) throw new SimError('ERR_SIM_TRACE', 'the trace has no nodes or no finished tasks to resample')
  // providers 0: the trace's own nodes, as they are
  const nodes = spec.providers === 0 ? trace.nodes : Array.from({ length: spec.providers }, (_, i) => ({ ...rng.pick(trace.nodes), name: `syn-node-${i}` }))
  const spanMs = spec.spanDays * 24 * 3600_000
  const gap = spanMs / spec.jobs
  const tasks: TraceTask[] = new Array(spec.jobs)
  let t = 0
  for (let i = 0; i < spec.jobs; i++) {
    t += rng.exponential(gap)
    const s = rng.pick(finished)
    tasks[i] = {
      id: i,
      arrivalMs: Math.min(Math.round(t), spanMs),
      durationMs: s.durationMs,
      gpus: s.gpus,
      gpuMilli: s.gpuMilli,
      models: s.models,
      qos: s.qos,
      cut: false
    }
  }
  return { nodes, tasks, spanMs, cpuOnlyLeftOut: trace.cpuOnlyLeftOut, pendingLeftOut: trace.pendingLeftOut }
}
