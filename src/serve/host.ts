/**
 * The provider side of services: the leases this provider runs (a port each, picked here and
 * given to the service as PORT), their health checks, and /idlegrid/serve/1.1.0, which passes
 * each request of the lease's renter to the service (on 127.0.0.1, or at its container's address
 * on the lease's own network under docker) and streams the answer back,
 * then waits on the same stream for the renter's next request (1.0.0 gateways close after one).
 * A lease that never becomes healthy, or stops answering its health check, is cancelled: the
 * renter sees its job end and replaces the replica.
 */
import { request as httpRequest, Agent, type ClientRequest, type IncomingMessage } from 'node:http'
import { createServer } from 'node:net'
import { toHex } from '../common/index.js'
import { type ServeFrame } from '../../protocols/serve.js'
import { isStreamError, streamError } from './errors.js'
import { ServeChannel, serveFrameKind, wireHeaders } from './wire.js'
import { relayBody, relayWhole } from './answer-relay.js'
import type { LeaseHost, LeaseRunHooks, RunHandle } from '../exec/index.js'
import type { UsageReporter } from './usage/index.js'
import type { Logger, PeerId, Stream } from '@libp2p/interface'

export const HOST_DEFAULTS = {
  /** requests one lease serves at once; more get OVERLOADED */
  maxInflight: 64,
  /** request body bytes passed on */
  maxBodyBytes: 16 * 1024 * 1024,
  /** health check interval */
  healthIntervalMs: 1_000,
  /** from start to the first passing health check */
  startupMs: 60_000,
  /** failed checks in a row that end a lease that was healthy */
  healthFailures: 3,
  /** from the request to the service's response head */
  responseMs: 60_000,
  /** longest silence between frames */
  idleMs: 30_000,
  /** a usage statement per lease this often (src/serve/usage; 1 s to 1 h) */
  usageIntervalMs: 60_000,
  /** longest wait for the next request on a stream whose last answer ended (then a clean close) */
  keepAliveMs: 30_000
}

export type HostOptions = Partial<typeof HOST_DEFAULTS>

export interface HostedLease {
  leaseId: string
  renter: string
  /**
   * where the service is reached: 127.0.0.1 (process runner), its container's address on the
   * lease's network (docker)
   */
  host: string
  port: number
  healthPath: string
  healthy: boolean
  draining: boolean
  inflight: number
  requests: number
  bytesIn: number
  bytesOut: number
}

/** A free TCP port on 127.0.0.1 (the kernel's pick; the service binds it moments later). */
export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => { typeof address === 'object' && address != null ? resolve(address.port) : reject(new Error('no port')) })
    })
  })
}

export class ServeHost implements LeaseHost {
  readonly leases = new Map<string, HostedLease>()
  /**
   * Each lease's requests passed on to its service and not yet answered: cut when its run ends.
   * A container that dies takes its address with it and sends no reset, so a request on a kept-alive
   * connection to it would wait for its time bound (the gateway's 504) instead of failing at once
   * and going to another replica.
   */
  private readonly passing = new Map<string, Set<ClientRequest>>()
  private readonly opts: typeof HOST_DEFAULTS
  private readonly agent: Agent
  /** proposes each lease's usage to its renter (set by the serve host service when the node has a ledger) */
  usage?: UsageReporter

  constructor (
    opts: HostOptions = {},
    private readonly log: Logger = Object.assign(() => {}, {
      error: () => {},
      trace: () => {},
      enabled: false
    }) as any
  ) {
    this.opts = { ...HOST_DEFAULTS, ...opts }
    this.agent = new Agent({ keepAlive: true, maxSockets: this.opts.maxInflight })
  }

  async begin (lease: {
    leaseId: string
    renter: string
    healthPath: string
    priceMicroUsdPerGpuHour?: number
  }): Promise<LeaseRunHooks> {
    const port = await freePort()
    const hosted: HostedLease = { leaseId: lease.leaseId, renter: lease.renter, healthPath: lease.healthPath, host: '127.0.0.1', port, healthy: false, draining: false, inflight: 0, requests: 0, bytesIn: 0, bytesOut: 0 }
    this.leases.set(lease.leaseId, hosted)
    this.passing.set(lease.leaseId, new Set())
    const usage = this.usage
    // a lease is one GPU slot; its usage bills at the award's price
    usage?.openHosted(lease.leaseId, lease.renter, lease.priceMicroUsdPerGpuHour ?? 0, hosted)
    let timer: NodeJS.Timeout | undefined
    return {
      env: { PORT: String(port) },
      port,
      started: (handle) => {
        // health checks fail (within the start-up bound) until the container has its address
        if (handle.endpoint != null) {
          hosted.host = ''
          handle.endpoint().then(at => { hosted.host = at.host }, (err: Error) => { handle.cancel(err.message) })
        }
        timer = this.watch(hosted, handle)
      },
      preempting: () => { hosted.draining = true },
      ended: () => {
        clearInterval(timer)
        hosted.draining = true
        this.leases.delete(lease.leaseId)
        for (const req of this.passing.get(lease.leaseId) ?? []) req.destroy(new Error('the service\'s run ended'))
        this.passing.delete(lease.leaseId)
        // the last interval, then the account closes
        usage?.closeHosted(lease.leaseId)
      }
    }
  }

  /** Health checks every interval; cancels the run when it never gets healthy or stops being so. */
  private watch (hosted: HostedLease, handle: RunHandle): NodeJS.Timeout {
    const started = Date.now()
    let failures = 0
    let checking = false
    const timer = setInterval(() => {
      if (checking) return
      checking = true
      void this.check(hosted).then(ok => {
        checking = false
        if (ok) {
          hosted.healthy = true
          failures = 0
          return
        }
        failures++
        if (!hosted.healthy && Date.now() - started > this.opts.startupMs) {
          clearInterval(timer)
          handle.cancel(`service not healthy on ${hosted.healthPath} within ${this.opts.startupMs} ms`)
        } else if (hosted.healthy && failures >= this.opts.healthFailures) {
          clearInterval(timer)
          hosted.draining = true
          handle.cancel(`health check ${hosted.healthPath} failed ${failures} times in a row`)
        }
      })
    }, this.opts.healthIntervalMs)
    return timer
  }

  private async check (hosted: HostedLease): Promise<boolean> {
    if (hosted.host === '') return false
    return await new Promise(resolve => {
      const req = httpRequest({ host: hosted.host, port: hosted.port, path: hosted.healthPath, method: 'GET', agent: false, timeout: Math.max(500, this.opts.healthIntervalMs * 2) }, res => {
        res.resume()
        resolve(res.statusCode != null && res.statusCode >= 200 && res.statusCode < 300)
      })
      req.on('timeout', () => { req.destroy(); resolve(false) })
      req.on('error', () => { resolve(false) })
      req.end()
    })
  }

  /**
   * One serve stream: requests one after another, each passed on to its lease's service and its
   * answer streamed back.
   */
  async handle (stream: Stream, remote: PeerId): Promise<void> {
    const ch = new ServeChannel(stream, this.opts.idleMs)
    // the first head comes at once: a stream opened and left idle is not held for long
    let waitMs = Math.min(this.opts.idleMs, 5_000)
    let between = false
    while (true) {
      let first: ServeFrame | undefined
      try {
        first = await ch.next(waitMs)
      } catch (err: any) {
        // between requests a silent renter is no fault: the stream just closes
        if (between && isStreamError(err) && err.wireCode === 'TIMEOUT') { await ch.close(); return }
        await this.refuse(ch, remote, err)
        return
      }
      if (first == null) { await ch.close(); return }
      if (!await this.request(ch, first, remote)) return
      waitMs = this.opts.keepAliveMs
      between = true
    }
  }

  /** One request on the stream; false when it failed (the stream is closed then). */
  private async request (ch: ServeChannel, first: ServeFrame, remote: PeerId): Promise<boolean> {
    let hosted: HostedLease | undefined
    try {
      if (serveFrameKind(first) !== 'request') throw streamError('PROTOCOL', 'the first frame must be Request')
      const head = first.request as ServeFrame.Request
      // checked before the lease is counted, so a refusal never touches its in-flight count
      if (!/^[A-Z]{1,16}$/.test(head.method) || !/^\/[\x21-\x7e]{0,8191}$/.test(head.path)) throw streamError('PROTOCOL', 'bad method or path')
      hosted = this.leases.get(toHex(head.leaseId))
      // someone else's lease answers like no lease: nothing to learn from probing ids
      if (hosted == null || hosted.renter !== remote.toString()) { hosted = undefined; throw streamError('NO_LEASE', 'no such lease here') }
      if (hosted.draining) { hosted = undefined; throw streamError('DRAINING', 'the replica is stopping') }
      if (hosted.host === '') { hosted = undefined; throw streamError('UPSTREAM', 'the service has no address yet') }
      if (hosted.inflight >= this.opts.maxInflight) { hosted = undefined; throw streamError('OVERLOADED', `${this.opts.maxInflight} requests already in flight`) }
      hosted.inflight++
      hosted.requests++
      await this.pass(ch, head, hosted)
      return true
    } catch (err: any) {
      await this.refuse(ch, remote, err)
      return false
    } finally {
      if (hosted != null) hosted.inflight--
    }
  }

  private async refuse (ch: ServeChannel, remote: PeerId, err: any): Promise<void> {
    const e = isStreamError(err) ? err : streamError('UPSTREAM', String(err?.message ?? err))
    this.log('serve request from %p failed: %s %s', remote, e.wireCode, e.message)
    await ch.fail(e)
  }

  private async pass (ch: ServeChannel, head: ServeFrame.Request, hosted: HostedLease): Promise<void> {
    const headers: Record<string, string[]> = {}
    for (const h of head.headers) (headers[h.name] ??= []).push(h.value)
    const req = httpRequest({
      host: hosted.host,
      port: hosted.port,
      method: head.method,
      path: head.path,
      headers,
      agent: this.agent
    })
    const passing = this.passing.get(hosted.leaseId)
    passing?.add(req)
    req.once('close', () => { passing?.delete(req) })
    // the time bound (from the request's end) rejects this promise itself: no race of promises, this runs per request
    let expire = (): void => {}
    const response = new Promise<IncomingMessage>((resolve, reject) => {
      req.once('response', resolve)
      req.once('error', err => { reject(streamError('UPSTREAM', `service unreachable: ${err.message}`)) })
      expire = () => { req.destroy(); reject(streamError('TIMEOUT', `no answer from the service within ${this.opts.responseMs} ms`)) }
    })
    response.catch(() => {})
    // the body, bounded, as it comes (a request without one has its End here already: no wait).
    // Up to HELD_BODY_BYTES it is held, then sent whole with its Content-Length: the wire carries
    // no framing headers, and servers that read bodies by length (CGI, many small ones) take no
    // chunked body. A longer one streams chunked.
    let body = 0
    let held: Uint8Array[] | undefined = []
    try {
      while (true) {
        const frame = ch.tryNext() ?? await ch.next()
        if (frame == null) throw streamError('PROTOCOL', 'the request ended without End')
        const kind = serveFrameKind(frame)
        if (kind === 'end') break
        if (kind !== 'body') throw streamError('PROTOCOL', `unexpected ${kind} frame in the request body`)
        const data = (frame.body as ServeFrame.Body).data
        body += data.byteLength
        if (body > this.opts.maxBodyBytes) throw streamError('TOO_LARGE', `request body over ${this.opts.maxBodyBytes} bytes`)
        hosted.bytesIn += data.byteLength
        if (held != null && body <= HELD_BODY_BYTES) { held.push(data); continue }
        if (held != null) {
          for (const part of held) req.write(part)
          held = undefined
        }
        if (!req.write(data)) await drained(req, this.opts.idleMs)
      }
    } catch (err) {
      // a request that will never end must not hold the service's connection (an agent socket) open
      req.destroy()
      throw err
    }
    if (held != null && body > 0) {
      req.setHeader('content-length', String(body))
      for (const part of held) req.write(part)
    }
    req.end()
    const timer = setTimeout(expire, this.opts.responseMs)
    let res: IncomingMessage
    try {
      res = await response
    } finally {
      clearTimeout(timer)
    }
    // head, body and End go out in one write when they come together (a short answer);
    // once the answer waits, what came goes out and the rest as it comes
    ch.hold()
    ch.send({
      response: { status: res.statusCode ?? 502, headers: wireHeaders(res.rawHeaders), draining: hosted.draining }
    })
    if (res.complete) relayWhole(res, ch, hosted)
    else await relayBody(res, ch, hosted)
    // the stream stays open for the renter's next request
    ch.send({ end: {} })
    ch.flush()
  }
}

/**
 * Resolves once the service takes more of the request body; a service that stops reading
 * for `idleMs` (or closes) fails the request, which would otherwise hold its in-flight slot for good.
 */
async function drained (req: ClientRequest, idleMs: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const done = (err?: Error): void => {
      clearTimeout(timer)
      req.off('drain', onDrain)
      req.off('close', onClose)
      if (err == null) resolve()
      else reject(err)
    }
    const onDrain = (): void => { done() }
    const onClose = (): void => { done(streamError('UPSTREAM', 'the service closed while taking the request body')) }
    const timer = setTimeout(() => { done(streamError('TIMEOUT', `the service took no request body for ${idleMs} ms`)) }, idleMs)
    req.on('drain', onDrain)
    req.on('close', onClose)
  })
}

/** A request body up to this size goes to the service whole, with its Content-Length. */
const HELD_BODY_BYTES = 1024 * 1024
