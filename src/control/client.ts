import { connect } from 'node:net'
import { join } from 'node:path'
import { isCoded } from '../common/index.js'
import { CONTROL_SOCKET, ControlError, controlUnavailable, LineSplitter, type ControlReply } from './protocol.js'

export interface CallOptions {
  /** whole-call bound (default 30 s) */
  timeoutMs?: number
  /** events the node sends before its result */
  onEvent?: (event: unknown) => void
}

/**
 * Calls `method` on the node running on `dataDir`. Throws ControlError: ERR_CONTROL_UNAVAILABLE
 * when no node answers there (no socket, or a stale one), the answer's code when the node
 * answers with an error.
 */
export async function callControl (
  dataDir: string,
  method: string,
  params: Record<string, unknown> = {},
  opts: CallOptions = {}
): Promise<unknown> {
  const path = join(dataDir, CONTROL_SOCKET)
  const timeoutMs = opts.timeoutMs ?? 30_000
  return await new Promise((resolve, reject) => {
    const socket = connect(path)
    let connected = false
    let done = false
    const finish = (fn: () => void): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      fn()
    }
    const timer = setTimeout(() => { finish(() => { reject(new ControlError('ERR_CONTROL_TIMEOUT', `node on ${dataDir} did not answer "${method}" within ${timeoutMs} ms`)) }) }, timeoutMs)
    socket.setEncoding('utf8')
    socket.once('connect', () => {
      connected = true
      socket.write(JSON.stringify({ id: 1, method, params }) + '\n')
    })
    socket.on('error', (err: NodeJS.ErrnoException) => {
      finish(() => { reject(connected ? new ControlError('ERR_CONTROL_IO', `control socket: ${err.message}`) : controlUnavailable(path, err.code ?? err.message)) })
    })
    socket.once('close', () => {
      finish(() => { reject(new ControlError('ERR_CONTROL_CLOSED', `node on ${dataDir} closed the control connection`)) })
    })
    const lines = new LineSplitter((line) => {
      let reply: ControlReply
      try {
        reply = JSON.parse(line)
      } catch {
        finish(() => { reject(new ControlError('ERR_CONTROL_PROTOCOL', 'node sent a line that is not JSON')) })
        return
      }
      if ('event' in reply) {
        opts.onEvent?.(reply.event)
      } else if ('result' in reply) {
        finish(() => { resolve(reply.result) })
      } else if ('error' in reply) {
        finish(() => { reject(new ControlError(reply.error.code, reply.error.message)) })
      }
    })
    socket.on('data', (chunk: string) => {
      try {
        lines.push(chunk)
      } catch (err: any) {
        finish(() => { reject(err) })
      }
    })
  })
}

/** True when a node answers on `dataDir`'s control socket. */
export async function isNodeRunning (dataDir: string): Promise<boolean> {
  try {
    await callControl(dataDir, 'ping', {}, { timeoutMs: 2_000 })
    return true
  } catch (err) {
    if (isCoded(err, ControlError, 'ERR_CONTROL_UNAVAILABLE')) return false
    throw err
  }
}
