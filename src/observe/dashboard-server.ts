/**
 * `--dashboard HOST:PORT`: the operator's pages (web/dashboard: network, market, jobs, services,
 * earnings, reputation) and the JSON behind them under /api/, every asset served from this
 * package (Chart.js from node_modules), nothing from elsewhere (the CSP says so too).
 * Everything but the sign-in page, its script and the style sheet answers 401 without the token,
 * which comes in a header once (GET /session sets an HttpOnly cookie) and never in a URL.
 */
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { requestToken, tokenCookie, tokenMatches } from './dashboard-auth.js'
import { sendText, serveLocalHttp, type HttpAddress, type LocalHttpServer } from './http-bounds.js'
import type { DashboardApi } from './dashboard-api.js'
import type { IncomingMessage, ServerResponse } from 'node:http'

const WEB_DIR = fileURLToPath(new URL('../../../web/dashboard/', import.meta.url))

/** Chart.js's browser build, from the installed package. */
function chartJsPath (): string {
  return join(dirname(createRequire(import.meta.url).resolve('chart.js')), 'chart.umd.min.js')
}

/** What anyone may load: the sign-in page's own script and the style sheet (no data, no token). */
const PUBLIC_ASSETS: Record<string, { file: () => string, type: string }> = {
  '/assets/sign-in.js': { file: () => join(WEB_DIR, 'sign-in.js'), type: 'text/javascript; charset=utf-8' },
  '/assets/style.css': { file: () => join(WEB_DIR, 'style.css'), type: 'text/css; charset=utf-8' }
}
const SIGN_IN_PAGE = { file: () => join(WEB_DIR, 'sign-in.html'), type: 'text/html; charset=utf-8' }

const ASSETS: Record<string, { file: () => string, type: string }> = {
  '/': { file: () => join(WEB_DIR, 'index.html'), type: 'text/html; charset=utf-8' },
  '/assets/app.js': { file: () => join(WEB_DIR, 'app.js'), type: 'text/javascript; charset=utf-8' },
  '/assets/style.css': { file: () => join(WEB_DIR, 'style.css'), type: 'text/css; charset=utf-8' },
  '/assets/chart.js': { file: chartJsPath, type: 'text/javascript; charset=utf-8' }
}

const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store'
}

export interface DashboardServer extends LocalHttpServer {
  /** the URL to open: it holds no token (the sign-in page asks for it) */
  readonly url: string
}

export async function serveDashboard (at: HttpAddress, token: string, api: DashboardApi): Promise<DashboardServer> {
  const cache = new Map<string, Buffer>()
  const file = async (path: string, asset: { file: () => string }): Promise<Buffer> => {
    let bytes = cache.get(path)
    if (bytes == null) { bytes = await readFile(asset.file()); cache.set(path, bytes) }
    return bytes
  }
  const server = await serveLocalHttp(at, async (req, url, res) => {
    const signedIn = tokenMatches(requestToken(req), token)
    // the token comes once in a header (the sign-in page's fetch, or a script's), never in a URL
    if (url.pathname === '/session') {
      if (!signedIn) { sendText(res, 401, 'wrong token: it is in <data dir>/dashboard.token', SECURITY_HEADERS); return }
      res.writeHead(204, { ...SECURITY_HEADERS, 'set-cookie': tokenCookie(token) })
      res.end()
      return
    }
    const open = Object.hasOwn(PUBLIC_ASSETS, url.pathname) ? PUBLIC_ASSETS[url.pathname] : undefined
    if (open != null) { send(req, res, 200, { type: open.type, body: await file(url.pathname, open) }); return }
    if (!signedIn) {
      // a browser gets the sign-in page (status 401: nothing of the node's is in it); a script, the reason
      if (url.pathname === '/') { send(req, res, 401, { type: SIGN_IN_PAGE.type, body: await file('sign-in', SIGN_IN_PAGE) }); return }
      sendText(res, 401, 'this dashboard needs its token: sign in at / (the token is in <data dir>/dashboard.token), or send Authorization: Bearer <token>', SECURITY_HEADERS)
      return
    }
    if (url.pathname.startsWith('/api/')) {
      const body = await api.page(url.pathname.slice(5), url.searchParams)
      if (body === undefined) { sendText(res, 404, 'no such page', SECURITY_HEADERS); return }
      send(req, res, 200, { type: 'application/json; charset=utf-8', body: Buffer.from(JSON.stringify(body, jsonSafe)) })
      return
    }
    const asset = Object.hasOwn(ASSETS, url.pathname) ? ASSETS[url.pathname] : undefined
    if (asset == null) { sendText(res, 404, 'not found', SECURITY_HEADERS); return }
    send(req, res, 200, { type: asset.type, body: await file(url.pathname, asset) })
  })
  const host = server.address.host.includes(':') ? `[${server.address.host}]` : server.address.host
  return { ...server, url: `http://${host}:${server.address.port}/` }
}

/** Answers `req` with `status` and `content` (its head only, for HEAD). */
function send (
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  content: { type: string, body: Buffer }
): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': content.type, 'content-length': String(content.body.length) })
  res.end(req.method === 'HEAD' ? undefined : content.body)
}

/** bigints (sequence numbers, micro-USD) as strings */
function jsonSafe (_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value
}
