/**
 * A small HTTP server for local tools (the metrics endpoint, the dashboard), bounded against
 * whoever can reach its port: few connections, short timeouts, small headers, GET and HEAD
 * only, no request body, short URLs.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'

export const HTTP_LIMITS = {
  connections: 16,
  headerBytes: 8 * 1024,
  urlChars: 2_048,
  /** a request must arrive whole within this */
  requestMs: 10_000,
  keepAliveMs: 5_000
} as const

export type Handler = (req: IncomingMessage, url: URL, res: ServerResponse) => Promise<void>

export interface HttpAddress { host: string, port: number }

export interface LocalHttpServer {
  /** where it listens (the port is the real one when 0 was asked for) */
  readonly address: HttpAddress
  close(): Promise<void>
}

/** Answers `status` with a short text body. */
export function sendText (res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) { res.destroy(); return }
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers })
  res.end(text + '\n')
}

/** Serves `handler` on host:port with HTTP_LIMITS; resolves once listening. */
export async function serveLocalHttp (at: HttpAddress, handler: Handler): Promise<LocalHttpServer> {
  const server: Server = createServer({ maxHeaderSize: HTTP_LIMITS.headerBytes, requestTimeout: HTTP_LIMITS.requestMs, headersTimeout: HTTP_LIMITS.requestMs, keepAliveTimeout: HTTP_LIMITS.keepAliveMs }, (req, res) => {
    const refusal = refuse(req)
    if (refusal != null) {
      // a refused request's body (if any) is not read: close the connection after the answer
      sendText(res, refusal.status, refusal.text, { connection: 'close', ...refusal.headers })
      return
    }
    const url = new URL(req.url ?? '/', 'http://local')
    handler(req, url, res).catch((err: any) => { sendText(res, 500, `internal error: ${String(err?.message ?? err).slice(0, 200)}`) })
  })
  server.maxConnections = HTTP_LIMITS.connections
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

function refuse (req: IncomingMessage): { status: number, text: string, headers?: Record<string, string> } | undefined {
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
