/**
 * The Alibaba openb trace (cluster-trace-gpu-v2023; examples/data/alibaba-gpu/README.md):
 * GPU nodes (the supply) and tasks (the demand), read from its two CSV files.
 *
 * How rows become simulator input (documented in examples/sim/README.md):
 * - run time = deletion_time − scheduled_time; tasks still `Running` at the end are cut there
 *   (their deletion_time is the trace end) and flagged `cut`;
 * - `Pending` tasks were never scheduled, so their run time is unknown: they are left out and
 *   counted (pendingLeftOut); CPU-only tasks (num_gpu 0) are not GPU demand: counted, left out;
 * - arrival = creation_time; `gpu_spec` (e.g. "V100M16|V100M32") becomes the job's GPU-model
 *   constraint; a GPU-sharing task (gpu_milli < 1000) still takes one whole GPU slot, because
 *   a provider's slot is one GPU (exec/provider/scheduler.ts); its share is kept for the report.
 */

import { readFile } from 'node:fs/promises'
import { SimError } from '../errors.js'

export type Qos = 'LS' | 'BE' | 'Burstable' | 'Guaranteed'

/** A trace GPU code, the model key a provider advertises for it, and its memory (G2/G3 are undisclosed: assumed). */
export const TRACE_GPU: Record<string, { modelKey: string, vramMib: number }> = {
  P100: { modelKey: 'p100-16gb', vramMib: 16_384 },
  T4: { modelKey: 't4-16gb', vramMib: 16_384 },
  V100M16: { modelKey: 'v100-16gb', vramMib: 16_384 },
  V100M32: { modelKey: 'v100-32gb', vramMib: 32_768 },
  A10: { modelKey: 'a10-24gb', vramMib: 24_576 },
  G2: { modelKey: 'g2', vramMib: 16_384 },
  G3: { modelKey: 'g3', vramMib: 32_768 }
}

export interface TraceNode {
  name: string
  gpus: number
  /** trace GPU code, a key of TRACE_GPU */
  model: string
}

export interface TraceTask {
  id: number
  /** ms from the trace start */
  arrivalMs: number
  durationMs: number
  gpus: number
  /** share of one GPU, 1..1000 (1000: a whole GPU) */
  gpuMilli: number
  /** allowed trace GPU codes; empty: any */
  models: string[]
  qos: Qos
  /** still running at the trace end: the run time is a lower bound */
  cut: boolean
}

export interface Trace {
  nodes: TraceNode[]
  tasks: TraceTask[]
  /** ms from the first arrival to the trace end */
  spanMs: number
  cpuOnlyLeftOut: number
  pendingLeftOut: number
}

/** Parses a simple CSV (no quoted fields, as in the trace) into rows keyed by header. */
export function parseCsv (text: string, file: string, need: readonly string[]): Array<Record<string, string>> {
  const lines = text.split(/\r?\n/).filter(l => l.trim() !== '')
  const header = (lines[0] ?? '').split(',').map(h => h.trim())
  const missing = need.filter(n => !header.includes(n))
  if (missing.length > 0) throw new SimError('ERR_SIM_TRACE', `${file}: missing column(s) ${missing.join(', ')} (has ${header.join(', ')})`)
  return lines.slice(1).map(line => {
    const cells = line.split(',')
    const row: Record<string, string> = {}
    header.forEach((h, i) => { row[h] = (cells[i] ?? '').trim() })
    return row
  })
}

function int (row: Record<string, string>, key: string, file: string, line: number): number {
  const v = Number(row[key])
  if (!Number.isInteger(v) || v < 0) throw new SimError('ERR_SIM_TRACE', `${file} row ${line}: ${key} must be a whole number ≥ 0, got "${row[key] ?? ''}"`)
  return v
}

export function parseNodes (text: string, file: string): TraceNode[] {
  return parseCsv(text, file, ['sn', 'gpu', 'model']).map((row, i) => {
    const model = row.model ?? ''
    if (TRACE_GPU[model] == null) throw new SimError('ERR_SIM_TRACE', `${file} row ${i + 2}: unknown GPU model "${model}" (known: ${Object.keys(TRACE_GPU).join(', ')})`)
    return { name: row.sn ?? `node-${i}`, gpus: int(row, 'gpu', file, i + 2), model }
  }).filter(n => n.gpus > 0)
}

const QOS = new Set(['LS', 'BE', 'Burstable', 'Guaranteed'])

export function parseTasks (text: string, file: string): Omit<Trace, 'nodes'> {
  const rows = parseCsv(text, file, ['num_gpu', 'gpu_milli', 'gpu_spec', 'qos', 'pod_phase', 'creation_time', 'deletion_time', 'scheduled_time'])
  let end = 0
  for (const [i, row] of rows.entries()) end = Math.max(end, int(row, 'deletion_time', file, i + 2))
  const tasks: TraceTask[] = []
  let cpuOnlyLeftOut = 0
  let pendingLeftOut = 0
  let first = Infinity
  for (const [i, row] of rows.entries()) {
    const gpus = int(row, 'num_gpu', file, i + 2)
    if (gpus === 0) { cpuOnlyLeftOut++; continue }
    if ((row.scheduled_time ?? '') === '') { pendingLeftOut++; continue }
    const qos = row.qos ?? ''
    if (!QOS.has(qos)) throw new SimError('ERR_SIM_TRACE', `${file} row ${i + 2}: unknown qos "${qos}"`)
    const models = (row.gpu_spec ?? '').split('|').filter(m => m !== '')
    for (const m of models) if (TRACE_GPU[m] == null) throw new SimError('ERR_SIM_TRACE', `${file} row ${i + 2}: unknown GPU model "${m}" in gpu_spec`)
    const scheduled = int(row, 'scheduled_time', file, i + 2)
    const arrival = int(row, 'creation_time', file, i + 2)
    const deletion = int(row, 'deletion_time', file, i + 2)
    first = Math.min(first, arrival)
    tasks.push({
      id: tasks.length,
      arrivalMs: arrival * 1000,
      // at least a second: a zero-length run is no demand, and keeps the arithmetic finite
      durationMs: Math.max(1, deletion - scheduled) * 1000,
      gpus,
      gpuMilli: Math.min(1000, Math.max(1, Number(row.gpu_milli) || 1000)),
      models: [...new Set(models)],
      qos: qos as Qos,
      cut: row.pod_phase === 'Running'
    })
  }
  const startMs = Number.isFinite(first) ? first * 1000 : 0
  for (const t of tasks) t.arrivalMs -= startMs
  tasks.sort((a, b) => a.arrivalMs - b.arrivalMs || a.id - b.id)
  tasks.forEach((t, i) => { t.id = i })
  return { tasks, spanMs: Math.max(0, end * 1000 - startMs), cpuOnlyLeftOut, pendingLeftOut }
}

/** Reads the node and task files of an openb trace. */
export async function loadTrace (nodesFile: string, tasksFile: string): Promise<Trace> {
  const read = async (f: string): Promise<string> => {
    try {
      return await readFile(f, 'utf8')
    } catch (err: any) {
      throw new SimError('ERR_SIM_TRACE', `cannot read trace file ${f}: ${String(err?.message ?? err)}`)
    }
  }
  const nodes = parseNodes(await read(nodesFile), nodesFile)
  return { nodes, ...parseTasks(await read(tasksFile), tasksFile) }
}
