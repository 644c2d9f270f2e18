import { constants } from 'node:os'
import type { LogLine, RunHandle, RunOutcome, RunSpec, RunStatus } from './types.js'
import type { ChildProcess } from 'node:child_process'

/** A log line longer than this is cut (the wire limit of Log.line is 16 KiB). */
export const MAX_LOG_LINE_CHARS = 16 * 1024
/** Log bytes forwarded per job; the rest is dropped with one notice. */
export const MAX_LOG_BYTES = 8 * 1024 * 1024
/** After the main process exits, how long to wait for its pipes to close. */
const CLOSE_WAIT_MS = 2_000

export interface ChildControl {
  child: ChildProcess
  /** asks the job to stop (SIGTERM to its process group / container) */
  terminate: () => void
  /** stops it for good (SIGKILL to its process group / container) */
  kill: () => void
}

/** Sends `signal` to the whole process group led by `pid`; a group already gone is fine. */
export function signalGroup (pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid == null) return
  try {
    process.kill(-pid, signal)
  } catch {}
}

class LineSplitter {
  private partial = ''
  constructor (private readonly emit: (line: string) => void) {}
  push (text: string): void {
    const parts = (this.partial + text).split('\n')
    this.partial = parts.pop() ?? ''
    if (this.partial.length > MAX_LOG_LINE_CHARS) {
      this.emit(this.partial.slice(0, MAX_LOG_LINE_CHARS))
      this.partial = ''
    }
    for (const line of parts) this.emit(line.endsWith('\r') ? line.slice(0, -1) : line)
  }

  flush (): void {
    if (this.partial !== '') this.emit(this.partial)
    this.partial = ''
  }
}

/**
 * Supervises one job process: streams its output as lines, enforces the time limit, and
 * stops it on preemption or cancel with SIGTERM, the grace period, then SIGKILL.
 */
export function supervise (spec: RunSpec, onLog: (line: LogLine) => void, start: () => ChildControl): RunHandle {
  const startedAt = Date.now()
  let stopReason: RunStatus | undefined
  let stopDetail: string | undefined
  let killTimer: NodeJS.Timeout | undefined
  let logBytes = 0
  let logCapped = false
  let control: ChildControl | undefined
  let exited = false

  const log = (stream: LogLine['stream'], line: string): void => {
    if (logCapped) return
    logBytes += line.length + 1
    if (logBytes > MAX_LOG_BYTES) {
      logCapped = true
      line = `[idlegrid: log capped at ${MAX_LOG_BYTES} bytes; further output dropped]`
    }
    try { onLog({ stream, line: line.slice(0, MAX_LOG_LINE_CHARS), at: Date.now() }) } catch {}
  }

  const stop = (reason: RunStatus, graceMs: number, detail: string): void => {
    if (exited || control == null) return
    if (stopReason == null) {
      stopReason = reason
      stopDetail = detail
      control.terminate()
    }
    const wait = Math.max(0, graceMs)
    // a later, shorter deadline (cancel during a preemption) wins
    if (killTimer != null && wait > 0) return
    clearTimeout(killTimer)
    if (wait === 0) control.kill()
    else killTimer = setTimeout(() => { control?.kill() }, wait)
  }

  const done = new Promise<RunOutcome>(resolve => {
    let settled = false
    // eslint-disable-next-line prefer-const -- finish() may run, and clear it, before it is set
    let timeLimit: NodeJS.Timeout | undefined
    const finish = (outcome: Omit<RunOutcome, 'startedAt' | 'endedAt'>): void => {
      if (settled) return
      settled = true
      clearTimeout(timeLimit)
      clearTimeout(killTimer)
      resolve({ ...outcome, startedAt, endedAt: Date.now() })
    }
    try {
      control = start()
    } catch (err: any) {
      finish({ status: 'failed', exitCode: -1, detail: `could not start: ${String(err?.message ?? err)}` })
      return
    }
    const { child } = control
    const splitters = {
      stdout: new LineSplitter(line => { log('stdout', line) }),
      stderr: new LineSplitter(line => { log('stderr', line) })
    }
    child.stdout?.setEncoding('utf8').on('data', (text: string) => { splitters.stdout.push(text) })
    child.stderr?.setEncoding('utf8').on('data', (text: string) => { splitters.stderr.push(text) })
    timeLimit = setTimeout(() => { stop('timeout', spec.graceMs, `time limit of ${spec.timeoutMs} ms reached`) }, spec.timeoutMs)
    let exitCode = -1
    const close = (): void => {
      splitters.stdout.flush()
      splitters.stderr.flush()
      finish({ status: stopReason ?? 'completed', exitCode, detail: stopDetail })
    }
    child.once('error', (err: NodeJS.ErrnoException) => {
      if (exited) return
      exited = true
      finish({ status: 'failed', exitCode: -1, detail: err.code === 'ENOENT' ? `command not found: ${spec.command[0] ?? spec.image ?? ''}` : `could not run: ${err.message}` })
    })
    child.once('exit', (code, signal) => {
      exited = true
      exitCode = code ?? -(signal != null ? (constants.signals[signal] ?? 1) : 1)
      // background processes the job left behind go with it
      control?.kill()
      setTimeout(close, CLOSE_WAIT_MS).unref()
    })
    child.once('close', close)
  })

  return {
    startedAt,
    done,
    preempt: (graceMs = spec.graceMs, detail = 'preempted') => { stop('preempted', graceMs, detail) },
    cancel: (detail = 'cancelled') => { stop('failed', 0, detail) }
  }
}
