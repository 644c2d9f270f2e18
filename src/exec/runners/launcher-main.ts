/**
 * The job launcher's own process (launcher.ts starts it): spawns what the provider asks over
 * the IPC channel and relays each child's stdin, output and end. It is small and never grows,
 * so its forks are cheap and leave the provider's memory alone. When the channel closes (the
 * provider stopped or died) it kills every process group it started and exits.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { MAX_RELAYED_BYTES, type LauncherReply, type LauncherRequest } from './launcher-messages.js'

/** each child, whether it leads its own process group, and the bytes relayed of its stdout and stderr */
const children = new Map<number, { child: ChildProcess, detached: boolean, relayed: [number, number] }>()

function reply (message: LauncherReply): void {
  // with a callback a send to a provider already gone fails quietly, instead of as an 'error' event
  if (process.connected) process.send?.(message, undefined, undefined, () => {})
}

function relay (id: number, fd: 1 | 2, data: Buffer): void {
  const entry = children.get(id)
  if (entry == null || entry.relayed[fd - 1] >= MAX_RELAYED_BYTES) return
  entry.relayed[fd - 1] += data.byteLength
  reply({ op: 'data', id, fd, data })
}

function start (request: Extract<LauncherRequest, { op: 'spawn' }>): void {
  const { id, file, args, options } = request
  let child: ChildProcess
  try {
    child = spawn(file, args, { cwd: options.cwd, env: options.env, uid: options.uid, gid: options.gid, detached: options.detached, stdio: [options.stdin ?? 'pipe', 'pipe', 'pipe'] })
  } catch (err: any) {
    reply({ op: 'error', id, code: err?.code, message: String(err?.message ?? err) })
    reply({ op: 'close', id })
    return
  }
  children.set(id, { child, detached: options.detached === true, relayed: [0, 0] })
  child.stdin?.on('error', () => {})
  // output past the relay bound is still read (a job must never block on a full pipe), then dropped
  child.stdout?.on('data', (data: Buffer) => { relay(id, 1, data) })
  child.stderr?.on('data', (data: Buffer) => { relay(id, 2, data) })
  child.once('spawn', () => { reply({ op: 'spawned', id, pid: child.pid as number }) })
  child.once('error', (err: NodeJS.ErrnoException) => { reply({ op: 'error', id, code: err.code, message: err.message }) })
  child.once('exit', (code, signal) => { reply({ op: 'exit', id, code, signal }) })
  child.once('close', () => {
    children.delete(id)
    reply({ op: 'close', id })
  })
}

process.on('message', (message: LauncherRequest) => {
  switch (message.op) {
    case 'spawn':
      start(message)
      break
    case 'stdin': {
      const stdin = children.get(message.id)?.child.stdin
      if (stdin == null) break
      if (message.data != null) stdin.write(message.data)
      if (message.end === true) stdin.end()
      break
    }
  }
})

// the provider is gone: nothing it started may outlive it (as setpriv's parent-death signal
// would have it when the provider itself was the parent)
process.on('disconnect', () => {
  for (const { child, detached } of children.values()) {
    try {
      if (detached && child.pid != null) process.kill(-child.pid, 'SIGKILL')
      else child.kill('SIGKILL')
    } catch {}
  }
  process.exit(0)
})
reply({ op: 'ready' })
