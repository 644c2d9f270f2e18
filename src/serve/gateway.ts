/**
 * The renter's gateway: HTTP on 127.0.0.1 (another bind only with a bearer token), each
 * request forwarded over /idlegrid/serve/1.1.0 to a replica the pool picks, the answer
 * streamed back as it comes (chunked bodies, server-sent events). Idempotent requests (GET,
 * HEAD, OPTIONS, PUT, DELETE, or any with an Idempotency-Key) are retried on another replica
 * when one fails before answering; any request the replica never passed on is too. Bounded:
 * header bytes (431), body bytes (413), requests in flight (503), time (504); a broken or
 * garbage answer is a 502; no replica ready is a 503. Every request gives its slot back on
 * every path: answered, timed out, its client gone mid-body or mid-answer, or not reading.
 *
 * Only its owner drives it (issue 38): without a token (loopback) it answers only requests
 * whose Host is a loopback name and that no other site's page sent (Origin, Sec-Fetch-Site),
 * so neither a cross-site form nor DNS rebinding reaches the renter's paid replicas. The
 * renter's credentials never go to a provider (Cookie, Authorization), and a provider, which
 * may lie, never sets framing, hop-by-hop or cookie headers on the client: the gateway frames
 * every body itself.
 */
import { isLoopbackHost } from '../common/index.js'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { timingSafeEqual } from 'node:crypto'
import { forwardError, isForwardError, type ForwardError } from './errors.js'
import { forward, type Dialer, type ForwardAnswer } from './forward.js'
import { ServeStreamPool } from './stream-pool.js'
import { HOP_BY_HOP, settlesThisTurn, wireHeaders } from './wire.js'
import { noteDraining, type ReplicaPool } from './router.js'

export interface GatewayOptions {
  port: number
  bind: string
  token?: string
  maxBodyBytes: number
  /** header bytes Node accepts before answering 431 */
  maxHeaderBytes?: number
  /** requests in flight through the whole gateway */
  maxInflight?: number
  timeoutMs: number
  /** replicas tried per request */
  maxTries?: number
  /** the usage counter of a replica (src/serve/usage): each answered request is counted there */
  meter?: (replicaId: string) => { served: (bytesIn: number, bytesOut: number) => void } | undefined
}

const EMPTY = new Uint8Array(0)
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'])
/**
 * The renter's credentials: the gateway's own token, and the cookies of every port on this host
 * (the dashboard's among them).
 */
const NEVER_FORWARDED = new Set(['cookie', 'authorization', 'proxy-authorization'])
/** What a provider may not set on the client: framing (the gateway frames each body), hop-by-hop headers, cookies. */
const NEVER_RETURNED = new Set([...HOP_BY_HOP, 'set-cookie', 'set-cookie2', 'proxy-authenticate'])

export interface GatewayStats { requests: number, answered: number, retried: number, errors: Record<string, number> }

export class Gateway {
  private server?: Server
  private inflight = 0

  /** requests the gateway holds now (each gives its slot back on every path) */
  get inflightNow (): number {
    return this.inflight
  }

  readonly stats: GatewayStats = { requests: 0, answered: 0, retried: 0, errors: {} }

  /** serve streams kept open between requests, per provider */
  readonly streams: ServeStreamPool

  constructor (dialer: Dialer, private readonly pool: ReplicaPool, private readonly opts: GatewayOptions) {
    this.streams = new ServeStreamPool(dialer, opts.timeoutMs)
  }

  /** Requests being served now (each holds one of maxInflight). */
  get inFlight (): number {
    return this.inflight
  }

  /** Starts listening; resolves with the URL. */
  async start (): Promise<string> {
    const server = createServer(
      { maxHeaderSize: this.opts.maxHeaderBytes ?? 16 * 1024, requestTimeout: this.opts.timeoutMs + 5_000 },
      (req, res) => {
        this.serve(req, res).catch(() => { res.destroy() })
      }
    )
    server.keepAliveTimeout = 5_000
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.opts.port, this.opts.bind, () => { resolve() })
    })
    this.server = server
    return this.url
  }

  get url (): string {
    const a = this.server?.address()
    const port = typeof a === 'object' && a != null ? a.port : this.opts.port
    return `http://${this.opts.bind.includes(':') ? `[${this.opts.bind}]` : this.opts.bind}:${port}`
  }

  async stop (): Promise<void> {
    const server = this.server
    if (server == null) return
    this.server = undefined
    this.streams.close()
    server.closeAllConnections()
    await new Promise<void>(resolve => { server.close(() => { resolve() }) })
  }

  private fail (res: ServerResponse, status: number, message: string): void {
    this.stats.errors[status] = (this.stats.errors[status] ?? 0) + 1
    if (res.headersSent) { res.destroy(); return }
    const body = JSON.stringify({ error: message }) + '\n'
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
    res.end(body)
  }

  private authorised (req: IncomingMessage): boolean {
    if (this.opts.token == null) return true
    const given = Buffer.from(req.headers.authorization ?? '')
    const want = Buffer.from(`Bearer ${this.opts.token}`)
    return given.length === want.length && timingSafeEqual(given, want)
  }

  /**
   * Why a request without a token is not its owner's, or undefined. A page of another site can
   * send a form or a simple request to 127.0.0.1 (no preflight), and by DNS rebinding read the
   * answer under its own name: the Host then is that name, and the browser says where the request
   * came from (Origin; Sec-Fetch-Site, sent by current browsers on every request).
   */
  private foreign (req: IncomingMessage): string | undefined {
    if (this.opts.token != null) return undefined
    const host = req.headers.host ?? ''
    if (!isLoopbackHost(host)) return `Host "${host.slice(0, 64)}" is not a loopback name of this machine`
    const origin = req.headers.origin
    if (origin != null && !this.ownOrigin(origin)) return `a page of ${origin.slice(0, 64)} may not use this gateway`
    const site = req.headers['sec-fetch-site']
    if (site != null && site !== 'same-origin' && site !== 'none') return `a ${String(site).slice(0, 16)} page may not use this gateway`
    return undefined
  }

  /** Pages the gateway itself serves (a service's own web pages) may call it. */
  private ownOrigin (origin: string): boolean {
    try {
      const u = new URL(origin)
      const port = (this.server?.address() as { port?: number } | null)?.port
      return u.protocol === 'http:' && isLoopbackHost(u.host) && Number(u.port) === port
    } catch {
      return false
    }
  }

  private async serve (req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.stats.requests++
    const foreign = this.foreign(req)
    if (foreign != null) { this.fail(res, 403, foreign); req.resume(); return }
    if (!this.authorised(req)) { this.fail(res, 401, 'a bearer token is needed'); req.resume(); return }
    const declared = Number(req.headers['content-length'] ?? 0)
    if (declared > this.opts.maxBodyBytes) { this.refuseBody(req, res); return }
    if (this.inflight >= (this.opts.maxInflight ?? 1024)) { this.fail(res, 503, 'gateway at its bound of requests in flight'); req.resume(); return }
    this.inflight++
    // ends the request's every wait: its time is up, or its client is gone (the response closed)
    const over = new AbortController()
    const timer = setTimeout(() => {
      this.fail(res, 504, `no complete answer within ${this.opts.timeoutMs} ms`)
      over.abort(new Error('timed out'))
    }, this.opts.timeoutMs)
    const gone = (): void => { over.abort(new Error('the client is gone')) }
    res.once('close', gone)
    try {
      const body = await this.readBody(req, over.signal)
      if (body == null) { this.refuseBody(req, res); return }
      await this.route(req, res, body, over.signal)
    } catch (err) {
      // timed out (the 504 is on its way: do not cut it off) or the client is gone: nothing more to say
      if (!over.signal.aborted) throw err
    } finally {
      clearTimeout(timer)
      res.off('close', gone)
      this.inflight--
    }
  }

  /** 413, then the connection closes: the rest of the body is never read */
  private refuseBody (req: IncomingMessage, res: ServerResponse): void {
    res.setHeader('connection', 'close')
    res.once('finish', () => { req.destroy() })
    this.fail(res, 413, `body over ${this.opts.maxBodyBytes} bytes`)
  }

  /**
   * The whole body (kept for a retry), or undefined past the bound (reading stops; the connection
   * closes after the 413).
   */
  private async readBody (req: IncomingMessage, signal: AbortSignal): Promise<Uint8Array | undefined> {
    // neither a length nor chunks: no body (RFC 9112 6.3); Node discards the request once answered
    if (req.headers['content-length'] == null && req.headers['transfer-encoding'] == null) return EMPTY
    return await new Promise((resolve, reject) => {
      // a client that sends less than it declared and leaves, or stops sending: neither 'end' nor 'error' may come
      const stop = (): void => { reject(signal.reason ?? new Error('the client left before its body ended')) }
      signal.addEventListener('abort', stop, { once: true })
      req.once('close', () => { if (!req.complete) stop() })
      const chunks: Buffer[] = []
      let size = 0
      const onData = (chunk: Buffer): void => {
        size += chunk.byteLength
        if (size > this.opts.maxBodyBytes) {
          req.off('data', onData)
          req.pause()
          resolve(undefined)
          return
        }
        chunks.push(chunk)
      }
      req.on('data', onData)
      req.once('end', () => { signal.removeEventListener('abort', stop); resolve(Buffer.concat(chunks)) })
      req.once('error', reject)
    })
  }

  private async route (
    req: IncomingMessage,
    res: ServerResponse,
    body: Uint8Array,
    signal: AbortSignal
  ): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase()
    const idempotent = IDEMPOTENT.has(method) || req.headers['idempotency-key'] != null
    const named = connectionTokens(req.headers.connection)
    const headers = wireHeaders(req.rawHeaders).filter(h => !NEVER_FORWARDED.has(h.name) && !named.has(h.name))
    const tried = new Set<string>()
    let last: ForwardError | undefined
    for (let attempt = 0; attempt < (this.opts.maxTries ?? 3); attempt++) {
      if (res.writableEnded || res.destroyed || signal.aborted) return
      const replica = this.pool.pick(tried)
      if (replica == null) break
      tried.add(replica.id)
      if (attempt > 0) this.stats.retried++
      replica.inflight++
      let answer: ForwardAnswer | undefined
      try {
        answer = await forward(this.streams, replica, { method, path: req.url ?? '/', headers, body }, { timeoutMs: this.opts.timeoutMs, silenced: replica.silenced.signal })
        this.pool.observe(replica, answer.headMs)
        noteDraining(replica, answer.response)
        const sent = await this.stream(answer, res, signal, idempotent)
        this.opts.meter?.(replica.id)?.served(body.byteLength, sent)
        replica.served++
        this.stats.answered++
        return
      } catch (err) {
        const e = isForwardError(err)
          ? err
          : forwardError(502, String((err as Error)?.message ?? err), { passedOn: true })
        replica.failed++
        noteDraining(replica, e)
        last = e
        // a started answer cannot be taken back; a request the replica may have acted on is retried
        // only when idempotent
        if (res.headersSent || (e.passedOn && !idempotent)) break
      } finally {
        replica.inflight--
      }
    }
    if (last == null) this.fail(res, 503, 'no replica is ready')
    else this.fail(res, res.headersSent ? 502 : last.status, last.message)
  }

  /**
   * Streams the answer to the client; resolves with the body bytes received from the replica.
   * What has come by the time the answer would wait for more is held back and goes out with
   * the head in one write (a short answer is head, body and end in one write, as the service
   * itself would send it, not three); once the answer waits, the head goes out at once (a
   * server-sent event stream shows its first event without waiting) and the rest as it comes.
   * For an idempotent request the head waits for the first body bytes, so that an answer broken
   * before them can still go to another replica.
   */
  private async stream (
    answer: ForwardAnswer,
    res: ServerResponse,
    signal: AbortSignal,
    idempotent = false
  ): Promise<number> {
    try {
      res.statusCode = answer.response.status
      const headers: Record<string, string[]> = {}
      const named = connectionTokens(answer.response.headers.filter(h => h.name.toLowerCase() === 'connection').map(h => h.value).join(','))
      for (const h of answer.response.headers) {
        const name = h.name.toLowerCase()
        if (!NEVER_RETURNED.has(name) && !named.has(name)) (headers[name] ??= []).push(h.value)
      }
      for (const [name, values] of Object.entries(headers)) res.setHeader(name, values)
    } catch (err: any) {
      for (const name of res.getHeaderNames()) res.removeHeader(name)
      answer.abort()
      throw forwardError(502, `the replica sent headers that are not valid HTTP: ${String(err?.message ?? err)}`, { passedOn: true })
    }
    if (answer.whole != null) {
      // the whole answer came with its head: head and body in one write, with no turn of the event loop
      const whole = answer.whole
      let bytes = 0
      for (const chunk of whole) bytes += chunk.byteLength
      res.end(whole.length === 1 ? whole[0] : Buffer.concat(whole, bytes))
      return bytes
    }
    res.on('close', () => { if (!res.writableFinished) answer.abort() })
    let held: Buffer[] | undefined = []
    let heldBytes = 0
    let bytes = 0
    // an idempotent answer is held a little past its first body bytes for its end (until then)
    let holdUntil = 0
    try {
      while (true) {
        const next = answer.body.next()
        // an idempotent request's head waits for its first body bytes (or its end), then up to
        // IDEMPOTENT_HOLD_MS for the end: an answer that breaks before then (its provider killed
        // between its body and its End) has sent the client nothing, so it is retried
        const holdHead = idempotent && held != null && held.length === 0
        const waitMs = idempotent ? Math.max(0, holdUntil - performance.now()) : 0
        if (held != null && (heldBytes >= HOLD_BYTES || (!holdHead && !await settlesThisTurn(next, waitMs)))) {
          // the answer waits (or is long): what is held goes out now, the rest as it comes
          if (held.length === 0) res.flushHeaders()
          for (const chunk of held) res.write(chunk)
          held = undefined
        }
        const r = await next
        if (r.done === true) break
        const chunk = r.value
        bytes += chunk.byteLength
        if (res.writableEnded || res.destroyed) { answer.abort(); return bytes }
        if (held != null) {
          if (held.length === 0) holdUntil = performance.now() + IDEMPOTENT_HOLD_MS
          held.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
          heldBytes += chunk.byteLength
        } else if (!res.write(chunk) && !await drained(res, signal)) { answer.abort(); return bytes }
      }
    } catch (err) {
      // nothing went out yet: another replica may answer instead, on a clean slate
      if (!res.headersSent) for (const name of res.getHeaderNames()) res.removeHeader(name)
      throw err
    }
    // all of a short answer came at once: head and body in one write, with its length
    if (held != null) res.end(held.length === 1 ? held[0] : Buffer.concat(held))
    else res.end()
    return bytes
  }
}

/** Body bytes held back to go out with the head. */
const HOLD_BYTES = 64 * 1024
/**
 * How long an idempotent answer's head and first bytes wait for its end. A provider SIGKILLed
 * between an answer's body and its End lost the request once the head had gone out (a kill-and-
 * replace run in CI); held, the request goes to another replica. Longer answers, and event
 * streams, go out after this.
 */
const IDEMPOTENT_HOLD_MS = 25

/**
 * Resolves true once `res` takes more, false when it closed or `signal` ended the request (a client
 * that stops reading).
 */
async function drained (res: ServerResponse, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted || res.destroyed) return false
  return await new Promise(resolve => {
    const done = (ok: boolean) => (): void => {
      res.off('drain', onDrain)
      res.off('close', onClose)
      signal.removeEventListener('abort', onClose)
      resolve(ok)
    }
    const onDrain = done(true)
    const onClose = done(false)
    res.once('drain', onDrain)
    res.once('close', onClose)
    signal.addEventListener('abort', onClose, { once: true })
  })
}

/** Header names a Connection header lists (they describe that connection only, RFC 9110 7.6.1). */
function connectionTokens (value: string | string[] | undefined): Set<string> {
  const text = Array.isArray(value) ? value.join(',') : value ?? ''
  return new Set(text.split(',').map(t => t.trim().toLowerCase()).filter(t => t !== ''))
}
