/**
 * A benchmark's peer in a process of its own (transfer-peer.ts, ledger-holder.ts): it prints
 * one JSON line when ready, answers each "cpu" line on stdin with its CPU time so far
 * ({ cpuMicros }), and exits when stdin closes. Only JSON lines answer (node flags such as
 * --trace-gc print to stdout too); the child inherits this process's node flags.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'

export interface ChildPeer<T> {
  /** what the child printed when ready */
  ready: T
  child: ChildProcess
  /** the child's CPU time so far, ms */
  cpuMs: () => Promise<number>
  /** closes its stdin and waits for it to exit (killed after 10 s) */
  stop: () => Promise<void>
}

export async function startChildPeer<T> (script: string, args: string[], what: string): Promise<ChildPeer<T>> {
  const child = spawn(process.execPath, [...process.execArgv, script, ...args], { stdio: ['pipe', 'pipe', 'inherit'] })
  const waiting: Array<(line: string) => void> = []
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (l) => { if (l.startsWith('{')) waiting.shift()?.(l) })
  const nextLine = async (): Promise<string> => await new Promise<string>(resolve => { waiting.push(resolve) })
  const stop = async (): Promise<void> => {
    const exited = new Promise(resolve => child.once('exit', resolve))
    child.stdin?.end()
    await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 10_000))])
    child.kill('SIGKILL')
  }
  try {
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => { reject(new Error(`${what} did not start within 60 s`)) }, 60_000)
      nextLine().then((l) => { clearTimeout(timer); resolve(l) }, reject)
      child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`${what} exited with ${String(code)}`)) })
    })
    const cpuMs = async (): Promise<number> => {
      const answer = nextLine()
      child.stdin?.write('cpu\n')
      return (JSON.parse(await answer) as { cpuMicros: number }).cpuMicros / 1000
    }
    return { ready: JSON.parse(line) as T, child, cpuMs, stop }
  } catch (err) {
    await stop()
    throw err
  }
}
