/** `idlegrid doctor`: which checks a role needs, run in order. */
import { isNodeRunning } from '../control/index.js'
import type { NodeConfig, Role } from '../config/index.js'
import { warn, type CheckResult } from './check.js'
import { checkDataDir, checkDisk, checkDocker, checkGpus, checkListenPorts, checkNodeVersion, DISK_LIMITS, type DiskLimits } from './local-checks.js'
import { checkNetwork } from './network-checks.js'
import { checkReachability } from './reach-check.js'

export interface DoctorOptions {
  config: NodeConfig
  /** provider: nvidia-smi path (--nvidia-smi / provider.nvidiaSmi) */
  nvidiaSmi?: string
  /** provider: docker CLI and engine (--docker-host / provider.dockerHost) */
  docker?: string
  dockerHost?: string
  /** provider.simulateGpu of the config: no driver needed, but jobs that need CUDA will fail */
  simulateGpu?: string[]
  /** provider runs jobs as processes: no Docker needed */
  runner?: 'docker' | 'process'
  /** seconds to listen for heartbeats for the clock check */
  waitMs?: number
  /** leave out the network checks (bootstrap reachability, clock) */
  offline?: boolean
  /** tests: another Node version or disk limits */
  nodeVersion?: string
  disk?: DiskLimits
}

/** Runs every check for the config's role; a check never throws, it reports. */
export async function runDoctor (opts: DoctorOptions): Promise<CheckResult[]> {
  const { config } = opts
  const role: Role = config.role
  const results: CheckResult[] = [checkNodeVersion(opts.nodeVersion)]
  if (role === 'provider') {
    results.push(opts.simulateGpu != null && opts.simulateGpu.length > 0
      ? warn('gpu', `simulated GPUs (${opts.simulateGpu.join(', ')}): a development setup; jobs that need CUDA fail`, 'on a GPU box remove provider.simulateGpu from the config')
      : await checkGpus(opts.nvidiaSmi))
    if (opts.runner !== 'process') results.push(...await checkDocker({ docker: opts.docker, host: opts.dockerHost }))
  }
  results.push(await checkDataDir(config.dataDir))
  results.push(await checkDisk(config.dataDir, opts.disk ?? DISK_LIMITS[role === 'provider' ? 'provider' : 'other']))
  const running = await isNodeRunning(config.dataDir).catch(() => false)
  results.push(await checkListenPorts(config.listen, running))
  if (opts.offline !== true) {
    results.push(...await checkNetwork(config, { waitMs: opts.waitMs }))
    if (config.role !== 'bootstrap' || running) results.push(await checkReachability(config, running))
  }
  return results
}
