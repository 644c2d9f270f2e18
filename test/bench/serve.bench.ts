/**
 * Services (issue 17): the gateway + libp2p hop against direct HTTP to the same server in the
 * same run (added latency p50/p99, goal p50 ≤ 1 ms on loopback; throughput ratio, goal ≥ 0.7),
 * and routing quality with two replicas, one slowed by 50 ms (goal ≥ 90 % to the fast one).
 * Renter and provider are real libp2p nodes in this process; the upstream is a small HTTP
 * server here too. SERVE_BENCH_N sets the requests per measurement (default 2000).
 */
import { Agent, createServer, request, type Server } from 'node:http'
import { randomBytes } from 'node:crypto'
import { loadavg } from 'node:os'
import { toHex } from '../../src/common/index.js'
import { Gateway, ReplicaPool, ServeHost, SERVE_HOST_SERVICE } from '../../src/serve/index.js'
import { serveHostService } from '../../src/serve/service.js'
import { startInProcessNetwork } from '../utils/index.js'
import { percentile } from './stats.js'

const N = Number(process.env.SERVE_BENCH_N ?? 2000)
const CONCURRENCY = 16
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

async function throughput (url: string, n: number): Promise<number> {
  let next = 0
  const t0 = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => { while (next++ < n) await get(url) }))
  return n / ((performance.now() - t0) / 1000)
}

function upstream (delayMs: number): Server {
  return createServer((_req, res) => {
    const answer = (): void => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"sentiment":0.5}') }
    if (delayMs > 0) setTimeout(answer, delayMs)
    else answer()
  })
}

async function listen (server: Server): Promise<number> {
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', () => { resolve() }))
  return (server.address() as { port: number }).port
}

export default async function serveBench (): Promise<Record<string, unknown>> {
  const hosts = [new ServeHost(), new ServeHost()]
  const net = await startInProcessNetwork({ providers: 2, renters: 1, extensions: (role, i) => role === 'provider' ? { services: { [SERVE_HOST_SERVICE]: serveHostService(hosts[i] as ServeHost) } } : {} })
  const servers: Server[] = []
  const gateways: Gateway[] = []
  try {
    const renter = net.renters[0]!
    for (const p of net.providers) await renter.libp2p.dial(p.libp2p.getMultiaddrs()[0] as any)
    const lease = async (p: number, delayMs: number): Promise<{ id: string, leaseId: Uint8Array, port: number }> => {
      const server = upstream(delayMs)
      servers.push(server)
      const port = await listen(server)
      const leaseId = new Uint8Array(randomBytes(16))
      const id = toHex(leaseId)
      hosts[p]!.leases.set(id, { leaseId: id, renter: renter.peerId.toString(), port, healthPath: '/', healthy: true, draining: false, inflight: 0, requests: 0, bytesIn: 0, bytesOut: 0 })
      return { id, leaseId, port }
    }
    const gateway = async (replicas: Array<{ p: number, id: string, leaseId: Uint8Array }>): Promise<{ url: string, pool: ReplicaPool }> => {
      const pool = new ReplicaPool(64)
      for (const r of replicas) pool.add({ id: r.id, leaseId: r.leaseId, provider: net.providers[r.p]!.peerId, region: '', state: 'ready' })
      const gw = new Gateway(renter.libp2p, pool, { port: 0, bind: '127.0.0.1', maxBodyBytes: 1 << 20, timeoutMs: 10_000, maxInflight: 1024 })
      gateways.push(gw)
      return { url: await gw.start(), pool }
    }

    // the hop: one replica, the same server reached directly and through the gateway
    const one = await lease(0, 0)
    const direct = `http://127.0.0.1:${one.port}/x`
    const via = `${(await gateway([{ p: 0, ...one }])).url}/x`
    await sequential(direct, 200)
    await sequential(via, 200)
    const d = (await sequential(direct, N)).sort((a, b) => a - b)
    const g = (await sequential(via, N)).sort((a, b) => a - b)
    const directRps = await throughput(direct, N)
    const gatewayRps = await throughput(via, N)

    // routing: a fast replica and one slowed by 50 ms
    const fast = await lease(0, 0)
    const slow = await lease(1, 50)
    const routed = await gateway([{ p: 0, ...fast }, { p: 1, ...slow }])
    const routedN = Math.min(N, 1000)
    let next = 0
    await Promise.all(Array.from({ length: 4 }, async () => { while (next++ < routedN) await get(`${routed.url}/x`) }))
    const share = routed.pool.get(fast.id)!.served / routedN

    const round = (x: number): number => Math.round(x * 1000) / 1000
    return {
      requests: N,
      loadAvg1m: round(loadavg()[0] ?? 0),
      directP50Ms: round(percentile(d, 0.5)),
      directP99Ms: round(percentile(d, 0.99)),
      gatewayP50Ms: round(percentile(g, 0.5)),
      gatewayP99Ms: round(percentile(g, 0.99)),
      addedP50Ms: round(percentile(g, 0.5) - percentile(d, 0.5)),
      addedP99Ms: round(percentile(g, 0.99) - percentile(d, 0.99)),
      directRps: Math.round(directRps),
      gatewayRps: Math.round(gatewayRps),
      throughputRatio: round(gatewayRps / directRps),
      routingRequests: routedN,
      fastReplicaShare: round(share),
      goals: 'addedP50Ms <= 1, throughputRatio >= 0.7, fastReplicaShare >= 0.9'
    }
  } finally {
    for (const gw of gateways) await gw.stop()
    for (const s of servers) { s.closeAllConnections(); s.close() }
    agent.destroy()
    await net.stop()
  }
}
