/**
 * Job processes started by a small helper process instead of the provider itself.
 *
 * Node (libuv) starts a child with fork() on Linux. A fork marks every page of the provider
 * copy-on-write, and the provider then takes a page fault on the first write to each of them
 * again: a job input or output moving hundreds of MiB through freshly reused buffers paid about
 * one fault per page, which took half its CPU (test/bench/transfer.bench.ts: 65–75 MiB/s
 * after a job started against 130–200 without one; docs/scale.md). The launcher is started
 * once, while the provider is small, and does the forking from then on.
 *
 * `spawn` gives a child with the face of Node's ChildProcess that the runners use (pid once
 * 'spawn' fired, stdin, stdout, stderr, 'spawn', 'error', 'exit', 'close'); when the launcher
 * cannot run, the child is Node's own.
 */
import { spawn as spawnDirect, type ChildProcess } from 'node:child_process'
import { EventEmitter } from 'node:events'
import { PassThrough, Writable, type Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import type { LaunchOptions, LauncherReply, LauncherRequest } from './launcher-messages.js'

export type { LaunchOptions } from './launcher-messages.js'

/** What the runners use of a started process (Node's ChildProcess has it all). */
export interface JobChild extends EventEmitter {
  readonly pid?: number
  /** set once it exited: its code, or the signal that ended it */
  readonly exitCode: number | null
  readonly signalCode: NodeJS.Signals | null
  readonly stdin: Writable | null
  readonly stdout: Readable | null
  readonly stderr: Readable | null
}

/** What call() gives back. */
export interface CallResult {
  code: number
  stdout: string
  stderr: string
  /** why it could not start (ENOENT, EACCES, …) */
  errorCode?: string
  timedOut: boolean
  /** a stream printed more than was kept */
  truncated: boolean
  /** the signal that ended it, other than the timeout's */
  signal?: string
}

const MAIN = fileURLToPath(new URL('./launcher-main.js', import.meta.url))

/** A process the launcher started, as the provider sees it. */
class LaunchedChild extends EventEmitter implements JobChild {
  pid?: number
  exitCode: number | null = null
  signalCode: NodeJS.Signals | null = null
  readonly stdout = new PassThrough()
  readonly stderr = new PassThrough()
  readonly stdin: Writable

  constructor (readonly id: number, send: (request: LauncherRequest) => void) {
    super()
    this.stdin = new Writable({
      write: (chunk: Buffer, _encoding, callback) => { send({ op: 'stdin', id, data: chunk }); callback() },
      final: (callback) => { send({ op: 'stdin', id, end: true }); callback() }
    })
  }

  /** Applies one reply of the launcher; true once the child is gone. */
  take (reply: LauncherReply): boolean {
    switch (reply.op) {
      case 'spawned':
        this.pid = reply.pid
        this.emit('spawn')
        return false
      case 'data':
        (reply.fd === 1 ? this.stdout : this.stderr).write(reply.data)
        return false
      case 'error':
        this.fail(Object.assign(new Error(reply.message), { code: reply.code }))
        return false
      case 'exit':
        this.exitCode = reply.code
        this.signalCode = reply.signal
        this.emit('exit', reply.code, reply.signal)
        return false
      case 'close':
        this.end()
        return true
      default:
        return false
    }
  }

  /** The launcher went away: the child went with it (it kills them, or their parent-death signal does). */
  lost (): void {
    if (this.pid != null && this.exitCode == null && this.signalCode == null) {
      this.signalCode = 'SIGKILL'
      this.emit('exit', null, 'SIGKILL')
    } else if (this.pid == null) {
      this.fail(Object.assign(new Error('the job launcher stopped before the process started'), { code: 'ELAUNCHER' }))
    }
    this.end()
  }

  /** 'error' for whoever listens: unheard, it would throw inside the IPC handler and take the provider down. */
  private fail (err: Error): void {
    if (this.listenerCount('error') > 0) this.emit('error', err)
  }

  private end (): void {
    this.stdout.end()
    this.stderr.end()
    // after the streams' own 'end', as Node's ChildProcess orders them
    setImmediate(() => { this.emit('close') })
  }
}

export class JobLauncher {
  private process?: ChildProcess
  private ready = false
  private readonly queued: LauncherRequest[] = []
  private readonly live = new Map<number, LaunchedChild>()
  private nextId = 1
  private failed = false

  /** Starts the launcher's process now (the provider's start: it is smallest then); later spawns start it if needed. */
  start (): void {
    if (this.process != null) return
    let child: ChildProcess
    try {
      child = spawnDirect(process.execPath, [MAIN], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' })
    } catch {
      this.failed = true
      return
    }
    this.failed = false
    this.process = child
    this.ready = false
    child.on('message', (reply: LauncherReply) => { this.take(reply) })
    child.once('error', () => { this.gone(child) })
    child.once('exit', () => { this.gone(child) })
    this.hold()
  }

  /** Starts `file` with `args` through the launcher, or directly when the launcher cannot run. */
  spawn (file: string, args: string[], options: LaunchOptions): JobChild {
    if (!this.failed) this.start()
    if (this.process == null) {
      const { stdin, ...rest } = options
      return spawnDirect(file, args, { ...rest, stdio: [stdin ?? 'pipe', 'pipe', 'pipe'], windowsHide: true })
    }
    const id = this.nextId++
    const child = new LaunchedChild(id, request => { this.send(request) })
    this.live.set(id, child)
    this.hold()
    this.send({ op: 'spawn', id, file, args, options })
    return child
  }

  /**
   * Runs `file` once and collects what it prints, as execFile does: bounded in time (killed
   * after `timeoutMs`) and in output (`maxBytes` characters of each stream kept); never throws.
   * The code is -1 when it could not start, timed out or was killed.
   */
  async call (
    file: string,
    args: string[],
    options: LaunchOptions & { timeoutMs: number, maxBytes: number }
  ): Promise<CallResult> {
    const { timeoutMs, maxBytes, ...launch } = options
    const child = this.spawn(file, args, { ...launch, stdin: 'ignore' })
    const kept = { stdout: '', stderr: '' }
    let truncated = false
    const keep = (name: 'stdout' | 'stderr') => (text: string): void => {
      if (kept[name].length + text.length > maxBytes) truncated = true
      if (kept[name].length < maxBytes) kept[name] += text.slice(0, maxBytes - kept[name].length)
    }
    child.stdout?.setEncoding('utf8').on('data', keep('stdout'))
    child.stderr?.setEncoding('utf8').on('data', keep('stderr'))
    let failure: string | undefined
    let errorCode: string | undefined
    let timedOut = false
    child.once('error', (err: NodeJS.ErrnoException) => { failure = err.message; errorCode = err.code })
    const timer = setTimeout(() => {
      timedOut = true
      failure = `timed out after ${timeoutMs} ms`
      try { if (child.pid != null) process.kill(child.pid, 'SIGKILL') } catch {}
    }, timeoutMs)
    await new Promise(resolve => child.once('close', resolve))
    clearTimeout(timer)
    const code = failure != null ? -1 : child.exitCode ?? -1
    const signal = timedOut ? undefined : child.signalCode ?? undefined
    return { code, stdout: kept.stdout, stderr: failure != null && kept.stderr === '' ? failure : kept.stderr, errorCode, timedOut, truncated, signal }
  }

  /** The launcher's process id while it runs. */
  get pid (): number | undefined {
    return this.process?.pid
  }

  /** Ends the launcher's process; processes it started are killed with it. */
  stop (): void {
    const child = this.process
    if (child == null) return
    try { child.disconnect() } catch {}
    this.gone(child, true)
  }

  private send (request: LauncherRequest): void {
    if (!this.ready) { this.queued.push(request); return }
    try { this.process?.send(request) } catch {}
  }

  private take (reply: LauncherReply): void {
    if (reply.op === 'ready') {
      this.ready = true
      for (const request of this.queued.splice(0)) this.send(request)
      this.hold()
      return
    }
    const child = this.live.get(reply.id)
    if (child?.take(reply) === true) {
      this.live.delete(reply.id)
      this.hold()
    }
  }

  private gone (child: ChildProcess, stopped = false): void {
    if (this.process !== child) return
    // one that never came up by itself will not: later jobs start directly (a stop is no such failure)
    if (!this.ready && !stopped) this.failed = true
    this.process = undefined
    this.ready = false
    this.queued.length = 0
    const lost = [...this.live.values()]
    this.live.clear()
    for (const c of lost) c.lost()
  }

  /** The launcher keeps the provider's event loop alive only while it has children running. */
  private hold (): void {
    const child = this.process
    if (child == null) return
    const channel = child.channel as { ref?: () => void, unref?: () => void } | undefined
    if (this.live.size > 0 || !this.ready) {
      child.ref()
      channel?.ref?.()
    } else {
      child.unref()
      channel?.unref?.()
    }
  }
}
