import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { accessSync, constants, statSync } from 'node:fs'
import { availableParallelism, totalmem } from 'node:os'
import { ExecError } from '../errors.js'
import { JOB_PATH, processJobEnv } from './environment.js'
import { JobCgroup } from './job-cgroup.js'
import { findTool, limitWrapping } from './job-limits.js'
import { JobUserPool, planJobUser } from './job-user.js'
import { JobLauncher } from './launcher.js'
import { inProcessGroup, reapRun, RUN_MARKER, runProcesses, signalRun } from './proc-scan.js'
import { signalGroup, supervise, type ChildControl } from './supervise.js'
import { handOverWorkDir, prepareWorkRoot } from './work-dirs.js'
import { runGpus, type LogLine, type RunHandle, type Runner, type RunSpec } from './types.js'

const GiB = 1024 * 1024 * 1024
const SETPRIV = findTool(['/usr/bin/setpriv', '/bin/setpriv'])
/**
 * The job is SIGKILLed when the provider dies (setpriv's parent-death signal, util-linux ≥
 * 2.33): a provider killed outright cannot stop its jobs, and a job left running (a lease's
 * server runs for ever) would hold the GPU slot nobody accounts for any more.
 */
let pdeathsig: boolean | undefined
/**
 * Asked of setpriv once: when the provider starts (open()), else when the first job starts (not
 * when a node merely loads the runners).
 */
function supportsPdeathsig (): boolean {
  pdeathsig ??= SETPRIV != null && spawnSync(SETPRIV, ['--help'], { encoding: 'utf8' }).stdout?.includes('--pdeathsig') === true
  return pdeathsig
}

/** Per-job bounds; each default is noted. */
export interface ProcessJobLimits {
  /** processes and threads at once: the cgroup's pids.max, and RLIMIT_NPROC of a job uid (default 4096) */
  processes?: number
  /**
   * memory: the cgroup's limit, else RLIMIT_AS when the job uses no real GPU (default the machine's
   * memory / concurrent jobs)
   */
  memoryBytes?: number
  /** largest file: RLIMIT_FSIZE (default 4 GiB, the provider's output limit) */
  fileBytes?: number
  /** CPU seconds per process: RLIMIT_CPU (default (time limit + grace) × CPU cores) */
  cpuSeconds?: number
}

export interface ProcessRunnerOptions {
  /**
   * `--job-user`: NAME, UID[:GID] or FIRST-LAST (see planJobUser); default one uid per job from
   * DEFAULT_JOB_UIDS when root, else this user
   */
  jobUser?: string
  /** jobs that may run at once (one per GPU; default 1): a shared job uid's process limit is this many jobs' worth */
  concurrentJobs?: number
  limits?: ProcessJobLimits
  /** make a cgroup per job where the kernel allows (default true; false tests the /proc fallback) */
  cgroups?: boolean
  /** start jobs from a small helper process (launcher.ts; default one of its own): false forks the provider itself */
  launcher?: boolean | JobLauncher
}

/**
 * The command's path: `node` is the Node this provider runs on (the version idlegrid supports,
 * not whatever /usr/bin holds) when the job's user may run it; a name with a slash as given;
 * else the first match on the job's PATH.
 */
function resolveCommand (name: string, dedicatedUser: boolean): string {
  const onPath = name.includes('/') ? [name] : JOB_PATH.split(':').map(dir => `${dir}/${name}`)
  const own = name === 'node' && (!dedicatedUser || (statSync(process.execPath).mode & 0o001) !== 0) ? [process.execPath] : []
  for (const path of [...own, ...onPath]) {
    try { accessSync(path, constants.X_OK); return path } catch {}
  }
  throw new ExecError('ERR_RUNNER', `command not found: ${name.slice(0, 200)}`)
}

/**
 * Runs the job's command as a plain process in the job's fresh work dir, with an environment
 * built from nothing. When the provider is root the job runs as an unprivileged user (the key,
 * data dir and control socket are out of its reach), in a cgroup of its own where the kernel
 * allows (its whole tree is killed at the end, setsid escapes included), under rlimits for CPU
 * time, file size, processes and memory. It still shares the machine's kernel, filesystem view
 * and network: weaker than Docker, and off unless the provider names it (`--runner process`).
 */
export class ProcessRunner implements Runner {
  readonly kind = 'process' as const
  private readonly users: JobUserPool
  private readonly concurrentJobs: number
  private readonly launcher?: JobLauncher

  constructor (private readonly opts: ProcessRunnerOptions = {}) {
    this.users = new JobUserPool(planJobUser(opts.jobUser))
    this.concurrentJobs = Math.max(1, opts.concurrentJobs ?? 1)
    if (opts.launcher !== false) {
      this.launcher = opts.launcher instanceof JobLauncher ? opts.launcher : new JobLauncher()
    }
  }

  /** Whom jobs run as, for the provider's startup line. */
  get jobUser (): { describe: string, dedicated: boolean } {
    return { describe: this.users.plan.describe, dedicated: this.users.plan.dedicated }
  }

  async prepareWorkRoot (root: string): Promise<void> {
    await prepareWorkRoot(root, this.users.plan.dedicated)
  }

  /**
   * The provider's own forks (the launcher, the question to setpriv) now, while they leave no
   * copy-on-write marks on a big heap.
   */
  open (): void {
    this.launcher?.start()
    supportsPdeathsig()
  }

  /** Ends the job launcher's process (the provider stops); a later job starts it again. */
  close (): void {
    this.launcher?.stop()
  }

  check (spec: RunSpec): void {
    if (spec.command.length === 0 || spec.command[0] === '') throw new ExecError('ERR_RUNNER', 'the process runner needs a command')
    if (spec.image != null && spec.image !== '') throw new ExecError('ERR_RUNNER', 'the process runner does not run images')
    processJobEnv(spec)
  }

  start (spec: RunSpec, onLog: (line: LogLine) => void): RunHandle {
    this.check(spec)
    return supervise(spec, onLog, () => this.spawnJob(spec))
  }

  private limitsFor (spec: RunSpec): Required<ProcessJobLimits> {
    const l = this.opts.limits ?? {}
    return {
      processes: l.processes ?? 4096,
      memoryBytes: l.memoryBytes ?? Math.floor(totalmem() / this.concurrentJobs),
      fileBytes: l.fileBytes ?? 4 * GiB,
      cpuSeconds: l.cpuSeconds ?? Math.ceil((spec.timeoutMs + spec.graceMs) / 1000) * availableParallelism()
    }
  }

  /** Starts the job: its dir handed to its user, a cgroup, the rlimits, then the command behind a gate (see below). */
  private spawnJob (spec: RunSpec): ChildControl {
    const [name, ...args] = spec.command as [string, ...string[]]
    const file = resolveCommand(name, this.users.plan.dedicated)
    const user = this.users.take()
    if (user == null) throw new ExecError('ERR_RUNNER', 'every job uid is in use (widen the --job-user range)')
    const plan = this.users.plan
    const mark = randomBytes(12).toString('hex')
    let cgroup: JobCgroup | undefined
    try {
      if (plan.dedicated) handOverWorkDir(spec.workDir, user.uid, user.gid)
      const limits = this.limitsFor(spec)
      if (this.opts.cgroups !== false) cgroup = JobCgroup.create(`idlegrid-job-${spec.jobId.slice(0, 16)}-${mark}`, { processes: limits.processes, memoryBytes: limits.memoryBytes })
      // RLIMIT_NPROC counts every process of the uid: only meaningful for a uid jobs do not share with the provider
      const nproc = plan.dedicated ? limits.processes * (plan.uids.length === 1 ? this.concurrentJobs : 1) : undefined
      // CUDA reserves address space far beyond memory: RLIMIT_AS only for jobs without a real GPU
      const realGpu = runGpus(spec).some(g => !g.simulated)
      const addressSpace = cgroup?.memoryBounded === true || realGpu ? undefined : limits.memoryBytes
      const wrap = limitWrapping({
        cpuSeconds: limits.cpuSeconds,
        fileBytes: limits.fileBytes,
        processes: nproc,
        addressSpaceBytes: addressSpace
      })
      // the gate: the shell waits for "go" on stdin, sent once it is in the job's cgroup, so
      // nothing the job starts can be outside it
      const gate = `read -r go || exit 125\n[ "$go" = go ] || exit 125\n${wrap.shell}\nexec "$@" </dev/null`
      const nnp = SETPRIV != null ? [SETPRIV, '--no-new-privs', ...(supportsPdeathsig() ? ['--pdeathsig', 'KILL'] : []), '--'] : []
      const env = { ...processJobEnv(spec), [RUN_MARKER]: mark }
      const ids = plan.dedicated ? { uid: user.uid, gid: user.gid } : {}
      // detached: the job leads its own session and process group
      const shellArgs = ['-c', gate, 'idlegrid-job', ...wrap.prefix, ...nnp, file, ...args]
      const child = this.launcher != null
        ? this.launcher.spawn('/bin/sh', shellArgs, { cwd: spec.workDir, env, ...ids, detached: true })
        : spawn('/bin/sh', shellArgs, { cwd: spec.workDir, env, ...ids, detached: true, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true })
      child.stdin?.on('error', () => {})
      // stopped before it started: the gate never hears "go", and its group is killed once it has a pid
      let stopped = false
      child.once('spawn', () => {
        const pid = child.pid as number
        if (stopped) { signalGroup(pid, 'SIGKILL'); return }
        try {
          cgroup?.join(pid)
        } catch {
          void cgroup?.reap(0)
          cgroup = undefined
        }
        child.stdin?.end('go\n')
      })
      // the pid and the cgroup as they are when asked: both are settled by 'spawn'
      return {
        child,
        // SIGTERM once to each process: the group at once, then those that left it (setsid). A
        // second one would run the job's handler again (a shell's trap starts over) and eat its notice.
        terminate: () => {
          const pid = child.pid
          if (pid == null) { stopped = true; return }
          signalGroup(pid, 'SIGTERM')
          const outside = (cgroup != null ? cgroup.pids() : runProcesses(pid, mark)).filter(
            p => !inProcessGroup(p, pid)
          )
          for (const p of outside) try { process.kill(p, 'SIGTERM') } catch {}
        },
        kill: () => {
          const pid = child.pid
          if (pid == null) { stopped = true; return }
          signalGroup(pid, 'SIGKILL')
          if (cgroup != null) cgroup.kill(); else signalRun(pid, mark, 'SIGKILL')
        },
        reap: async () => {
          try {
            if (cgroup != null) await cgroup.reap(); else if (child.pid != null) await reapRun(child.pid, mark)
          } finally {
            this.users.give(user.uid)
          }
        }
      }
    } catch (err) {
      void cgroup?.reap(0)
      this.users.give(user.uid)
      throw err
    }
  }
}
