import { spawn } from 'node:child_process'
import { RunnerError } from '../errors.js'
import { processJobEnv } from './environment.js'
import { signalGroup, supervise } from './supervise.js'
import type { LogLine, RunHandle, Runner, RunSpec } from './types.js'

/**
 * Runs the job's command as a plain process of the provider's user, in the job's fresh work
 * dir, with an environment built from nothing. It does not isolate: the command can read
 * whatever the provider's user can. Off unless the provider names it (`--runner process`).
 */
export class ProcessRunner implements Runner {
  readonly kind = 'process' as const

  check (spec: RunSpec): void {
    if (spec.command.length === 0 || spec.command[0] === '') throw new RunnerError('the process runner needs a command')
    if (spec.image != null && spec.image !== '') throw new RunnerError('the process runner does not run images')
    processJobEnv(spec)
  }

  start (spec: RunSpec, onLog: (line: LogLine) => void): RunHandle {
    this.check(spec)
    const env = processJobEnv(spec)
    return supervise(spec, onLog, () => {
      const [file, ...args] = spec.command as [string, ...string[]]
      // detached: the job leads its own process group, so one signal reaches all it started
      const child = spawn(file, args, { cwd: spec.workDir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true })
      return {
        child,
        terminate: () => { signalGroup(child.pid, 'SIGTERM') },
        kill: () => { signalGroup(child.pid, 'SIGKILL') }
      }
    })
  }
}
