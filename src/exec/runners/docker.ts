import { randomBytes } from 'node:crypto'
import { spawn } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { imageAllowed } from '../../capability/index.js'
import { ExecError } from '../errors.js'
import { DEFAULT_CONTAINER_USER, parseContainerUser, prepareWorkDir } from './container-user.js'
import { watchDiskUse } from './disk-watch.js'
import { ClientErrors, dockerCall, dockerClientEnv, engineFailure, inspectContainer, removeContainer } from './docker-client.js'
import { checkJobEnv, jobVariables } from './environment.js'
import { JobLauncher } from './launcher.js'
import { createServiceNetwork, serviceEndpoint, sweepOwner, type EngineAccess } from './service-network.js'
import { signalGroup, supervise } from './supervise.js'
import { runGpus, type LogLine, type RunGpu, type RunHandle, type RunOutcome, type Runner, type RunSpec, type ServiceNetwork } from './types.js'

/** Where the work dir appears inside the container. */
export const CONTAINER_WORK_DIR = '/job'
/** Memory limit when neither the job nor the provider names one. */
export const DEFAULT_MEMORY_MIB = 16 * 1024
/** The most shared memory (/dev/shm) a job may ask for when the provider names no bound, MiB. */
export const DEFAULT_MAX_SHM_MIB = 4096
/** Processes and threads a container may have at once. */
export const DEFAULT_PIDS_LIMIT = 1024
/** Size of a file the job may write when the provider names no disk share (1 GiB). */
export const DEFAULT_FILE_BYTES = 1024 * 1024 * 1024
const IMAGE_REF = /^[a-z0-9][a-z0-9._\-/:@]*$/i
/** After `docker kill`, how long the client may take to report the container's end before it is killed too. */
const CLIENT_KILL_WAIT_MS = 5_000

export type PullPolicy = 'missing' | 'never'

export interface DockerRunnerOptions {
  /** the provider's image allow-list (entries may end in `*`); empty: no image is allowed */
  allowedImages: readonly string[]
  /** whether the provider's policy lets jobs have a network; default false */
  allowNetwork?: boolean
  /** memory limit, MiB, default DEFAULT_MEMORY_MIB */
  memoryMib?: number
  /**
   * the most /dev/shm a job may ask for, MiB, default DEFAULT_MAX_SHM_MIB (never above the memory
   * limit: it counts against it)
   */
  maxShmMiB?: number
  /** CPUs a container may use (`--cpus`), default all of this machine's */
  cpus?: number
  /** `--pids-limit`, default DEFAULT_PIDS_LIMIT */
  pidsLimit?: number
  /** docker CLI binary, default "docker" */
  docker?: string
  /** the engine's address (DOCKER_HOST); default the provider's DOCKER_HOST, else the client's default */
  host?: string
  /** numeric uid:gid the job runs as in the container, default DEFAULT_CONTAINER_USER; never 0 */
  user?: string
  /** fetch a missing allowed image at run time (missing, docker's default) or only run what the engine has (never) */
  pull?: PullPolicy
  /**
   * who runs these containers (a provider's work root, hashed): each container and lease network
   * is labelled with it, and open() removes what an earlier run of the same provider left (one
   * SIGKILLed cannot remove its containers, and a lease's would serve on for nobody)
   */
  owner?: string
  /**
   * run the docker client from a small helper process (launcher.ts; default one of its own): false
   * forks the provider itself
   */
  launcher?: boolean | JobLauncher
}

/** The container name of a run: unique, so a stop never reaches another job. */
export function containerName (jobId: string): string {
  return `idlegrid-${jobId.slice(0, 32)}-${randomBytes(4).toString('hex')}`
}

/**
 * The `docker run` argv (without the binary) for a job: the slot's GPU only, no network unless
 * allowed (a service lease: its own internal network, service-network.ts), read-only root with the
 * work dir bound writable at /job, an unprivileged user, no capabilities and no privilege gain,
 * memory, CPU, process and file-size limits, no log kept by the engine (the provider reads the
 * output as it comes), the job's environment only. The container is not `--rm`: the runner inspects
 * how it ended, then removes it.
 */
export function dockerRunArgs (spec: RunSpec, name: string, opts: DockerRunnerOptions): string[] {
  if (spec.image == null || spec.image === '') throw new ExecError('ERR_RUNNER', 'the docker runner needs an image')
  const memoryMib = Math.max(64, Math.floor(spec.memoryMib ?? opts.memoryMib ?? DEFAULT_MEMORY_MIB))
  const network = spec.service?.network ?? (spec.network === true && opts.allowNetwork === true ? 'bridge' : 'none')
  const cpus = Math.max(0.01, opts.cpus ?? availableParallelism())
  const fileBytes = Math.max(1, Math.floor(spec.diskBytes ?? DEFAULT_FILE_BYTES))
  const user = opts.user ?? DEFAULT_CONTAINER_USER
  parseContainerUser(user)
  const args = [
    'run', '--name', name, '--label', `idlegrid.job=${spec.jobId}`,
    ...(opts.owner != null ? ['--label', `idlegrid.owner=${opts.owner}`] : []),
    '--pull', opts.pull ?? 'missing',
    '--init',
    '--user', user,
    // /tmp lives in memory and counts against the memory limit
    '--read-only', '--tmpfs', `/tmp:rw,nosuid,nodev,size=${Math.min(memoryMib, 1024)}m`,
    '--mount', `type=bind,source=${spec.workDir},target=${CONTAINER_WORK_DIR}`,
    '--workdir', CONTAINER_WORK_DIR,
    '--network', network,
    '--memory', `${memoryMib}m`, '--memory-swap', `${memoryMib}m`,
    '--cpus', String(Number(cpus.toFixed(2))),
    '--pids-limit', String(opts.pidsLimit ?? DEFAULT_PIDS_LIMIT),
    // no single file past the job's disk share; the work dir as a whole is watched (disk-watch.ts)
    '--ulimit', `fsize=${fileBytes}`,
    '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges',
    '--log-driver', 'none',
    '--stop-timeout', String(Math.max(1, Math.ceil(spec.graceMs / 1000)))
  ]
  // /dev/shm lives in memory too (PyTorch's data loaders want more than Docker's 64 MiB)
  if (spec.shmSizeMiB != null) args.push('--shm-size', `${Math.floor(spec.shmSizeMiB)}m`)
  // every GPU of the job by UUID; docker reads --gpus as CSV, so a list of several is quoted whole
  const real = runGpus(spec).filter(g => !g.simulated)
  if (real.length === 1) args.push('--gpus', `device=${(real[0] as RunGpu).uuid}`)
  else if (real.length > 1) args.push('--gpus', `"device=${real.map(g => g.uuid).join(',')}"`)
  const env = { HOME: CONTAINER_WORK_DIR, ...spec.env, ...jobVariables(spec, CONTAINER_WORK_DIR) }
  for (const [key, value] of Object.entries(env)) args.push('--env', `${key}=${value}`)
  args.push('--', spec.image, ...spec.command)
  return args
}

/** Runs jobs in containers with `docker run`; the default runner. */
export class DockerRunner implements Runner {
  readonly kind = 'docker' as const
  private readonly opts: DockerRunnerOptions
  private readonly launcher?: JobLauncher

  constructor (opts: DockerRunnerOptions) {
    if (opts.user != null) parseContainerUser(opts.user)
    this.opts = opts
    if (opts.launcher !== false) {
      this.launcher = opts.launcher instanceof JobLauncher ? opts.launcher : new JobLauncher()
    }
  }

  /** The launcher's one fork of the provider now, while it is small. */
  open (): void {
    this.launcher?.start()
    if (this.opts.owner != null) this.swept = sweepOwner(this.engine(), this.opts.owner)
  }

  /** what open() found and removed of an earlier run (containers, lease networks) */
  swept?: Promise<{ containers: number, networks: number }>

  /** Ends the launcher's process (the provider stops); a later job starts it again. */
  close (): void {
    this.launcher?.stop()
  }

  check (spec: RunSpec): void {
    const image = spec.image ?? ''
    if (image === '') throw new ExecError('ERR_RUNNER', 'the docker runner needs an image')
    if (!IMAGE_REF.test(image) || image.length > 256) throw new ExecError('ERR_RUNNER', `"${image.slice(0, 80)}" is not an image reference`)
    if (!imageAllowed(this.opts.allowedImages, image)) throw new ExecError('ERR_RUNNER', `image ${image} is not on this provider's allow-list`)
    if (spec.network === true && this.opts.allowNetwork !== true) throw new ExecError('ERR_RUNNER', 'this provider gives jobs no network')
    if (spec.shmSizeMiB != null) {
      const max = Math.min(
        this.opts.maxShmMiB ?? DEFAULT_MAX_SHM_MIB,
        Math.floor(spec.memoryMib ?? this.opts.memoryMib ?? DEFAULT_MEMORY_MIB)
      )
      if (!Number.isInteger(spec.shmSizeMiB) || spec.shmSizeMiB < 1) throw new ExecError('ERR_RUNNER', `shared memory of ${spec.shmSizeMiB} MiB is not a whole number of MiB`)
      if (spec.shmSizeMiB > max) throw new ExecError('ERR_RUNNER', `shared memory of ${spec.shmSizeMiB} MiB is over this provider's bound of ${max} MiB`)
    }
    checkJobEnv(spec.env)
  }

  /** A service lease's own network (internal, no route out; service-network.ts). */
  async openServiceNetwork (jobId: string): Promise<ServiceNetwork> {
    return await createServiceNetwork(this.engine(), jobId, this.opts.owner)
  }

  private engine (): EngineAccess {
    return { docker: this.opts.docker ?? 'docker', env: dockerClientEnv(this.opts.host), launcher: this.launcher }
  }

  start (spec: RunSpec, onLog: (line: LogLine) => void): RunHandle {
    this.check(spec)
    const docker = this.opts.docker ?? 'docker'
    const name = containerName(spec.jobId)
    const args = dockerRunArgs(spec, name, this.opts)
    const env = dockerClientEnv(this.opts.host)
    const user = parseContainerUser(this.opts.user ?? DEFAULT_CONTAINER_USER)
    const launcher = this.launcher
    const dockerCommand = (...more: string[]): void => { void dockerCall(docker, more, env, launcher) }
    // the client's complaints, should the container never start
    const clientErrors = new ClientErrors()
    let stopWatching = (): void => {}
    const handle = supervise(spec, line => {
      if (line.stream === 'stderr') clientErrors.push(line.line)
      onLog(line)
    }, () => {
      prepareWorkDir(spec.workDir, user)
      const child = launcher != null
        ? launcher.spawn(docker, args, { detached: true, env, stdin: 'ignore' })
        : spawn(docker, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env })
      if (spec.diskBytes != null) {
        stopWatching = watchDiskUse(spec.workDir, spec.diskBytes, detail => {
          handle.cancel(detail)
        })
      }
      return {
        child,
        terminate: () => { dockerCommand('kill', '--signal', 'SIGTERM', name) },
        kill: () => {
          dockerCommand('kill', name)
          // the client reports the container's end; only one that hangs on is killed itself
          setTimeout(() => { if (child.exitCode == null && child.signalCode == null) signalGroup(child.pid, 'SIGKILL') }, CLIENT_KILL_WAIT_MS).unref()
        }
      }
    })
    const done = handle.done.then(async outcome => {
      stopWatching()
      return await this.settle(outcome, { docker, name, env, image: spec.image ?? '', clientErrors })
    })
    const run: RunHandle = { startedAt: handle.startedAt, preempt: handle.preempt, cancel: handle.cancel, done }
    const service = spec.service
    if (service?.network != null) {
      let ended = false
      done.then(() => { ended = true }, () => { ended = true })
      const network = service.network
      run.endpoint = async () =>
        await serviceEndpoint({ docker, env, launcher }, { name, network, port: service.port, stopped: () => ended })
    }
    return run
  }

  /**
   * How the run really ended, from the engine: a container that was never made or never
   * started is FAILED with the engine's reason (never COMPLETED with no outputs), one killed
   * for memory is FAILED, otherwise the exit code is the container's. Then it is removed.
   */
  private async settle (
    outcome: RunOutcome,
    run: { docker: string, name: string, env: Record<string, string>, image: string, clientErrors: ClientErrors }
  ): Promise<RunOutcome> {
    // the client itself could not be run (or the work dir not prepared): no container was asked for
    if (outcome.status === 'failed' && outcome.exitCode === -1 && /^(could not start|could not run|command not found)/.test(outcome.detail ?? '')) {
      return { ...outcome, detail: outcome.detail?.startsWith('command not found') === true ? `the docker client (${run.docker}) is not installed on this provider` : outcome.detail }
    }
    const state = await inspectContainer(run.docker, run.name, run.env, this.launcher)
    await removeContainer(run.docker, run.name, run.env, this.launcher)
    if (state == null) {
      return { ...outcome, status: 'failed', exitCode: -1, detail: engineFailure(run.clientErrors.text(), run.image, run.env.DOCKER_HOST) }
    }
    if (!state.started || state.error !== '') {
      return { ...outcome, status: 'failed', exitCode: -1, detail: `the container did not start: ${state.error !== '' ? state.error.slice(0, 300) : engineFailure(run.clientErrors.text(), run.image, run.env.DOCKER_HOST)}` }
    }
    // still running when asked: removeContainer just killed it (SIGKILL, 137 as docker counts)
    const exitCode = state.running ? 137 : state.exitCode
    if (outcome.status !== 'completed') return { ...outcome, exitCode }
    if (state.oomKilled) return { ...outcome, status: 'failed', exitCode, detail: 'the job ran out of memory (killed at its container\'s memory limit)' }
    if (exitCode === 127 && /tini.*exec .* failed/i.test(run.clientErrors.text())) {
      return { ...outcome, status: 'failed', exitCode, detail: `the job's command is not in image ${run.image}` }
    }
    return { ...outcome, exitCode }
  }
}
