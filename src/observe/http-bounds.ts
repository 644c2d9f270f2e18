/**
 * A small HTTP server for local tools (the metrics endpoint, the dashboard), bounded against
 * whoever can reach its port: few connections, short timeouts, small headers, GET and HEAD
 * only, no request body, short URLs. On loopback it answers only a loopback Host (a web page
 * that rebinds its own name to 127.0.0.1 could otherwise read /metrics). At its connection
 * bound a new connection takes the place of the oldest idle one (none with a request being
 * answered): idle keep-alive connections, anyone's, cannot lock the owner out.
 */
import { isLoopbackHost } from '../common/index.js'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

export const HTTP_LIMITS = {
  connections: 16,
  headerBytes: 8 * 1024,
  urlChars: 2_048,
  /** a request must arrive whole within this */
  requestMs: 10_000,
  keepAliveMs: 5_000
} as const

const LOOPBACK_BIND = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/i

export type Handler = (req: IncomingMessage, url: URL, res: ServerResponse) => Promise<void>

export interface HttpAddress { host: string, port: number }

export interface LocalHttpServer {
  /** where it listens (the port is the real one when 0 was asked for) */
  readonly address: HttpAddress
  close(): Promise<void>
}

/** Answers `status` with a short text body. */
export function sendText (
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {}
): void {
  if (res.headersSent) { res.destroy(); return }
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers })
  res.end(text + '\n')
}

/** Serves `handler` on host:port with HTTP_LIMITS; resolves once listening. */
export async function serveLocalHttp (at: HttpAddress, handler: Handler): Promise<LocalHttpServer> {
  const loopback = LOOPBACK_BIND.test(at.host)
  // requests being answered, per connection: a connection with none is idle
  const busy = new Map<Socket, number>()
  const server: Server = createServer(
    {
      maxHeaderSize: HTTP_LIMITS.headerBytes,
      requestTimeout: HTTP_LIMITS.requestMs,
      headersTimeout: HTTP_LIMITS.requestMs,
      keepAliveTimeout: HTTP_LIMITS.keepAliveMs
    },
    (req, res) => {
      const socket = req.socket
      busy.set(socket, (busy.get(socket) ?? 0) + 1)
      res.once('close', () => { if (busy.has(socket)) busy.set(socket, Math.max(0, (busy.get(socket) ?? 1) - 1)) })
      const refusal = refuse(req, loopback)
      if (refusal != null) {
      // a refused request's body (if any) is not read: close the connection after the answer
        sendText(res, refusal.status, refusal.text, { connection: 'close', ...refusal.headers })
        return
      }
      const url = new URL(req.url ?? '/', 'http://local')
      handler(req, url, res).catch((err: any) => { sendText(res, 500, `internal error: ${String(err?.message ?? err).slice(0, 200)}`) })
    }
  )
  server.on('connection', (socket: Socket) => {
    if (busy.size >= HTTP_LIMITS.connections) {
      // the oldest idle connection makes room (a Map keeps insertion order); with none idle, the new one goes
      const idle = [...busy].find(([, n]) => n === 0)?.[0]
      if (idle == null) { socket.destroy(); return }
      busy.delete(idle)
      idle.destroy()
    }
    busy.set(socket, 0)
    socket.once('close', () => { busy.delete(socket) })
  })
  server.on('clientError', (_err, socket) => { socket.destroy() })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(at.port, at.host, () => { server.off('error', reject); resolve() })
  })
  const bound = server.address()
  const port = typeof bound === 'object' && bound != null ? bound.port : at.port
  return {
    address: { host: at.host, port },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => { resolve() }))
    }
  }
}

function refuse (
  req: IncomingMessage,
  loopback: boolean
): { status: number, text: string, headers?: Record<string, string> } | undefined {
  if (loopback && !isLoopbackHost(req.headers.host ?? '')) return { status: 403, text: `Host "${(req.headers.host ?? '').slice(0, 64)}" is not a loopback name of this machine` }
  if (req.method !== 'GET' && req.method !== 'HEAD') return { status: 405, text: 'only GET and HEAD', headers: { allow: 'GET, HEAD' } }
  if ((req.url ?? '').length > HTTP_LIMITS.urlChars) return { status: 414, text: 'URL too long' }
  const length = req.headers['content-length']
  if ((length != null && length !== '0') || req.headers['transfer-encoding'] != null) return { status: 413, text: 'no request body is accepted' }
  return undefined
}

/** "HOST:PORT", "[::1]:PORT" or "PORT" (host 127.0.0.1) as an address; throws a readable error otherwise. */
export function parseHostPort (text: string, flag: string): HttpAddress {
  const m = /^(?:(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(text.trim())
  const port = m == null ? NaN : Number(m[2])
  if (m == null || port > 65_535) throw new Error(`--${flag} takes HOST:PORT or PORT (e.g. 127.0.0.1:9464), not "${text}"`)
  const host = m[1] == null ? '127.0.0.1' : m[1].replace(/^\[|\]$/g, '')
  return { host, port }
}
