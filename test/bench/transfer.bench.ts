/**
 * Transfer benchmark: a 256 MiB payload (IDLEGRID_BENCH_TRANSFER_MIB to change) sent from
 * this process to a receiver in another process (test/bench/transfer-peer.ts), as between a
 * renter and a provider, over
 *  - a plain TCP socket and a Node `tls` socket on loopback, the receiver only counting (the
 *    baselines for the raw stream),
 *  - a Node `tls` socket whose receiver hashes (sha256) and writes what arrives to a new file:
 *    the fair baseline for the job protocol, which does the same work and more,
 *  - one libp2p stream between two idlegrid nodes built with the node's own transport,
 *    encrypter and muxer settings (raw bytes),
 *  - the job protocol itself: input upload and output download of a job that copies its input
 *    to its output (framing, sha256 on both sides and disk writes included),
 * all in the same run (each copy once to warm up, then measured), reported as MiB/s and as
 * ratios to the TLS copy (raw stream) and to the TLS → sha256 → file copy (job protocol); and the time from award to the first log line of a small job.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmod, writeFile } from 'node:fs/promises'
import { connect as tcpConnect, type Socket } from 'node:net'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { connect as tlsConnect } from 'node:tls'
import { multiaddr } from '@multiformats/multiaddr'
import { peerIdFromString } from '@libp2p/peer-id'
import { resolveConfig } from '../../src/config/index.js'
import { runAttempt } from '../../src/exec/index.js'
import { createNode, type IdlegridNode } from '../../src/node/index.js'
import { makeAward } from '../exec/fixtures.js'
import { tempDir } from '../utils/index.js'

const MiB = 1024 * 1024
const SLICE = MiB
const RAW_PROTOCOL = '/idlegrid/bench/transfer/1.0.0'
const PEER_SCRIPT = fileURLToPath(new URL('./transfer-peer.js', import.meta.url))

interface Peer { tcpPort: number, tlsPort: number | null, tlsFilePort: number | null, addr: string, peerId: string, child: ChildProcess }

function mibps (bytes: number, ms: number): number {
  return Math.round(bytes / MiB / (ms / 1000))
}

async function startPeer (size: number, dir: string, certDir?: string): Promise<Peer> {
  const child = spawn(process.execPath, [...process.execArgv, PEER_SCRIPT, String(size), dir, ...(certDir != null ? [certDir] : [])], { stdio: ['pipe', 'pipe', 'inherit'] })
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error('transfer peer did not start within 60 s')) }, 60_000)
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', (l) => { clearTimeout(timer); resolve(l) })
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`transfer peer exited with ${String(code)}`)) })
  })
  return { ...JSON.parse(line), child }
}

/** Writes `payload` in slices, honouring backpressure; resolves when the receiver acked all of it. */
async function socketCopy (client: Socket, payload: Buffer): Promise<number> {
  const acked = new Promise(resolve => client.once('data', resolve))
  const t0 = performance.now()
  for (let at = 0; at < payload.length; at += SLICE) {
    if (!client.write(payload.subarray(at, at + SLICE))) await new Promise(resolve => client.once('drain', resolve))
  }
  await acked
  const ms = performance.now() - t0
  client.destroy()
  return ms
}

async function tcpCopy (payload: Buffer, port: number): Promise<number> {
  const client = tcpConnect(port, '127.0.0.1')
  await new Promise(resolve => client.once('connect', resolve))
  return await socketCopy(client, payload)
}

async function tlsCopy (payload: Buffer, port: number): Promise<number> {
  const client = tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false })
  await new Promise(resolve => client.once('secureConnect', resolve))
  return await socketCopy(client, payload)
}

function makeCert (dir: string): boolean {
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=bench',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** The faster of two runs: the first warms up both ends. */
async function best (run: () => Promise<number>): Promise<number> {
  return Math.min(await run(), await run())
}

export default async (): Promise<Record<string, unknown>> => {
  const size = Number(process.env.IDLEGRID_BENCH_TRANSFER_MIB ?? 256) * MiB
  const tmp = await tempDir('idlegrid-bench-transfer-')
  const payload = randomBytes(size)
  let peer: Peer | undefined
  let renter: IdlegridNode | undefined
  try {
    // jobs run as another user when we are root: it must pass through to the peer's work root
    await chmod(tmp.path, 0o711)
    const haveTls = makeCert(tmp.path)
    peer = await startPeer(size, join(tmp.path, 'peer'), haveTls ? tmp.path : undefined)
    const tcpPort = peer.tcpPort
    const tlsPort = peer.tlsPort
    const tcpMs = await best(async () => await tcpCopy(payload, tcpPort))
    const tlsMs = tlsPort == null ? undefined : await best(async () => await tlsCopy(payload, tlsPort))
    const tlsFilePort = peer.tlsFilePort
    const tlsFileMs = tlsFilePort == null ? undefined : await best(async () => await tlsCopy(payload, tlsFilePort))

    renter = await createNode(resolveConfig({ role: 'renter', flags: { dataDir: join(tmp.path, 'renter'), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], heartbeatSeconds: 60 } }))
    const r = renter
    const providerId = peerIdFromString(peer.peerId)
    const connection = await r.libp2p.dial(multiaddr(peer.addr))

    // raw bytes over one stream; the receiver acks once it counted them all
    const rawMs = await best(async () => {
      const stream = await r.libp2p.dialProtocol(providerId, RAW_PROTOCOL)
      const t0 = performance.now()
      await stream.sink((async function * () { for (let at = 0; at < size; at += SLICE) yield payload.subarray(at, at + SLICE) })())
      await stream.source[Symbol.asyncIterator]().next()
      return performance.now() - t0
    })

    // the job protocol: upload, copy, download, verify
    await writeFile(join(tmp.path, 'payload.bin'), payload)
    const job = { runtime: { command: ['/bin/sh', '-c', 'cp inputs/payload.bin outputs/payload.bin'], timeoutMs: 600_000 }, inputs: [{ path: 'payload.bin', file: join(tmp.path, 'payload.bin') }] }
    const copyJob = async (run: number): Promise<{ inputMs: number, outputMs: number }> => {
      let sendStart = 0
      let acceptedAt = 0
      let firstOutput = 0
      const startedJob = performance.now()
      const result = await runAttempt(makeAward(r, providerId), job, {
        libp2p: r.libp2p,
        privateKey: r.privateKey,
        peerId: r.peerId,
        dir: join(tmp.path, `out-big-${run}`),
        limits: { maxOutputBytes: size + MiB },
        onEvent: (e) => {
          if (e.type === 'sending' && sendStart === 0) sendStart = performance.now()
          if (e.type === 'accepted') acceptedAt = performance.now()
          if (e.type === 'receiving' && firstOutput === 0) firstOutput = performance.now()
        }
      })
      const jobEnd = performance.now()
      if (result.outcome !== 'ok') throw new Error(`copy job ended ${result.outcome}: ${result.detail ?? ''}`)
      // input: from the first chunk sent (manifest hashing excluded) to Accepted, which follows the provider's check of every input
      return { inputMs: acceptedAt - (sendStart === 0 ? startedJob : sendStart), outputMs: jobEnd - firstOutput }
    }
    const runs = [await copyJob(0), await copyJob(1)]
    const inputMs = Math.min(...runs.map(x => x.inputMs))
    const outputMs = Math.min(...runs.map(x => x.outputMs))

    // award to first log line of a small job
    const firstLog: number[] = []
    for (let i = 0; i < 5; i++) {
      const at = performance.now()
      let logAt = 0
      const small = await runAttempt(makeAward(r, providerId), { runtime: { command: ['/bin/sh', '-c', 'echo hello'], timeoutMs: 30_000 }, inputs: [] }, {
        libp2p: r.libp2p,
        privateKey: r.privateKey,
        peerId: r.peerId,
        dir: join(tmp.path, `out-small-${i}`),
        onEvent: (e) => { if (e.type === 'log' && logAt === 0) logAt = performance.now() }
      })
      if (small.outcome !== 'ok' || logAt === 0) throw new Error(`small job ended ${small.outcome}`)
      firstLog.push(logAt - at)
    }
    firstLog.sort((a, b) => a - b)

    const tls = tlsMs == null ? undefined : mibps(size, tlsMs)
    const ratio = (v: number): number | string => tls == null ? 'n/a (no openssl)' : Math.round(v / tls * 100) / 100
    const tlsFile = tlsFileMs == null ? undefined : mibps(size, tlsFileMs)
    const vsBaseline = (v: number): number | string => tlsFile == null ? 'n/a (no openssl)' : Math.round(v / tlsFile * 100) / 100
    return {
      payloadMiB: size / MiB,
      receiver: 'a separate process (test/bench/transfer-peer.ts)',
      encrypter: connection.encryption,
      muxer: connection.multiplexer,
      tcpMiBps: mibps(size, tcpMs),
      tlsMiBps: tls ?? 'n/a (no openssl)',
      tlsSha256FileMiBps: tlsFile ?? 'n/a (no openssl)',
      libp2pStreamMiBps: mibps(size, rawMs),
      libp2pStreamVsTls: ratio(mibps(size, rawMs)),
      libp2pStreamVsTcp: Math.round(mibps(size, rawMs) / mibps(size, tcpMs) * 100) / 100,
      jobInputMiBps: mibps(size, inputMs),
      jobInputVsTls: ratio(mibps(size, inputMs)),
      jobInputVsBaseline: vsBaseline(mibps(size, inputMs)),
      jobOutputMiBps: mibps(size, outputMs),
      jobOutputVsTls: ratio(mibps(size, outputMs)),
      jobOutputVsBaseline: vsBaseline(mibps(size, outputMs)),
      awardToFirstLogMsMedian: Math.round(firstLog[2] as number),
      awardToFirstLogMsMin: Math.round(firstLog[0] as number)
    }
  } finally {
    await renter?.stop()
    if (peer != null) {
      const exited = new Promise(resolve => peer?.child.once('exit', resolve))
      peer.child.stdin?.end()
      await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 10_000))])
      peer.child.kill('SIGKILL')
    }
    await tmp.cleanup()
  }
}
