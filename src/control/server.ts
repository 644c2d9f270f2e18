import { chmod, mkdtemp, rename, rmdir, unlink } from 'node:fs/promises'
import { createServer, type Server, type Socket } from 'node:net'
import { dirname, join } from 'node:path'
import { CONTROL_SOCKET, ControlError, LineSplitter, type ControlReply, type ControlRequest } from './protocol.js'

export type ControlHandler = (
  params: Record<string, unknown>,
  emit: (event: unknown) => void,
  signal: AbortSignal
) => Promise<unknown>

export interface ControlServer {
  readonly path: string
  close(): Promise<void>
}

/** Clients served at once; a local tool needs few. */
const MAX_CLIENTS = 32
/** A client that sends nothing for this long is dropped. */
const IDLE_TIMEOUT_MS = 10 * 60_000

/** Longest Unix socket path we bind (sun_path holds 108 bytes on Linux, 104 on macOS, with the NUL). */
const MAX_SOCKET_PATH = 100

/**
 * Serves `handlers` on `<dataDir>/control.sock`, owner-only (0600) from the first moment that
 * path exists. The caller holds the data-directory lock, so a socket file already there is a
 * leftover of a crashed node and is replaced.
 *
 * The socket is bound inside a fresh private directory (mkdtemp: 0700, whatever the umask),
 * chmod-ed to 0600 there, and only then renamed into place; rename is atomic and keeps the
 * inode, so no other user can ever reach it while it carries the umask's mode. (Not a umask
 * around listen(): the umask is process-wide and libuv's thread pool runs other fs calls,
 * mkdir and open with modes, concurrently with the main thread.)
 */
export async function startControlServer (
  dataDir: string,
  handlers: Record<string, ControlHandler>
): Promise<ControlServer> {
  const path = join(dataDir, CONTROL_SOCKET)
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) throw new ControlError('ERR_SOCKET_PATH', `control socket path ${path} is too long for a Unix socket; use a shorter --data-dir`)
  const active = new Set<Socket>()
  const server = createServer({ allowHalfOpen: false }, (socket) => {
    if (active.size >= MAX_CLIENTS) { socket.destroy(); return }
    active.add(socket)
    serve(socket, handlers)
    socket.once('close', () => active.delete(socket))
  })
  server.maxConnections = MAX_CLIENTS
  await listenPrivately(server, path)
  return {
    path,
    close: async () => {
      for (const socket of active) socket.destroy()
      await new Promise<void>(resolve => server.close(() => { resolve() }))
      await unlink(path).catch(() => {})
    }
  }
}

/** Binds `server` to a temporary name in a new 0700 directory next to `path`, sets 0600, renames it to `path`. */
async function listenPrivately (server: Server, path: string): Promise<void> {
  // '.c' + 6 random characters + '/s' is shorter than 'control.sock': the length check covers it
  const privateDir = await mkdtemp(join(dirname(path), '.c'))
  const staging = join(privateDir, 's')
  try {
    await listen(server, staging)
    try {
      await chmod(staging, 0o600)
      await rename(staging, path)
    } catch (err) {
      await new Promise<void>(resolve => server.close(() => { resolve() }))
      throw err
    }
  } finally {
    await unlink(staging).catch(() => {})
    await rmdir(privateDir).catch(() => {})
  }
}

function listen (server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(path, () => {
      server.off('error', reject)
      resolve()
    })
  })
}

function serve (socket: Socket, handlers: Record<string, ControlHandler>): void {
  const calls = new AbortController()
  socket.setEncoding('utf8')
  socket.setTimeout(IDLE_TIMEOUT_MS, () => socket.destroy())
  socket.on('error', () => {})
  socket.once('close', () => { calls.abort() })
  const send = (reply: ControlReply): void => {
    if (!socket.destroyed) socket.write(JSON.stringify(reply) + '\n')
  }
  const lines = new LineSplitter((line) => {
    let request: ControlRequest
    try {
      request = JSON.parse(line)
      if (typeof request?.id !== 'number' || typeof request.method !== 'string') throw new Error('not a request')
    } catch {
      send({ id: -1, error: { code: 'ERR_BAD_REQUEST', message: 'a request is one JSON line {"id": number, "method": string, "params": object}' } })
      return
    }
    const handler = Object.hasOwn(handlers, request.method) ? handlers[request.method] : undefined
    if (handler == null) {
      send({ id: request.id, error: { code: 'ERR_UNKNOWN_METHOD', message: `unknown method "${request.method}"` } })
      return
    }
    const params = request.params != null && typeof request.params === 'object' ? request.params : {}
    handler(params, (event) => { send({ id: request.id, event }) }, calls.signal)
      .then(result => { send({ id: request.id, result: result ?? null }) })
      .catch((err: any) => { send({ id: request.id, error: { code: String(err?.code ?? 'ERR_INTERNAL'), message: String(err?.message ?? err) } }) })
  })
  socket.on('data', (chunk: string) => {
    try {
      lines.push(chunk)
    } catch {
      socket.destroy()
    }
  })
}
