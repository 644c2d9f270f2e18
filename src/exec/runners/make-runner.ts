import { RunnerError } from '../errors.js'
import { DockerRunner } from './docker.js'
import { ProcessRunner } from './process.js'
import type { Runner, RunnerKind } from './types.js'
import type { ProviderProfile } from '../../capability/index.js'

export interface RunnerSetup {
  /** process runner: `--job-user` (NAME, UID[:GID] or FIRST-LAST); default nobody when root */
  jobUser?: string
  /** process runner: largest file a job may write, bytes (its share of the provider's disk) */
  fileBytes?: number
}

/** The runner a provider chose, set up with its policy (docker: its image allow-list; process: job user and limits per slot). */
export function makeRunner (kind: RunnerKind, profile: ProviderProfile, setup: RunnerSetup = {}): Runner {
  switch (kind) {
    case 'process': return new ProcessRunner({ jobUser: setup.jobUser, concurrentJobs: profile.gpus.length, limits: { fileBytes: setup.fileBytes } })
    case 'docker': return new DockerRunner({ allowedImages: profile.policy.images })
    default: throw new RunnerError(`unknown runner "${String(kind)}": use docker or process`)
  }
}
