import { constants } from 'node:os'
import type { LogLine, RunHandle, RunOutcome, RunSpec, RunStatus } from './types.js'
import type { JobChild } from './launcher.js'

/** A log line longer than this is cut (the wire limit of Log.line is 16 KiB). */
export const MAX_LOG_LINE_CHARS = 16 * 1024
/** Log bytes forwarded per job; the rest is dropped with one notice. */
export const MAX_LOG_BYTES = 8 * 1024 * 1024
/** After the main process exits, how long to wait for its pipes to close. */
const CLOSE_WAIT_MS = 2_000

export interface ChildControl {
  child: JobChild
  /** asks the job to stop (SIGTERM to its process group / container) */
  terminate: () => void
  /** stops it for good (SIGKILL to its process group / container) */
  kill: () => void
  /** after the end: kills whatever of the job is left and waits until it is gone; the outcome waits for it */
  reap?: () => Promise<void>
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
  const run = new Supervision(spec, new CappedLog(onLog), start)
  return {
    startedAt: run.startedAt,
    done: run.done,
    preempt: (graceMs = spec.graceMs, detail = 'preempted') => { run.stop('preempted', graceMs, detail) },
    cancel: (detail = 'cancelled') => { run.stop('failed', 0, detail) }
  }
}

/** The job's log lines, each cut to MAX_LOG_LINE_CHARS, MAX_LOG_BYTES in all (then one notice and nothing more). */
class CappedLog {
  private bytes = 0
  private capped = false

  constructor (private readonly onLog: (line: LogLine) => void) {}

  line (stream: LogLine['stream'], line: string): void {
    if (this.capped) return
    this.bytes += line.length + 1
    if (this.bytes > MAX_LOG_BYTES) {
      this.capped = true
      line = `[idlegrid: log capped at ${MAX_LOG_BYTES} bytes; further output dropped]`
    }
    try { this.onLog({ stream, line: line.slice(0, MAX_LOG_LINE_CHARS), at: Date.now() }) } catch {}
  }
}

/** One job process from its start to its end: output, time limit, stop with notice, outcome. */
class Supervision {
  readonly startedAt = Date.now()
  readonly done: Promise<RunOutcome>
  private resolveDone!: (outcome: RunOutcome) => void
  private control?: ChildControl
  private readonly splitters: Record<LogLine['stream'], LineSplitter>
  private stopReason?: RunStatus
  private stopDetail?: string
  private killTimer?: NodeJS.Timeout
  private timeLimit?: NodeJS.Timeout
  private exited = false
  private settled = false

  constructor (private readonly spec: RunSpec, log: CappedLog, start: () => ChildControl) {
    this.splitters = {
      stdout: new LineSplitter(line => { log.line('stdout', line) }),
      stderr: new LineSplitter(line => { log.line('stderr', line) })
    }
    this.done = new Promise(resolve => { this.resolveDone = resolve })
    try {
      this.control = start()
    } catch (err: any) {
      this.finish({ status: 'failed', exitCode: -1, detail: `could not start: ${String(err?.message ?? err)}` })
      return
    }
    this.watch(this.control.child)
    this.timeLimit = setTimeout(() => { this.stop('timeout', spec.graceMs, `time limit of ${spec.timeoutMs} ms reached`) }, spec.timeoutMs)
  }

  /**
   * SIGTERM now (the first reason is the one reported), SIGKILL after `graceMs`; a later, shorter
   * deadline (cancel during a preemption) wins.
   */
  stop (reason: RunStatus, graceMs: number, detail: string): void {
    const control = this.control
    if (this.exited || control == null) return
    if (this.stopReason == null) {
      this.stopReason = reason
      this.stopDetail = detail
      control.terminate()
    }
    const wait = Math.max(0, graceMs)
    if (this.killTimer != null && wait > 0) return
    clearTimeout(this.killTimer)
    if (wait === 0) control.kill()
    else this.killTimer = setTimeout(() => { control.kill() }, wait)
  }

  /** Follows the process's output and its end: the outcome comes once its pipes close (or a little after it exits). */
  private watch (child: JobChild): void {
    child.stdout?.setEncoding('utf8').on('data', (text: string) => { this.splitters.stdout.push(text) })
    child.stderr?.setEncoding('utf8').on('data', (text: string) => { this.splitters.stderr.push(text) })
    let exitCode = -1
    const close = (): void => {
      this.splitters.stdout.flush()
      this.splitters.stderr.flush()
      this.finish({ status: this.stopReason ?? 'completed', exitCode, detail: this.stopDetail })
    }
    child.once('error', (err: NodeJS.ErrnoException) => {
      if (this.exited) return
      this.exited = true
      this.finish({ status: 'failed', exitCode: -1, detail: err.code === 'ENOENT' ? `command not found: ${this.spec.command[0] ?? this.spec.image ?? ''}` : `could not run: ${err.message}` })
    })
    child.once('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      this.exited = true
      exitCode = code ?? -(signal != null ? (constants.signals[signal] ?? 1) : 1)
      // background processes the job left behind go with it
      this.control?.kill()
      setTimeout(close, CLOSE_WAIT_MS).unref()
    })
    child.once('close', close)
  }

  private finish (outcome: Omit<RunOutcome, 'startedAt' | 'endedAt'>): void {
    if (this.settled) return
    this.settled = true
    clearTimeout(this.timeLimit)
    clearTimeout(this.killTimer)
    const endedAt = Date.now()
    // the outcome is reported once nothing of the job runs any more
    const reaped = this.control?.reap?.().catch(() => {}) ?? Promise.resolve()
    void reaped.then(() => { this.resolveDone({ ...outcome, startedAt: this.startedAt, endedAt }) })
  }
}
