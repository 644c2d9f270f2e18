/**
 * The dashboard's door (issue 18 item 2): its token, what answers without it, and the HTTP
 * bounds, against a dashboard whose pages are stubs (the pages themselves: cockpit.spec.ts).
 */
import * as assert from 'node:assert/strict'
import { stat, writeFile } from 'node:fs/promises'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { isCoded } from '../../src/common/index.js'
import { ObserveError } from '../../src/observe/errors.js'
import { loadDashboardToken, tokenMatches, TOKEN_FILE } from '../../src/observe/dashboard-auth.js'
import { serveDashboard, type DashboardServer } from '../../src/observe/dashboard-server.js'
import { HTTP_LIMITS, parseHostPort, sendText, serveLocalHttp } from '../../src/observe/http-bounds.js'
import { recordAttack, tempDir, waitFor } from '../utils/index.js'
import { startObservability } from '../../src/observe/index.js'
import type { DashboardApi } from '../../src/observe/dashboard-api.js'
import type { IdlegridNode } from '../../src/node/index.js'

const STUB = { page: async (name: string) => name === 'network' ? { secret: 'peers' } : undefined } as unknown as DashboardApi

describe('observe: the dashboard token and its HTTP bounds (issue 18 item 2)', function () {
  this.timeout(30_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  let token: string
  let server: DashboardServer
  let base: string

  before(async () => {
    dir = await tempDir('idlegrid-dash-')
    token = await loadDashboardToken(dir.path)
    server = await serveDashboard({ host: '127.0.0.1', port: 0 }, token, STUB)
    base = `http://127.0.0.1:${server.address.port}`
  })

  after(async () => {
    await server?.close()
    await dir?.cleanup()
  })

  it('the token is 32 random bytes in an owner-only file, kept across restarts; a damaged file is a clear error', async () => {
    assert.match(token, /^[0-9a-f]{64}$/)
    assert.equal((await stat(join(dir.path, TOKEN_FILE))).mode & 0o777, 0o600)
    assert.equal(await loadDashboardToken(dir.path), token)
    const other = await tempDir()
    try {
      await writeFile(join(other.path, TOKEN_FILE), 'short\n')
      await assert.rejects(loadDashboardToken(other.path), (err: Error) => isCoded(err, ObserveError, 'ERR_DASHBOARD_TOKEN') && /delete it/.test(err.message))
    } finally {
      await other.cleanup()
    }
    assert.equal(server.url, `${base}/`, 'the URL printed holds no token')
  })

  it('compares tokens whatever their length', () => {
    assert.equal(tokenMatches(token, token), true)
    assert.equal(tokenMatches(token.slice(0, 63), token), false)
    assert.equal(tokenMatches(token + '0', token), false)
    assert.equal(tokenMatches('', token), false)
    assert.equal(tokenMatches(undefined, token), false)
  })

  it('red team: without the right token every page, asset and JSON answers 401 and nothing else', async () => {
    const wrong = token.replace(/^./, c => c === 'a' ? 'b' : 'a')
    const tries: Array<[string, RequestInit?]> = [
      ['/'], ['/api/network'], ['/assets/chart.js'], ['/assets/app.js'], ['/nope'],
      [`/?token=${wrong}`], ['/?token='], [`/?token=${token.slice(0, 32)}`], [`/?token=${token}`], [`/api/network?token=${token}`],
      ['/session'], ['/session', { headers: { authorization: `Bearer ${wrong}` } }],
      ['/api/network', { headers: { authorization: `Bearer ${wrong}` } }],
      ['/api/network', { headers: { cookie: `idlegrid_dashboard=${wrong}` } }],
      ['/api/network', { headers: { cookie: `other=${token}` } }],
      ['/api/network', { headers: { authorization: `Basic ${token}` } }]
    ]
    let refused = 0
    let leaked = 0
    for (const [path, init] of tries) {
      const res = await fetch(base + path, { redirect: 'manual', ...init })
      const body = await res.text()
      if (res.status === 401) refused++
      if (body.includes('secret') || body.includes(token) || res.headers.get('set-cookie') != null) leaked++
    }
    recordAttack({ issue: '18.2', attack: 'read the dashboard without its token (none, wrong, truncated, in a URL, wrong cookie or scheme)', got: `${refused} of ${tries.length} requests answered 401, ${leaked} leaked data`, limit: 'token (sha256, constant-time compare) on every path but the token exchange' })
    assert.equal(refused, tries.length)
    assert.equal(leaked, 0)
  })

  it('a browser signs in on the page: the token goes once in a header to /session, which sets an HttpOnly SameSite=Strict cookie; bearer works for scripts', async () => {
    const page = await fetch(`${base}/`)
    assert.equal(page.status, 401)
    assert.match(await page.text(), /<script src="\/assets\/sign-in.js"/, 'the sign-in page, and nothing of the node')
    assert.equal((await fetch(`${base}/assets/sign-in.js`)).status, 200)
    const res = await fetch(`${base}/session`, { headers: { authorization: `Bearer ${token}` } })
    assert.equal(res.status, 204)
    const cookie = res.headers.get('set-cookie') ?? ''
    assert.match(cookie, /HttpOnly/)
    assert.match(cookie, /SameSite=Strict/)
    const signedIn = await fetch(`${base}/`, { headers: { cookie: cookie.split(';')[0] } })
    assert.equal(signedIn.status, 200)
    assert.match(signedIn.headers.get('content-security-policy') ?? '', /default-src 'self'/)
    assert.match(await signedIn.text(), /<script src="\/assets\/chart.js"/)
    const api = await fetch(`${base}/api/network`, { headers: { authorization: `Bearer ${token}` } })
    assert.deepEqual(await api.json(), { secret: 'peers' })
    assert.equal((await fetch(`${base}/api/unknown`, { headers: { authorization: `Bearer ${token}` } })).status, 404)
    const chart = await fetch(`${base}/assets/chart.js`, { headers: { authorization: `Bearer ${token}` } })
    assert.equal(chart.status, 200)
    assert.match(await chart.text(), /Chart/, 'Chart.js from node_modules')
  })

  it('refuses other methods, bodies and long URLs', async () => {
    const auth = { authorization: `Bearer ${token}` }
    assert.equal((await fetch(`${base}/api/network`, { method: 'POST', headers: auth, body: 'x' })).status, 405)
    assert.equal((await fetch(`${base}/api/network`, { method: 'DELETE', headers: auth })).status, 405)
    assert.equal((await rawRequest(server.address.port, `GET /api/network HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Length: 5\r\n\r\nhello`)).split(' ')[1], '413')
    assert.equal((await fetch(`${base}/api/network?${'a'.repeat(HTTP_LIMITS.urlChars)}`, { headers: auth })).status, 414)
    const bigHeader = await rawRequest(server.address.port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(HTTP_LIMITS.headerBytes * 2)}\r\n\r\n`)
    assert.ok(!bigHeader.startsWith('HTTP/1.1 200'), 'an oversized header is not served')
  })

  it(`red team: a flood of idle connections holds at most ${HTTP_LIMITS.connections}, and the owner gets in while it stays`, async () => {
    const sockets: Socket[] = []
    let closedByServer = 0
    for (let i = 0; i < 48; i++) {
      const s = connect(server.address.port, '127.0.0.1')
      s.on('error', () => {})
      s.on('close', () => { closedByServer++ })
      await new Promise<void>(resolve => { s.once('connect', resolve); s.once('close', resolve) })
      sockets.push(s)
    }
    await waitFor(() => closedByServer >= 48 - HTTP_LIMITS.connections, { timeoutMs: 10_000, what: 'the connections over the limit to be dropped' })
    const held = 48 - closedByServer
    // the flood stays open: the owner's connection takes the place of an idle one
    const status = await fetch(`${base}/api/network`, { headers: { authorization: `Bearer ${token}` } }).then(r => r.status, (err: Error) => err.message)
    for (const s of sockets) s.destroy()
    recordAttack({ issue: '38.3', attack: '48 idle TCP connections to the dashboard, kept open', got: `${held} held open, ${closedByServer} dropped; the owner's request meanwhile: ${status}`, limit: `${HTTP_LIMITS.connections} connections, the oldest idle one makes room` })
    assert.ok(held <= HTTP_LIMITS.connections)
    assert.equal(status, 200)
  })

  it('red team (issue 38.3): a page that rebinds its name to 127.0.0.1 gets 403 (a foreign Host), on the dashboard and on /metrics alike', async () => {
    const rebound = await rawRequest(server.address.port, `GET /api/network HTTP/1.1\r\nHost: evil.example:${server.address.port}\r\nAuthorization: Bearer ${token}\r\n\r\n`)
    assert.equal(rebound.split(' ')[1], '403', rebound)
    assert.match(rebound, /not a loopback name/)
    // the metrics endpoint is served by the same bounded server (http-bounds.ts)
    const metrics = await serveLocalHttp({ host: '127.0.0.1', port: 0 }, async (_req, _url, res) => { sendText(res, 200, '# metrics') })
    try {
      const read = await rawRequest(metrics.address.port, 'GET /metrics HTTP/1.1\r\nHost: evil.example\r\n\r\n')
      assert.equal(read.split(' ')[1], '403', read)
      assert.equal((await fetch(`http://localhost:${metrics.address.port}/metrics`)).status, 200)
    } finally {
      await metrics.close()
    }
    recordAttack({ issue: '38.3', attack: 'DNS rebinding: a page reads the dashboard and /metrics under its own name', got: '403 / 403', limit: 'loopback Host only' })
  })

  it('a taken port is an error naming the flag', async () => {
    const fakeNode = { libp2p: { services: {} }, config: { dataDir: dir.path, role: 'renter' }, peerId: { toString: () => 'me' } } as unknown as IdlegridNode
    await assert.rejects(startObservability(fakeNode, {}, { dashboard: { host: '127.0.0.1', port: server.address.port } }),
      new RegExp(`^Error: --dashboard 127\\.0\\.0\\.1:${server.address.port}: cannot listen \\(EADDRINUSE\\)`))
  })

  it('parses --dashboard and --metrics addresses', () => {
    assert.deepEqual(parseHostPort('9464', 'metrics'), { host: '127.0.0.1', port: 9464 })
    assert.deepEqual(parseHostPort('0.0.0.0:8080', 'dashboard'), { host: '0.0.0.0', port: 8080 })
    assert.deepEqual(parseHostPort('[::1]:8080', 'dashboard'), { host: '::1', port: 8080 })
    for (const bad of ['', 'x', '1.2.3.4:', ':80', '127.0.0.1:70000', 'http://x:1']) assert.throws(() => parseHostPort(bad, 'dashboard'), /--dashboard takes HOST:PORT/, bad)
  })
})

/** Sends `text` as is and resolves with what came back before the server closed or 2 s passed. */
async function rawRequest (port: number, text: string): Promise<string> {
  return await new Promise((resolve) => {
    const s = connect(port, '127.0.0.1')
    let got = ''
    const done = (): void => { s.destroy(); resolve(got) }
    s.setTimeout(2_000, done)
    s.on('data', (d) => { got += d.toString() })
    s.on('error', done)
    s.on('close', done)
    s.write(text)
  })
}
