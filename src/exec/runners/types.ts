/** What every runner (process, docker) offers: start a job's command, stream its log, stop it. */

export type RunnerKind = 'process' | 'docker'
export const RUNNER_KINDS: readonly RunnerKind[] = ['process', 'docker']

/** How a run ended; the names of JobStatus on the wire. */
export type RunStatus = 'completed' | 'failed' | 'timeout' | 'preempted'

export interface RunGpu {
  /** nvidia-smi index */
  index: number
  /** `GPU-…` as nvidia-smi prints it; stays on the provider */
  uuid: string
  simulated: boolean
}

/** Every GPU a run gets: `spec.gpus`, else its one `spec.gpu`, else none. */
export function runGpus (spec: Pick<RunSpec, 'gpu' | 'gpus'>): readonly RunGpu[] {
  if (spec.gpus != null && spec.gpus.length > 0) return spec.gpus
  return spec.gpu == null ? [] : [spec.gpu]
}

export interface RunSpec {
  /** hex job id, for names and the IDLEGRID_JOB_ID variable */
  jobId: string
  /** the job's fresh work dir; holds inputs/ (what the renter sent) and outputs/ (what comes back) */
  workDir: string
  /** argv; for docker, the command run in the image (empty: the image's own) */
  command: string[]
  /** container image (docker runner only) */
  image?: string
  /** the job's own variables from the renter; the provider's are never added */
  env: Record<string, string>
  /** wall-clock limit, ms */
  timeoutMs: number
  /** SIGTERM-to-SIGKILL notice on timeout and preemption, ms */
  graceMs: number
  /** the slot's GPU: the first of `gpus` */
  gpu?: RunGpu
  /** every GPU of a multi-GPU job, `gpu` first (absent: `gpu` alone); read through runGpus() */
  gpus?: readonly RunGpu[]
  /**
   * bytes the job may hold in its work dir, inputs included: the disk share the provider
   * reserved for it (docker: no file larger, and the run is stopped past it)
   */
  diskBytes?: number
  /** container memory limit, MiB (docker) */
  memoryMib?: number
  /** give the container a network (docker; default none) */
  network?: boolean
  /**
   * shared memory (/dev/shm) of the container, MiB (docker; default the engine's 64 MiB; the
   * process runner has the host's)
   */
  shmSizeMiB?: number
  /**
   * a service lease: it listens on `port`; under docker in `network`, the lease's own network
   * with no route out (Runner.openServiceNetwork), where the provider reaches it at its address
   */
  service?: { port: number, network?: string }
}

/** Where the provider reaches a service lease's port. */
export interface ServiceEndpoint { host: string, port: number }

/** A network of one service lease's own (docker); removed once the lease's run has ended. */
export interface ServiceNetwork {
  readonly name: string
  remove(): Promise<void>
}

export interface LogLine {
  stream: 'stdout' | 'stderr'
  /** without its newline, at most MAX_LOG_LINE_CHARS */
  line: string
  at: number
}

export interface RunOutcome {
  status: RunStatus
  /** exit code; negative: killed by signal -N; -1 when it never started */
  exitCode: number
  startedAt: number
  endedAt: number
  /** why it failed or was stopped, for logs */
  detail?: string
}

export interface RunHandle {
  readonly startedAt: number
  /** stops the job with notice: SIGTERM, `graceMs`, then SIGKILL; it ends `preempted` */
  preempt(graceMs?: number, detail?: string): void
  /** stops the job at once (renter gone, provider shutting down); it ends `failed` */
  cancel(detail?: string): void
  readonly done: Promise<RunOutcome>
  /** a service lease: where its port is reached, once the run has its address (default 127.0.0.1) */
  endpoint?: () => Promise<ServiceEndpoint>
}

export interface Runner {
  readonly kind: RunnerKind
  /** makes (or checks) the root under which job work dirs are made, with the permissions this runner needs */
  prepareWorkRoot?(root: string): Promise<void>
  /** throws ExecError ERR_RUNNER when the provider's policy does not allow this spec */
  check(spec: RunSpec): void
  /**
   * a service lease's own network, made before its run (docker: internal, no route out); none: the
   * lease listens on 127.0.0.1
   */
  openServiceNetwork?(jobId: string): Promise<ServiceNetwork>
  /** starts the job; `onLog` gets each output line as it is read */
  start(spec: RunSpec, onLog: (line: LogLine) => void): RunHandle
  /** the provider starts, as small as it will be: the runner takes what it holds between jobs (its launcher) */
  open?(): void
  /** lets go of what the runner holds between jobs (the provider stops; a later job takes it again) */
  close?(): void
}
