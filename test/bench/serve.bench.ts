/**
 * Services (issue 17): the gateway + libp2p hop against direct HTTP to the same server in the
 * same run (added latency p50/p99, goal p50 ≤ 1 ms on loopback; throughput ratio, goal ≥ 0.7),
 * and routing quality with two replicas, one slowed by 50 ms (goal ≥ 90 % to the fast one).
 * Fair sides: the provider node and the upstream HTTP servers run in a child process
 * (test/bench/serve-provider.ts), as a provider is another machine, so
 *   direct  = bench client → upstream (child)
 *   gateway = bench client → gateway + renter node (bench) → libp2p → provider node (child) → upstream (child).
 * Besides wall time, the CPU each process spent per request (cpuUsPerRequest): a figure a
 * loaded machine inflates less. The floors under the hop: bare 100-byte round trips on open
 * libp2p streams to an echo in the child (libp2pEcho*; libp2pEchoAlone*: one at a time, so no
 * read, TLS record or wake-up is shared: several times the batched cost), and serve requests the child answers
 * without a service behind (serveFrames*: the hop with serve framing, no HTTP); and the
 * reference for one HTTP hop: a plain Node reverse proxy in this process to the same upstream
 * (plainProxy*, keep-alive both ways, no libp2p), and nginx as the reverse proxy (Debian's
 * package; test/bench/nginx-proxy.ts). proxyPathPerCore: requests per CPU-second of each proxy
 * path (issue 38 item 6), every process's CPU in a run less the direct run's.
 * The same hop in front of the repo's real inference service (exampleService: the example
 * sentiment service, a process of its own started by the provider child, asked for the
 * sentiment of a review): the ratio when the server does real work per request, beside the
 * echo's, which is the hop's cost alone.
 * SERVE_BENCH_N sets the requests per measurement (default 2000), SERVE_BENCH_CONCURRENCY the
 * clients of the throughput runs (default 16). To profile one part: SERVE_BENCH_PROFILE=gateway
 * (or frames, or echo) runs only that part's throughput, 5 × N requests; `node --cpu-prof` on
 * the bench profiles the child too (fork inherits the flags). To compare two builds:
 * SERVE_BENCH_PROFILE=sequential (2 × N requests one at a time, direct then through the
 * gateway: CPU µs per request of each process, which batching does not move); =idle prints
 * each process's CPU while nothing is asked of it.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { Agent, createServer, request } from 'node:http'
import { join } from 'node:path'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { multiaddr } from '@multiformats/multiaddr'
import { resolveConfig } from '../../src/config/index.js'
import { createNode } from '../../src/node/index.js'
import { Gateway, ReplicaPool } from '../../src/serve/index.js'
import { ServeChannel, serveFrameKind } from '../../src/serve/wire.js'
import { peerIdFromString } from '@libp2p/peer-id'
import { tempDir } from '../utils/index.js'
import { nginxProxy } from './nginx-proxy.js'
import { percentile } from './stats.js'
import type { Stream } from '@libp2p/interface'
import type { ServeProviderReply, ServeProviderRequest } from './serve-provider.js'

const N = Number(process.env.SERVE_BENCH_N ?? 2000)
const CONCURRENCY = Number(process.env.SERVE_BENCH_CONCURRENCY ?? 16)
const PROVIDER_SCRIPT = fileURLToPath(new URL('./serve-provider.js', import.meta.url))
const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })

async function get (url: string): Promise<number> {
  const t0 = performance.now()
  await new Promise<void>((resolve, reject) => {
    request(url, { agent }, res => { res.resume(); res.on('end', resolve); res.on('error', reject) }).on('error', reject).end()
  })
  return performance.now() - t0
}

async function sequential (url: string, n: number): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n; i++) out.push(await get(url))
  return out
}

async function concurrent (url: string, n: number, clients: number): Promise<number> {
  let next = 0
  const t0 = performance.now()
  await Promise.all(Array.from({ length: clients }, async () => { while (next++ < n) await get(url) }))
  return n / ((performance.now() - t0) / 1000)
}

/**
 * A plain Node reverse proxy to `port` (keep-alive both ways, no libp2p): what one HTTP hop in
 * Node costs by itself, the reference for the gateway's added cost.
 */
async function plainProxy (port: number): Promise<{ url: string, close: () => void }> {
  const upstreamAgent = new Agent({ keepAlive: true, maxSockets: 64 })
  const server = createServer((req, res) => {
    const out = request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers, agent: upstreamAgent }, answer => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    out.on('error', () => { res.destroy() })
    req.pipe(out)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', () => { resolve() }))
  const { port: own } = server.address() as { port: number }
  return { url: `http://127.0.0.1:${own}`, close: () => { server.closeAllConnections(); server.close(); upstreamAgent.destroy() } }
}

/** The provider process: one request at a time over IPC (replies come in order). */
class ProviderProcess {
  private readonly waiting: Array<(reply: ServeProviderReply) => void> = []
  private constructor (readonly child: ChildProcess) {
    child.on('message', (reply: ServeProviderReply) => { this.waiting.shift()?.(reply) })
  }

  static async start (dir: string): Promise<{ provider: ProviderProcess, addr: string, peerId: string }> {
    const child = fork(PROVIDER_SCRIPT, [dir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    const provider = new ProviderProcess(child)
    const ready = await new Promise<ServeProviderReply>((resolve, reject) => {
      const timer = setTimeout(() => { reject(new Error('serve provider did not start within 60 s')) }, 60_000)
      provider.waiting.push(r => { clearTimeout(timer); resolve(r) })
      child.once('exit', code => { clearTimeout(timer); reject(new Error(`serve provider exited with ${String(code)}`)) })
    })
    if (ready.type !== 'ready') throw new Error(`serve provider said ${ready.type} first`)
    return { provider, addr: ready.addr, peerId: ready.peerId }
  }

  async ask (req: ServeProviderRequest): Promise<ServeProviderReply> {
    if (this.child.exitCode != null) throw new Error(`serve provider exited with ${this.child.exitCode}`)
    const reply = new Promise<ServeProviderReply>((resolve, reject) => {
      const exited = (code: number | null): void => { reject(new Error(`serve provider exited with ${String(code)} before answering ${req.type}`)) }
      this.child.once('exit', exited)
      this.waiting.push(r => { this.child.off('exit', exited); resolve(r) })
    })
    this.child.send(req)
    return await reply
  }

  async cpuMs (): Promise<number> {
    const r = await this.ask({ type: 'cpu' })
    return r.type === 'cpu' ? r.cpuMs : NaN
  }

  async stop (): Promise<void> {
    if (this.child.exitCode != null) return
    const exited = new Promise(resolve => this.child.once('exit', resolve))
    this.child.send({ type: 'stop' })
    const timer = setTimeout(() => { this.child.kill('SIGKILL') }, 10_000)
    await exited
    clearTimeout(timer)
  }
}

/** the repo's example inference service (examples/services/sentiment): wink-nlp sentiment */
const SENTIMENT_SCRIPT = fileURLToPath(new URL('../../../examples/services/sentiment/server.mjs', import.meta.url))
/** a review-sized text (52 words, 3 sentences): what the example service is for */
const REVIEW = 'The room was clean and the staff were friendly, but the breakfast was cold and the coffee tasted burnt. ' +
  'We waited almost an hour for someone to fix the air conditioning on our second night. ' +
  'Still, the location is excellent and I would probably stay here again for a short trip.'

const ECHO_PROTOCOL = '/idlegrid/bench/echo/1.0.0'
const FRAMES_PROTOCOL = '/idlegrid/bench/serve-frames/1.0.0'

/** Round trips of `payload` on one open libp2p stream to the provider's echo, while `left()` says more are wanted. */
async function echoRoundTrips (stream: Stream, payload: Uint8Array, left: () => boolean): Promise<void> {
  const reader = stream.source[Symbol.asyncIterator]()
  const out: Uint8Array[] = []
  let wake: (() => void) | undefined
  let done = false
  const sinkDone = stream.sink((async function * () {
    while (true) {
      const next = out.shift()
      if (next != null) { yield next; continue }
      if (done) return
      await new Promise<void>(resolve => { wake = resolve })
      wake = undefined
    }
  })())
  while (left()) {
    out.push(payload)
    wake?.()
    for (let got = 0; got < payload.byteLength;) {
      const r = await reader.next()
      if (r.done === true) throw new Error('echo stream ended early')
      got += r.value.byteLength
    }
  }
  done = true
  wake?.()
  await sinkDone
  await stream.close()
}

/**
 * Serve requests in turn on one open stream to the provider's framing-only answerer, while `left()`
 * says more are wanted.
 */
async function frameRoundTrips (stream: Stream, leaseId: Uint8Array, left: () => boolean): Promise<void> {
  const ch = new ServeChannel(stream, 10_000)
  while (left()) {
    ch.send({ request: { leaseId, method: 'GET', path: '/x', headers: [{ name: 'user-agent', value: 'bench' }] } })
    ch.send({ end: {} })
    for (let f = await ch.next(); f == null || serveFrameKind(f) !== 'end'; f = await ch.next()) {
      if (f == null) throw new Error('frames stream ended early')
    }
  }
  await ch.close()
}

function ownCpuMs (): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

export default async function serveBench (): Promise<Record<string, unknown>> {
  const dir = await tempDir('idlegrid-serve-bench-')
  const gateways: Gateway[] = []
  const closers: Array<() => void> = []
  let provider: ProviderProcess | undefined
  const renter = await createNode(resolveConfig({ role: 'renter', flags: { dataDir: join(dir.path, 'renter'), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], heartbeatSeconds: 60 } }))
  try {
    const started = await ProviderProcess.start(dir.path)
    provider = started.provider
    const providerId = peerIdFromString(started.peerId)
    await renter.libp2p.dial(multiaddr(started.addr))
    const lease = async (delayMs: number): Promise<{ id: string, leaseId: Uint8Array, port: number }> => {
      const r = await (provider as ProviderProcess).ask({ type: 'lease', renter: renter.peerId.toString(), delayMs })
      if (r.type !== 'lease') throw new Error(`serve provider said ${r.type} to a lease`)
      return { id: r.leaseId, leaseId: new Uint8Array(Buffer.from(r.leaseId, 'hex')), port: r.port }
    }
    const gateway = async (
      replicas: Array<{ id: string, leaseId: Uint8Array }>
    ): Promise<{ url: string, pool: ReplicaPool }> => {
      const pool = new ReplicaPool(64)
      for (const r of replicas) pool.add({ id: r.id, leaseId: r.leaseId, provider: providerId, region: '', state: 'ready' })
      const gw = new Gateway(renter.libp2p, pool, { port: 0, bind: '127.0.0.1', maxBodyBytes: 1 << 20, timeoutMs: 10_000, maxInflight: 1024 })
      gateways.push(gw)
      return { url: await gw.start(), pool }
    }
    /**
     * requests/s of `n` requests from CONCURRENCY clients, and the CPU µs per request of this
     * process and the provider's
     */
    const measured = async (
      url: string,
      n: number
    ): Promise<{ rps: number, benchCpuUs: number, providerCpuUs: number }> => {
      const [own0, child0] = [ownCpuMs(), await (provider as ProviderProcess).cpuMs()]
      const rps = await concurrent(url, n, CONCURRENCY)
      const [own1, child1] = [ownCpuMs(), await (provider as ProviderProcess).cpuMs()]
      return { rps, benchCpuUs: (own1 - own0) * 1000 / n, providerCpuUs: (child1 - child0) * 1000 / n }
    }
    /**
     * `n` requests one after another: their latencies, and the CPU µs per request of each process.
     * Nothing batches here, so the CPU figure does not move with the throughput a run happened to
     * reach (the concurrent one does: a faster run shares more reads and writes): the steadier
     * figure to compare two versions with.
     */
    const timedSequential = async (
      url: string,
      n: number
    ): Promise<{ ms: number[], benchCpuUs: number, providerCpuUs: number }> => {
      const [own0, child0] = [ownCpuMs(), await (provider as ProviderProcess).cpuMs()]
      const ms = (await sequential(url, n)).sort((a, b) => a - b)
      const [own1, child1] = [ownCpuMs(), await (provider as ProviderProcess).cpuMs()]
      return { ms, benchCpuUs: (own1 - own0) * 1000 / n, providerCpuUs: (child1 - child0) * 1000 / n }
    }

    // the hop: one replica, the same server reached directly and through the gateway
    const one = await lease(0)
    const direct = `http://127.0.0.1:${one.port}/x`
    const via = `${(await gateway([one])).url}/x`
    await sequential(direct, 200)
    await sequential(via, 200)
    /**
     * The floors: bare round trips on open libp2p streams (TLS + yamux) with a payload the size
     * of one request's frames, and serve requests answered by the provider without a service
     * (serve framing, no HTTP); as many streams as clients.
     */
    const floor = async (
      protocol: string,
      n: number,
      clients = CONCURRENCY
    ): Promise<{ rps: number, benchCpuUs: number, providerCpuUs: number }> => {
      const streams = await Promise.all(
        Array.from({ length: clients }, async () => await renter.libp2p.dialProtocol(providerId, protocol))
      )
      const [own0, child0] = [ownCpuMs(), await (provider as ProviderProcess).cpuMs()]
      let next = 0
      const t0 = performance.now()
      await Promise.all(streams.map(async s => {
        if (protocol === ECHO_PROTOCOL) await echoRoundTrips(s, new Uint8Array(100), () => next++ < n)
        else await frameRoundTrips(s, one.leaseId, () => next++ < n)
      }))
      const rps = n / ((performance.now() - t0) / 1000)
      const [own1, child1] = [ownCpuMs(), await (provider as ProviderProcess).cpuMs()]
      return { rps, benchCpuUs: (own1 - own0) * 1000 / n, providerCpuUs: (child1 - child0) * 1000 / n }
    }
    const profiled = process.env.SERVE_BENCH_PROFILE
    if (profiled === 'idle') {
      const [own0, child0, t0] = [ownCpuMs(), await provider.cpuMs(), performance.now()]
      await new Promise(resolve => setTimeout(resolve, 5_000))
      const s = (performance.now() - t0) / 1000
      return {
        profiled,
        idleCpuMsPerS: { bench: (ownCpuMs() - own0) / s, provider: ((await provider.cpuMs()) - child0) / s }
      }
    }
    if (profiled === 'sequential') {
      const [directSeq, gatewaySeq] = [await timedSequential(direct, 2 * N), await timedSequential(via, 2 * N)]
      const us = (r: typeof directSeq): Record<string, number> => ({
        bench: Math.round(r.benchCpuUs),
        provider: Math.round(r.providerCpuUs)
      })
      return {
        profiled,
        requests: 2 * N,
        loadAvg1m: loadavg()[0],
        addedP50Ms: percentile(gatewaySeq.ms, 0.5) - percentile(directSeq.ms, 0.5),
        cpuUsPerSequentialRequest: { direct: us(directSeq), gateway: us(gatewaySeq) }
      }
    }
    if (profiled != null) {
      // one part, five times over, for `node --cpu-prof`
      const run = profiled === 'gateway' ? await measured(via, 5 * N) : await floor(profiled === 'echo' ? ECHO_PROTOCOL : FRAMES_PROTOCOL, 5 * N)
      return {
        profiled,
        requests: 5 * N,
        rps: Math.round(run.rps),
        cpuUsPerRequest: { bench: Math.round(run.benchCpuUs), provider: Math.round(run.providerCpuUs) }
      }
    }
    await concurrent(direct, 200, CONCURRENCY)
    await concurrent(via, 200, CONCURRENCY)
    const directSeq = await timedSequential(direct, N)
    const gatewaySeq = await timedSequential(via, N)
    const [d, g] = [directSeq.ms, gatewaySeq.ms]
    const directRun = await measured(direct, N)
    const gatewayRun = await measured(via, N)
    const proxy = await plainProxy(one.port)
    closers.push(proxy.close)
    await concurrent(`${proxy.url}/x`, 200, CONCURRENCY)
    const p = (await sequential(`${proxy.url}/x`, N)).sort((a, b) => a - b)
    const proxyRun = await measured(`${proxy.url}/x`, N)
    // nginx (Debian's package) as the reverse proxy: its own process, its CPU read from /proc
    const nginx = await nginxProxy(dir.path, one.port)
    let nginxRun: { rps: number, benchCpuUs: number, providerCpuUs: number, nginxCpuUs: number } | undefined
    let nginxP50Ms: number | undefined
    if ('url' in nginx) {
      closers.push(nginx.close)
      await concurrent(`${nginx.url}/x`, 200, CONCURRENCY)
      const np = (await sequential(`${nginx.url}/x`, N)).sort((a, b) => a - b)
      nginxP50Ms = percentile(np, 0.5)
      const n0 = nginx.cpuMs()
      const run = await measured(`${nginx.url}/x`, N)
      nginxRun = { ...run, nginxCpuUs: (nginx.cpuMs() - n0) * 1000 / N }
    }

    await floor(ECHO_PROTOCOL, 200)
    const echoRun = await floor(ECHO_PROTOCOL, N)
    // one round trip at a time: nothing shares a read, a TLS record or a wake-up (what each sequential request pays)
    const echoAloneRun = await floor(ECHO_PROTOCOL, Math.min(N, 1000), 1)
    await floor(FRAMES_PROTOCOL, 200)
    const framesRun = await floor(FRAMES_PROTOCOL, N)

    // the same hop in front of a real inference service: the example service's sentiment of a review
    const sentiment = await provider.ask({ type: 'service', renter: renter.peerId.toString(), script: SENTIMENT_SCRIPT })
    if (sentiment.type !== 'lease') throw new Error(`serve provider said ${sentiment.type} to a service`)
    const servicePath = `/sentiment?text=${encodeURIComponent(REVIEW)}`
    const serviceDirect = `http://127.0.0.1:${sentiment.port}${servicePath}`
    const serviceVia = `${(await gateway([{ id: sentiment.leaseId, leaseId: new Uint8Array(Buffer.from(sentiment.leaseId, 'hex')) }])).url}${servicePath}`
    await concurrent(serviceDirect, 200, CONCURRENCY)
    await concurrent(serviceVia, 200, CONCURRENCY)
    const serviceN = Math.min(N, 1000)
    const sd = (await sequential(serviceDirect, serviceN)).sort((a, b) => a - b)
    const sg = (await sequential(serviceVia, serviceN)).sort((a, b) => a - b)
    const serviceDirectRps = await concurrent(serviceDirect, serviceN, CONCURRENCY)
    const serviceGatewayRps = await concurrent(serviceVia, serviceN, CONCURRENCY)

    // routing: a fast replica and one slowed by 50 ms
    const fast = await lease(0)
    const slow = await lease(50)
    const routed = await gateway([fast, slow])
    const routedN = Math.min(N, 1000)
    await concurrent(`${routed.url}/x`, routedN, 4)
    const share = routed.pool.get(fast.id)!.served / routedN

    const round = (x: number): number => Math.round(x * 1000) / 1000
    // the proxy path's CPU per request: every process's CPU in the run (load client, proxy,
    // provider node, upstream) less the same in the direct run (client and upstream alone)
    const total = (r: { benchCpuUs: number, providerCpuUs: number }): number => r.benchCpuUs + r.providerCpuUs
    const pathUs = {
      gateway: total(gatewayRun) - total(directRun),
      plainProxy: total(proxyRun) - total(directRun),
      ...(nginxRun != null ? { nginx: total(nginxRun) + nginxRun.nginxCpuUs - total(directRun) } : {})
    }
    const perCpuSecond = (us: number): number => Math.round(1e6 / Math.max(1, us))
    return {
      requests: N,
      concurrency: CONCURRENCY,
      loadAvg1m: round(loadavg()[0] ?? 0),
      directP50Ms: round(percentile(d, 0.5)),
      directP99Ms: round(percentile(d, 0.99)),
      gatewayP50Ms: round(percentile(g, 0.5)),
      gatewayP99Ms: round(percentile(g, 0.99)),
      addedP50Ms: round(percentile(g, 0.5) - percentile(d, 0.5)),
      addedP99Ms: round(percentile(g, 0.99) - percentile(d, 0.99)),
      directRps: Math.round(directRun.rps),
      gatewayRps: Math.round(gatewayRun.rps),
      throughputRatio: round(gatewayRun.rps / directRun.rps),
      cpuUsPerRequest: {
        direct: { bench: Math.round(directRun.benchCpuUs), provider: Math.round(directRun.providerCpuUs) },
        gateway: { bench: Math.round(gatewayRun.benchCpuUs), provider: Math.round(gatewayRun.providerCpuUs) },
        plainProxy: { bench: Math.round(proxyRun.benchCpuUs), provider: Math.round(proxyRun.providerCpuUs) }
      },
      /** the same for the requests of the latency runs, one at a time: nothing batches (the steadier figure) */
      cpuUsPerSequentialRequest: {
        direct: { bench: Math.round(directSeq.benchCpuUs), provider: Math.round(directSeq.providerCpuUs) },
        gateway: { bench: Math.round(gatewaySeq.benchCpuUs), provider: Math.round(gatewaySeq.providerCpuUs) }
      },
      /**
       * issue 38 item 6: requests per CPU-second of the proxy path, in this run on these cores
       * (goal: gateway ≥ 0.9 × plainProxy)
       */
      proxyPathPerCore: {
        cpuUsPerRequest: Object.fromEntries(Object.entries(pathUs).map(([k, v]) => [k, Math.round(v)])),
        requestsPerCpuSecond: Object.fromEntries(Object.entries(pathUs).map(([k, v]) => [k, perCpuSecond(v)])),
        gatewayVsPlainProxy: round(pathUs.plainProxy / pathUs.gateway),
        ...(pathUs.nginx != null ? { gatewayVsNginx: round(pathUs.nginx / pathUs.gateway) } : { nginx: 'skipped' in nginx ? nginx.skipped : '' }),
        ...(nginxP50Ms != null
          ? { nginxAddedP50Ms: round(nginxP50Ms - percentile(d, 0.5)), nginxRps: Math.round(nginxRun?.rps ?? 0) }
          : {})
      },
      plainProxyRps: Math.round(proxyRun.rps),
      plainProxyRatio: round(proxyRun.rps / directRun.rps),
      /** one plain HTTP hop's added latency: the floor the gateway's addedP50Ms compares with */
      plainProxyAddedP50Ms: round(percentile(p, 0.5) - percentile(d, 0.5)),
      libp2pEchoRps: Math.round(echoRun.rps),
      libp2pEchoCpuUsPerRoundTrip: {
        bench: Math.round(echoRun.benchCpuUs),
        provider: Math.round(echoRun.providerCpuUs)
      },
      /** the same, one stream with one round trip in flight: the per-message cost when nothing batches */
      libp2pEchoAloneCpuUsPerRoundTrip: {
        bench: Math.round(echoAloneRun.benchCpuUs),
        provider: Math.round(echoAloneRun.providerCpuUs)
      },
      serveFramesRps: Math.round(framesRun.rps),
      serveFramesCpuUsPerRequest: {
        bench: Math.round(framesRun.benchCpuUs),
        provider: Math.round(framesRun.providerCpuUs)
      },
      exampleService: {
        request: 'GET /sentiment of a 52-word review (examples/services/sentiment, wink-nlp)',
        requests: serviceN,
        directP50Ms: round(percentile(sd, 0.5)),
        gatewayP50Ms: round(percentile(sg, 0.5)),
        addedP50Ms: round(percentile(sg, 0.5) - percentile(sd, 0.5)),
        addedP99Ms: round(percentile(sg, 0.99) - percentile(sd, 0.99)),
        directRps: Math.round(serviceDirectRps),
        gatewayRps: Math.round(serviceGatewayRps),
        throughputRatio: round(serviceGatewayRps / serviceDirectRps)
      },
      routingRequests: routedN,
      fastReplicaShare: round(share),
      goals: 'addedP50Ms <= 1, throughputRatio >= 0.7, fastReplicaShare >= 0.9, proxyPathPerCore.gatewayVsPlainProxy >= 0.9'
    }
  } finally {
    for (const gw of gateways) await gw.stop()
    for (const close of closers) close()
    agent.destroy()
    await provider?.stop()
    await renter.stop()
    await dir.cleanup()
  }
}
