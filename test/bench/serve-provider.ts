/**
 * The provider side of test/bench/serve.bench.ts in a process of its own, as a provider is
 * another machine: an idlegrid provider node with the serve host, and the upstream HTTP
 * servers its leases pass requests to (the bench reaches the same servers directly for the
 * baseline). Started with fork() (so `node --cpu-prof` on the bench profiles it too); talks
 * over the IPC channel:
 *  - { type: 'lease', renter, delayMs } → { type: 'lease', leaseId (hex), port }: a new upstream
 *    answering after delayMs, hosted as a lease of `renter`
 *  - { type: 'service', renter, script } → { type: 'lease', leaseId, port }: the Node HTTP server
 *    `script` (the repo's example service) started as a process of its own on a free port,
 *    once its /health answers, hosted as a lease of `renter`
 *  - { type: 'cpu' } → { type: 'cpu', cpuMs }: this process's CPU time so far (the services it
 *    started are processes of their own, not counted)
 *  - { type: 'stop' }: closes everything and exits.
 * It also echoes every chunk on ECHO_PROTOCOL: bare libp2p round trips on open streams, the
 * floor under the gateway's hop (no HTTP, no serve framing); and on FRAMES_PROTOCOL answers each
 * serve request (Request … End) at once with a Response, one Body and End, as a provider would
 * without the service behind it (the hop with serve framing, no HTTP).
 * First message: { type: 'ready', addr, peerId }.
 *
 * usage: fork(serve-provider.js, [DATA_DIR])
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createServer, get, type Server } from 'node:http'
import { join } from 'node:path'
import { resolveConfig } from '../../src/config/index.js'
import { toHex } from '../../src/common/index.js'
import { createNode } from '../../src/node/index.js'
import { ServeHost, SERVE_HOST_SERVICE } from '../../src/serve/index.js'
import { freePort } from '../../src/serve/host.js'
import { serveHostService } from '../../src/serve/service.js'
import { ServeChannel, serveFrameKind } from '../../src/serve/wire.js'

export type ServeProviderRequest = { type: 'lease', renter: string, delayMs: number } | { type: 'service', renter: string, script: string } | { type: 'cpu' } | { type: 'stop' }
export type ServeProviderReply =
  | { type: 'ready', addr: string, peerId: string }
  | { type: 'lease', leaseId: string, port: number }
  | { type: 'cpu', cpuMs: number }

/** The bench's stand-in service: a small JSON answer, after `delayMs` when set. */
function upstream (delayMs: number): Server {
  return createServer((_req, res) => {
    const answer = (): void => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"sentiment":0.5}') }
    if (delayMs > 0) setTimeout(answer, delayMs)
    else answer()
  })
}

const dir = process.argv[2]
if (dir == null || process.send == null) {
  process.stderr.write('usage: fork(serve-provider.js, [DATA_DIR])\n')
  process.exit(2)
}
const send = (reply: ServeProviderReply): void => { process.send?.(reply) }

const host = new ServeHost()
const config = resolveConfig({ role: 'provider', flags: { dataDir: join(dir, 'provider'), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], heartbeatSeconds: 60 } })
const node = await createNode(config, { services: { [SERVE_HOST_SERVICE]: serveHostService(host) } })
const servers: Server[] = []
await node.libp2p.handle('/idlegrid/bench/echo/1.0.0', ({ stream }) => {
  stream.sink(stream.source).catch((err: Error) => { stream.abort(err) })
}, { maxInboundStreams: 64 })
const ANSWER = new TextEncoder().encode('{"sentiment":0.5}')
await node.libp2p.handle('/idlegrid/bench/serve-frames/1.0.0', ({ stream }) => {
  void (async () => {
    const ch = new ServeChannel(stream, 30_000)
    for (let f = await ch.next(); f != null; f = await ch.next()) {
      if (serveFrameKind(f) !== 'end') continue
      ch.send({ response: { status: 200, headers: [{ name: 'content-type', value: 'application/json' }], draining: false } })
      ch.send({ body: { data: ANSWER } })
      ch.send({ end: {} })
    }
    await ch.close()
  })().catch((err: Error) => { stream.abort(err) })
}, { maxInboundStreams: 64 })

async function lease (renter: string, delayMs: number): Promise<{ leaseId: string, port: number }> {
  const server = upstream(delayMs)
  servers.push(server)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', () => { resolve() }))
  return hosted(renter, (server.address() as { port: number }).port)
}

const services: ChildProcess[] = []

async function healthy (port: number): Promise<boolean> {
  return await new Promise(resolve => {
    get({ host: '127.0.0.1', port, path: '/health', timeout: 1000 }, res => { res.resume(); resolve(res.statusCode === 200) })
      .on('error', () => { resolve(false) }).on('timeout', function (this: { destroy: () => void }) { this.destroy() })
  })
}

async function service (renter: string, script: string): Promise<{ leaseId: string, port: number }> {
  const port = await freePort()
  const child = spawn(process.execPath, [script], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] })
  services.push(child)
  for (const deadline = Date.now() + 30_000; !await healthy(port);) {
    if (child.exitCode != null || Date.now() > deadline) throw new Error(`${script} did not answer /health on port ${port} within 30 s`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  return hosted(renter, port)
}

function hosted (renter: string, port: number): { leaseId: string, port: number } {
  const leaseId = toHex(new Uint8Array(randomBytes(16)))
  host.leases.set(leaseId, { leaseId, renter, host: '127.0.0.1', port, healthPath: '/', healthy: true, draining: false, inflight: 0, requests: 0, bytesIn: 0, bytesOut: 0 })
  return { leaseId, port }
}

function cpuMs (): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

const shutdown = async (): Promise<void> => {
  for (const s of servers) { s.closeAllConnections(); s.close() }
  for (const child of services) child.kill('SIGKILL')
  await node.stop()
  process.exit(0)
}

process.on('message', (msg: ServeProviderRequest) => {
  if (msg.type === 'lease') void lease(msg.renter, msg.delayMs).then(l => { send({ type: 'lease', ...l }) })
  else if (msg.type === 'service') {
    service(msg.renter, msg.script).then(l => { send({ type: 'lease', ...l }) }, (err: Error) => {
      process.stderr.write(`serve provider: ${err.message}\n`)
      void shutdown()
    })
  } else if (msg.type === 'cpu') send({ type: 'cpu', cpuMs: cpuMs() })
  else if (msg.type === 'stop') void shutdown()
})
process.on('disconnect', () => { void shutdown() })
send({ type: 'ready', addr: node.libp2p.getMultiaddrs()[0]?.toString() ?? '', peerId: node.peerId.toString() })
