import { availableParallelism } from 'node:os'
import { RunnerError } from '../errors.js'
import { DockerRunner, type PullPolicy } from './docker.js'
import { ProcessRunner } from './process.js'
import type { Runner, RunnerKind } from './types.js'
import type { ProviderProfile } from '../../capability/index.js'

/** How the provider's docker runner reaches its engine and whom its jobs run as (flags or config). */
export interface DockerSettings {
  /** engine address (DOCKER_HOST form); default the provider's DOCKER_HOST */
  host?: string
  /** numeric uid:gid of jobs in their containers; default 65534:65534 */
  user?: string
  /** missing (default) or never: only images the engine already has */
  pull?: PullPolicy
}

/**
 * The runner a provider chose, set up with its policy (docker: its image allow-list, its
 * engine and job user, and each container's share of this machine's CPUs: all of them over
 * its GPUs, at least one).
 */
export function makeRunner (kind: RunnerKind, profile: ProviderProfile, docker: DockerSettings = {}): Runner {
  switch (kind) {
    case 'process': return new ProcessRunner()
    case 'docker': return new DockerRunner({
      allowedImages: profile.policy.images,
      host: docker.host,
      user: docker.user,
      pull: docker.pull,
      cpus: Math.max(1, Math.floor(availableParallelism() / Math.max(1, profile.gpus.length)))
    })
    default: throw new RunnerError(`unknown runner "${String(kind)}": use docker or process`)
  }
}
