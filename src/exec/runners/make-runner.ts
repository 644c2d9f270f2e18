import { RunnerError } from '../errors.js'
import { DockerRunner } from './docker.js'
import { ProcessRunner } from './process.js'
import type { Runner, RunnerKind } from './types.js'
import type { ProviderProfile } from '../../capability/index.js'

/** The runner a provider chose, set up with its policy (docker: its image allow-list). */
export function makeRunner (kind: RunnerKind, profile: ProviderProfile): Runner {
  switch (kind) {
    case 'process': return new ProcessRunner()
    case 'docker': return new DockerRunner({ allowedImages: profile.policy.images })
    default: throw new RunnerError(`unknown runner "${String(kind)}": use docker or process`)
  }
}
