/**
 * The spec side of the attacker program: starts `attacker.js <attack>` as its own process
 * against a local network, waits until its nodes have joined, and collects the JSON line it
 * prints at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ATTACKER_PATH = fileURLToPath(new URL('./attacker.js', import.meta.url))

export interface AttackOutcome {
  attack: string
  result?: Record<string, any>
  error?: string
}

export interface AttackerProcess {
  /** the attacker's nodes' peer ids */
  peerIds: string[]
  child: ChildProcess
  /** resolves with the attack's last line once the process has exited */
  outcome: Promise<AttackOutcome>
  /** SIGTERM (the attack stops and reports), then the outcome; SIGKILL after `timeoutMs` */
  stop(timeoutMs?: number): Promise<AttackOutcome>
  stderr(): string
  /** resolves with the first progress line (or any JSON line) `match` accepts, printed so far or later */
  line(match: (value: any) => boolean, timeoutMs?: number): Promise<any>
  /** tells an attack waiting in `go()` to go on */
  go(): void
}

export interface AttackerOptions {
  bootstrap: string
  /** the attacker's nodes' data directories go under it */
  baseDir: string
  /** `--name value` options of the attack */
  options?: Record<string, string | number>
  readyTimeoutMs?: number
}

/** Starts the attacker process for `attack` and resolves once its nodes are on the market topics. */
export async function startAttacker (attack: string, opts: AttackerOptions): Promise<AttackerProcess> {
  const args = [ATTACKER_PATH, attack, '--bootstrap', opts.bootstrap, '--data-dir', join(opts.baseDir, `attacker-${attack}`)]
  for (const [k, v] of Object.entries(opts.options ?? {})) args.push(`--${k}`, String(v))
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, IDLEGRID_BOOTSTRAP: '', IDLEGRID_DATA_DIR: '' } })
  let stderr = ''
  child.stderr?.setEncoding('utf8').on('data', (c: string) => { stderr = (stderr + c).slice(-32 * 1024) })
  const lines: any[] = []
  const listeners = new Set<(value: any) => void>()
  let buffer = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk
    for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
      const line = buffer.slice(0, at)
      buffer = buffer.slice(at + 1)
      try {
        const value = JSON.parse(line)
        lines.push(value)
        for (const l of listeners) l(value)
      } catch {}
    }
  })
  const exited = new Promise<void>(resolve => child.once('exit', () => { resolve() }))
  const outcome = exited.then((): AttackOutcome => {
    const last = [...lines].reverse().find(l => typeof l?.attack === 'string' && l.ready !== true)
    return last ?? { attack, error: `the attacker exited without a result (code ${String(child.exitCode)}): ${stderr.slice(-2000)}` }
  })
  const ready = await new Promise<{ peerIds: string[] }>((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`attacker ${attack} not ready: ${stderr.slice(-2000)}`)) }, opts.readyTimeoutMs ?? 30_000)
    listeners.add((value) => { if (value?.ready === true) { clearTimeout(timer); resolve(value) } })
    void exited.then(() => { clearTimeout(timer); reject(new Error(`attacker ${attack} exited before it was ready: ${stderr.slice(-2000)}`)) })
  })
  return {
    peerIds: ready.peerIds,
    child,
    outcome,
    stderr: () => stderr,
    line: async (match, timeoutMs = 30_000) => {
      const seen = lines.find(match)
      if (seen != null) return seen
      return await new Promise((resolve, reject) => {
        const timer = setTimeout(() => { reject(new Error(`attacker ${attack}: no such line within ${timeoutMs} ms: ${stderr.slice(-2000)}`)) }, timeoutMs)
        const listener = (value: any): void => {
          if (match(value)) {
            clearTimeout(timer)
            listeners.delete(listener)
            resolve(value)
          }
        }
        listeners.add(listener)
        void exited.then(() => { clearTimeout(timer); reject(new Error(`attacker ${attack} exited first: ${stderr.slice(-2000)}`)) })
      })
    },
    go: () => { child.stdin?.write('go\n') },
    stop: async (timeoutMs = 15_000) => {
      if (child.exitCode == null && child.signalCode == null) child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
      const out = await outcome
      clearTimeout(timer)
      return out
    }
  }
}
