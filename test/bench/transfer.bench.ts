/**
 * Transfer benchmark: a 256 MiB payload (IDLEGRID_BENCH_TRANSFER_MIB to change) over
 *  - a plain TCP socket and a Node `tls` socket on loopback (the baselines),
 *  - one libp2p stream between two idlegrid nodes built with the node's own transport,
 *    encrypter and muxer settings (raw bytes),
 *  - the job protocol itself: input upload and output download of a job that copies its input
 *    to its output (framing, sha256 on both sides and disk writes included),
 * all in the same run, reported as MiB/s and as ratios to the TLS copy; and the time from
 * award to the first log line of a small job.
 */
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { writeFile, readFile } from 'node:fs/promises'
import { createServer as createTcpServer, connect as tcpConnect, type Socket } from 'node:net'
import { join } from 'node:path'
import { connect as tlsConnect, createServer as createTlsServer } from 'node:tls'
import { resolveConfig } from '../../src/config/index.js'
import { jobExecService, ProcessRunner, runAttempt, type JobExecService } from '../../src/exec/index.js'
import { createNode, type IdlegridNode } from '../../src/node/index.js'
import { makeAward } from '../exec-fixtures.js'
import { tempDir } from '../utils/index.js'

const MiB = 1024 * 1024
const SLICE = MiB

function mibps (bytes: number, ms: number): number {
  return Math.round(bytes / MiB / (ms / 1000))
}

/** Writes `payload` in slices, honouring backpressure; resolves when the receiver has counted it all. */
async function socketCopy (client: Socket, received: Promise<number>, payload: Buffer): Promise<number> {
  const t0 = performance.now()
  for (let at = 0; at < payload.length; at += SLICE) {
    if (!client.write(payload.subarray(at, at + SLICE))) await new Promise(resolve => client.once('drain', resolve))
  }
  await received
  const ms = performance.now() - t0
  client.destroy()
  return ms
}

function countingServer (size: number): { onConnection: (s: Socket) => void, received: Promise<number> } {
  let resolveDone!: (n: number) => void
  const received = new Promise<number>(resolve => { resolveDone = resolve })
  return {
    received,
    onConnection: (socket) => {
      let got = 0
      socket.on('data', (chunk: Buffer) => { got += chunk.length; if (got >= size) resolveDone(got) })
      socket.on('error', () => {})
    }
  }
}

async function tcpCopy (payload: Buffer): Promise<number> {
  const counter = countingServer(payload.length)
  const server = createTcpServer(counter.onConnection)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const client = tcpConnect(port, '127.0.0.1')
  await new Promise(resolve => client.once('connect', resolve))
  const ms = await socketCopy(client, counter.received, payload)
  server.close()
  return ms
}

async function tlsCopy (payload: Buffer, dir: string): Promise<number | undefined> {
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=bench',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' })
  } catch {
    return undefined
  }
  const counter = countingServer(payload.length)
  const server = createTlsServer({ key: await readFile(join(dir, 'key.pem')), cert: await readFile(join(dir, 'cert.pem')), minVersion: 'TLSv1.3' }, counter.onConnection)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const client = tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false })
  await new Promise(resolve => client.once('secureConnect', resolve))
  const ms = await socketCopy(client, counter.received, payload)
  server.close()
  return ms
}

async function node (dir: string, name: string, role: 'provider' | 'renter', services: Record<string, (c: any) => unknown> = {}): Promise<IdlegridNode> {
  const config = resolveConfig({ role, flags: { dataDir: join(dir, name), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], heartbeatSeconds: 60 } })
  return await createNode(config, { services })
}

export default async (): Promise<Record<string, unknown>> => {
  const size = Number(process.env.IDLEGRID_BENCH_TRANSFER_MIB ?? 256) * MiB
  const tmp = await tempDir('idlegrid-bench-transfer-')
  const payload = randomBytes(size)
  const nodes: IdlegridNode[] = []
  try {
    const tcpMs = await tcpCopy(payload)
    const tlsMs = await tlsCopy(payload, tmp.path)

    const provider = await node(tmp.path, 'provider', 'provider', {
      exec: jobExecService({
        runner: new ProcessRunner(),
        gpus: [{ index: 0, uuid: 'GPU-sim-h100-0', simulated: true, modelKey: 'h100-80gb' }],
        workRoot: join(tmp.path, 'work'),
        requireAccepted: false,
        maxInputBytes: size + MiB,
        maxOutputBytes: size + MiB
      })
    })
    nodes.push(provider)
    const renter = await node(tmp.path, 'renter', 'renter')
    nodes.push(renter)
    const connection = await renter.libp2p.dial(provider.libp2p.getMultiaddrs()[0] as any)

    // raw bytes over one stream
    let got = 0
    let resolveRaw!: () => void
    const rawDone = new Promise<void>(resolve => { resolveRaw = resolve })
    await provider.libp2p.handle('/idlegrid/bench/transfer/1.0.0', ({ stream }) => {
      void (async () => {
        for await (const chunk of stream.source) { got += chunk.byteLength; if (got >= size) break }
        resolveRaw()
        await stream.close()
      })()
    })
    const stream = await renter.libp2p.dialProtocol(provider.peerId, '/idlegrid/bench/transfer/1.0.0')
    const t0 = performance.now()
    await stream.sink((async function * () { for (let at = 0; at < size; at += SLICE) yield payload.subarray(at, at + SLICE) })())
    await rawDone
    const rawMs = performance.now() - t0

    // the job protocol: upload, copy, download, verify
    await writeFile(join(tmp.path, 'payload.bin'), payload)
    const job = { runtime: { command: ['/bin/sh', '-c', 'cp inputs/payload.bin outputs/payload.bin'], timeoutMs: 600_000 }, inputs: [{ path: 'payload.bin', file: join(tmp.path, 'payload.bin') }] }
    let sendStart = 0
    let acceptedAt = 0
    let firstOutput = 0
    const startedJob = performance.now()
    const result = await runAttempt(makeAward(renter, provider.peerId), job, {
      libp2p: renter.libp2p, privateKey: renter.privateKey, peerId: renter.peerId, dir: join(tmp.path, 'out-big'), maxOutputBytes: size + MiB,
      onEvent: (e) => {
        if (e.type === 'sending' && sendStart === 0) sendStart = performance.now()
        if (e.type === 'accepted') acceptedAt = performance.now()
        if (e.type === 'receiving' && firstOutput === 0) firstOutput = performance.now()
      }
    })
    const jobEnd = performance.now()
    if (result.outcome !== 'ok') throw new Error(`copy job ended ${result.outcome}: ${result.detail ?? ''}`)
    // input: from the first chunk sent (manifest hashing excluded) to Accepted, which follows the provider's check of every input
    const inputMs = acceptedAt - (sendStart === 0 ? startedJob : sendStart)
    const outputMs = jobEnd - firstOutput

    // award to first log line of a small job
    const firstLog: number[] = []
    for (let i = 0; i < 5; i++) {
      const at = performance.now()
      let logAt = 0
      const r = await runAttempt(makeAward(renter, provider.peerId), { runtime: { command: ['/bin/sh', '-c', 'echo hello'], timeoutMs: 30_000 }, inputs: [] }, {
        libp2p: renter.libp2p, privateKey: renter.privateKey, peerId: renter.peerId, dir: join(tmp.path, `out-small-${i}`),
        onEvent: (e) => { if (e.type === 'log' && logAt === 0) logAt = performance.now() }
      })
      if (r.outcome !== 'ok' || logAt === 0) throw new Error(`small job ended ${r.outcome}`)
      firstLog.push(logAt - at)
    }
    firstLog.sort((a, b) => a - b)
    void (provider.libp2p.services as unknown as { exec: JobExecService }).exec

    const tls = tlsMs == null ? undefined : mibps(size, tlsMs)
    const ratio = (v: number): number | string => tls == null ? 'n/a (no openssl)' : Math.round(v / tls * 100) / 100
    return {
      payloadMiB: size / MiB,
      encrypter: connection.encryption,
      muxer: connection.multiplexer,
      tcpMiBps: mibps(size, tcpMs),
      tlsMiBps: tls ?? 'n/a (no openssl)',
      libp2pStreamMiBps: mibps(size, rawMs),
      libp2pStreamVsTls: ratio(mibps(size, rawMs)),
      libp2pStreamVsTcp: Math.round(mibps(size, rawMs) / mibps(size, tcpMs) * 100) / 100,
      jobInputMiBps: mibps(size, inputMs),
      jobInputVsTls: ratio(mibps(size, inputMs)),
      jobOutputMiBps: mibps(size, outputMs),
      jobOutputVsTls: ratio(mibps(size, outputMs)),
      awardToFirstLogMsMedian: Math.round(firstLog[2] as number),
      awardToFirstLogMsMin: Math.round(firstLog[0] as number)
    }
  } finally {
    await Promise.all(nodes.map(async n => { await n.stop() }))
    await tmp.cleanup()
  }
}
