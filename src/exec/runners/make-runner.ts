import { availableParallelism } from 'node:os'
import { ExecError } from '../errors.js'
import { DockerRunner, type PullPolicy } from './docker.js'
import type { JobLauncher } from './launcher.js'
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
  /** the most /dev/shm a job may ask for, MiB (default DEFAULT_MAX_SHM_MIB) */
  maxShmMiB?: number
}

export interface RunnerSetup {
  /**
   * process runner: `--job-user` (NAME, UID[:GID] or FIRST-LAST); default one uid per job from
   * DEFAULT_JOB_UIDS when root
   */
  jobUser?: string
  /** process runner: largest file a job may write, bytes (its share of the provider's disk) */
  fileBytes?: number
  /** docker runner: engine, job user, pull policy */
  docker?: DockerSettings
  /** docker runner: who owns its containers (the provider's work root, hashed; see DockerRunnerOptions.owner) */
  owner?: string
  /** the launcher its processes start from (default one of the runner's own) */
  launcher?: JobLauncher
}

/**
 * The runner a provider chose, set up with its policy. docker: its image allow-list, its
 * engine and job user, and each container's share of this machine's CPUs (all of them over
 * its GPUs, at least one). process: the job user and the limits per slot.
 */
export function makeRunner (kind: RunnerKind, profile: ProviderProfile, setup: RunnerSetup = {}): Runner {
  switch (kind) {
    case 'process': return new ProcessRunner({ jobUser: setup.jobUser, concurrentJobs: profile.gpus.length, limits: { fileBytes: setup.fileBytes }, launcher: setup.launcher })
    case 'docker': return new DockerRunner({
      allowedImages: profile.policy.images,
      host: setup.docker?.host,
      user: setup.docker?.user,
      pull: setup.docker?.pull,
      maxShmMiB: setup.docker?.maxShmMiB,
      owner: setup.owner,
      launcher: setup.launcher,
      cpus: Math.max(1, Math.floor(availableParallelism() / Math.max(1, profile.gpus.length)))
    })
    default: throw new ExecError('ERR_RUNNER', `unknown runner "${String(kind)}": use docker or process`)
  }
}
