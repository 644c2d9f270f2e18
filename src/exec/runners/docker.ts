import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { imageAllowed } from '../../capability/index.js'
import { RunnerError } from '../errors.js'
import { checkJobEnv, jobVariables } from './environment.js'
import { signalGroup, supervise } from './supervise.js'
import type { LogLine, RunHandle, Runner, RunSpec } from './types.js'

/** Where the work dir appears inside the container. */
export const CONTAINER_WORK_DIR = '/job'
/** Memory limit when neither the job nor the provider names one. */
export const DEFAULT_MEMORY_MIB = 16 * 1024
const IMAGE_REF = /^[a-z0-9][a-z0-9._\-/:@]*$/i

export interface DockerRunnerOptions {
  /** the provider's image allow-list (entries may end in `*`); empty: no image is allowed */
  allowedImages: readonly string[]
  /** whether the provider's policy lets jobs have a network; default false */
  allowNetwork?: boolean
  /** memory limit, MiB, default DEFAULT_MEMORY_MIB */
  memoryMib?: number
  /** docker CLI binary, default "docker" */
  docker?: string
  /** uid:gid the job runs as in the container, default the provider's own */
  user?: string
}

/** The container name of a run: unique, so a stop never reaches another job. */
export function containerName (jobId: string): string {
  return `idlegrid-${jobId.slice(0, 32)}-${randomBytes(4).toString('hex')}`
}

/**
 * The `docker run` argv (without the binary) for a job: removed after the run, the slot's
 * GPU only, no network unless allowed, read-only root with the work dir bound writable at
 * /job, memory and process limits, no capabilities, the job's environment only.
 */
export function dockerRunArgs (spec: RunSpec, name: string, opts: DockerRunnerOptions): string[] {
  if (spec.image == null || spec.image === '') throw new RunnerError('the docker runner needs an image')
  const memoryMib = Math.max(64, Math.floor(spec.memoryMib ?? opts.memoryMib ?? DEFAULT_MEMORY_MIB))
  const network = spec.network === true && opts.allowNetwork === true
  const args = [
    'run', '--rm', '--name', name, '--label', `idlegrid.job=${spec.jobId}`,
    '--init',
    '--read-only', '--tmpfs', '/tmp:rw,nosuid,nodev,size=1g',
    '--mount', `type=bind,source=${spec.workDir},target=${CONTAINER_WORK_DIR}`,
    '--workdir', CONTAINER_WORK_DIR,
    '--network', network ? 'bridge' : 'none',
    '--memory', `${memoryMib}m`, '--memory-swap', `${memoryMib}m`,
    '--pids-limit', '4096',
    '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges',
    '--stop-timeout', String(Math.max(1, Math.ceil(spec.graceMs / 1000)))
  ]
  if (opts.user != null) args.push('--user', opts.user)
  if (spec.gpu != null && !spec.gpu.simulated) args.push('--gpus', `device=${spec.gpu.uuid}`)
  const env = { HOME: CONTAINER_WORK_DIR, ...spec.env, ...jobVariables(spec, CONTAINER_WORK_DIR) }
  for (const [key, value] of Object.entries(env)) args.push('--env', `${key}=${value}`)
  args.push('--', spec.image, ...spec.command)
  return args
}

/** Runs jobs in containers with `docker run`; the default runner. */
export class DockerRunner implements Runner {
  readonly kind = 'docker' as const
  private readonly opts: DockerRunnerOptions

  constructor (opts: DockerRunnerOptions) {
    this.opts = opts
  }

  check (spec: RunSpec): void {
    const image = spec.image ?? ''
    if (image === '') throw new RunnerError('the docker runner needs an image')
    if (!IMAGE_REF.test(image) || image.length > 256) throw new RunnerError(`"${image.slice(0, 80)}" is not an image reference`)
    if (!imageAllowed(this.opts.allowedImages, image)) throw new RunnerError(`image ${image} is not on this provider's allow-list`)
    if (spec.network === true && this.opts.allowNetwork !== true) throw new RunnerError('this provider gives jobs no network')
    checkJobEnv(spec.env)
  }

  start (spec: RunSpec, onLog: (line: LogLine) => void): RunHandle {
    this.check(spec)
    const docker = this.opts.docker ?? 'docker'
    const name = containerName(spec.jobId)
    const args = dockerRunArgs(spec, name, this.opts)
    const dockerCommand = (...more: string[]): void => {
      const c = spawn(docker, more, { stdio: 'ignore', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } })
      c.once('error', () => {})
    }
    return supervise(spec, onLog, () => {
      // the docker client gets the provider's PATH (to find docker) but none of the job's secrets
      const child = spawn(docker, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' } })
      return {
        child,
        terminate: () => { dockerCommand('kill', '--signal', 'SIGTERM', name) },
        kill: () => {
          dockerCommand('kill', name)
          signalGroup(child.pid, 'SIGKILL')
        }
      }
    })
  }
}
