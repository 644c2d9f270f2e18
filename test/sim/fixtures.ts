/** Tiny traces and scenarios for the simulator's specs, written to a temp dir. */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseScenario, type Scenario } from '../../src/sim/index.js'

export const POD_HEADER = 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time'
export const NODE_HEADER = 'sn,cpu_milli,memory_mib,gpu,model'

/** A task row: arrival and run time in seconds. */
export function pod (
  i: number,
  qos: string,
  arrival: number,
  seconds: number,
  opts: { gpus?: number, spec?: string } = {}
): string {
  return `pod-${i},1000,1024,${opts.gpus ?? 1},1000,${opts.spec ?? ''},${qos},Succeeded,${arrival},${arrival + seconds},${arrival}`
}

export function node (i: number, gpus: number, model = 'T4'): string {
  return `node-${i},64000,262144,${gpus},${model}`
}

/** Writes the two CSVs into `dir` and returns a scenario over them. */
export async function tinyScenario (
  dir: string,
  nodes: string[],
  pods: string[],
  extra: Record<string, unknown> = {}
): Promise<Scenario> {
  await writeFile(join(dir, 'nodes.csv'), [NODE_HEADER, ...nodes].join('\n') + '\n')
  await writeFile(join(dir, 'pods.csv'), [POD_HEADER, ...pods].join('\n') + '\n')
  return parseScenario({ name: 'tiny', seed: 7, trace: { nodes: 'nodes.csv', tasks: 'pods.csv' }, report: { bucketMinutes: 10 }, ...extra }, dir)
}

/** A small random-ish workload: `n` tasks of mixed QoS over a few hours on `nodes` nodes. */
export function mixedPods (n: number): string[] {
  const qos = ['LS', 'BE', 'BE', 'Burstable', 'Guaranteed', 'LS']
  return Array.from({ length: n }, (_, i) => pod(i, qos[i % qos.length] as string, (i * 37) % 7200, 60 + ((i * 7919) % 5400), { gpus: i % 17 === 0 ? 2 : 1, spec: i % 5 === 0 ? 'T4' : i % 11 === 0 ? 'V100M32' : '' }))
}

export function mixedNodes (n: number): string[] {
  const models = ['T4', 'P100', 'V100M16', 'V100M32']
  return Array.from({ length: n }, (_, i) => node(i, 1 + (i % 4), models[i % models.length]))
}
