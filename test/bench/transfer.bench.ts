/**
 * Transfer benchmark: a 256 MiB payload (IDLEGRID_BENCH_TRANSFER_MIB to change) sent from
 * this process to a receiver in another process (test/bench/transfer-peer.ts), as between a
 * renter and a provider, over
 *  - a plain TCP socket and a Node `tls` socket on loopback, the receiver only counting (the
 *    baselines for the raw stream),
 *  - a Node `tls` socket whose receiver hashes (sha256) and writes what arrives to a new file:
 *    the fair baseline for the job protocol, which does the same work and more,
 *  - one libp2p stream between two idlegrid nodes built with the node's own transport,
 *    encrypter and muxer settings (raw bytes), and one whose receiver hashes and writes what
 *    arrives as the job's input receiver does (the job protocol's work without its framing),
 *  - the job protocol itself: input upload and output download of a job that copies its input
 *    to its output (framing, sha256 on both sides and disk writes included), three jobs in a
 *    row: the first (both processes cold) reported apart, the faster of the other two as the
 *    figure,
 * all in the same run (each copy once to warm up, then measured), reported as MiB/s and as
 * ratios to the TLS copy (raw stream) and to the TLS → sha256 → file copy (job protocol); the
 * CPU time per MiB each end spent (cpuMsPerMiB: on a loaded machine wall time says little,
 * and the slower end bounds the rate on an idle one) with the load average; and the time from
 * award to the first log line of a small job. `node --cpu-prof` on the bench profiles the
 * receiver too (it inherits the flags).
 */
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmod, rm, writeFile } from 'node:fs/promises'
import { connect as tcpConnect, type Socket } from 'node:net'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { connect as tlsConnect } from 'node:tls'
import { multiaddr } from '@multiformats/multiaddr'
import { peerIdFromString } from '@libp2p/peer-id'
import { resolveConfig } from '../../src/config/index.js'
import { runAttempt } from '../../src/exec/index.js'
import { createNode, type IdlegridNode } from '../../src/node/index.js'
import { makeAward } from '../exec/fixtures.js'
import { tempDir } from '../utils/index.js'
import { startChildPeer, type ChildPeer } from './child-peer.js'
import { threadCpuMs, threadSplit, type ThreadSplit } from './process-usage.js'

const MiB = 1024 * 1024
const SLICE = MiB
const RAW_PROTOCOL = '/idlegrid/bench/transfer/1.0.0'
const RAW_FILE_PROTOCOL = '/idlegrid/bench/transfer-file/1.0.0'
const PEER_SCRIPT = fileURLToPath(new URL('./transfer-peer.js', import.meta.url))

interface PeerReady {
  tcpPort: number
  tlsPort: number | null
  tlsFilePort: number | null
  addr: string
  peerId: string
}

type Peer = PeerReady & ChildPeer<PeerReady>

function mibps (bytes: number, ms: number): number {
  return Math.round(bytes / MiB / (ms / 1000))
}

async function startPeer (size: number, dir: string, certDir?: string): Promise<Peer> {
  const peer = await startChildPeer<PeerReady>(PEER_SCRIPT, [String(size), dir, ...(certDir != null ? [certDir] : [])], 'transfer peer')
  return { ...peer.ready, ...peer }
}

function ownCpuMs (): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

/** A copy's wall time and the CPU time each end spent on it (per thread where /proc has it). */
interface Measured {
  ms: number
  senderCpuMs: number
  receiverCpuMs: number
  threads?: { sender?: ThreadSplit, receiver?: ThreadSplit }
}

/**
 * Times `run` (which returns its own wall time) and the CPU both processes spent meanwhile;
 * `peerSends` swaps the roles.
 */
async function measured (peer: Peer, run: () => Promise<number>, peerSends = false): Promise<Measured> {
  const [own0, peer0] = [ownCpuMs(), await peer.cpuMs()]
  const ms = await run()
  const [own, theirs] = [ownCpuMs() - own0, await peer.cpuMs() - peer0]
  return { ms, senderCpuMs: peerSends ? theirs : own, receiverCpuMs: peerSends ? own : theirs }
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

/** The fastest of some measured runs. */
function fastest (runs: Measured[]): Measured {
  return runs.reduce((a, b) => a.ms <= b.ms ? a : b)
}

/** The faster of two runs: the first warms up both ends. */
async function best (peer: Peer, run: () => Promise<number>): Promise<Measured> {
  return fastest([await measured(peer, run), await measured(peer, run)])
}

/** A phase's CPU per MiB at each end, main thread and the others apart. */
function threadsPerMiB (m: Measured, bytes: number): Record<string, { main: number, otherThreads: number } | string> {
  const split = (t: ThreadSplit | undefined): { main: number, otherThreads: number } | string =>
    t == null ? 'n/a (no /proc)' : { main: msPerMiB(t.mainMs, bytes), otherThreads: msPerMiB(t.busiestOtherMs + t.restMs, bytes) }
  return { sender: split(m.threads?.sender), receiver: split(m.threads?.receiver) }
}

/** CPU ms per MiB moved, two decimals. */
function msPerMiB (ms: number, bytes: number): number {
  return Math.round(ms / (bytes / MiB) * 100) / 100
}

/** CPU ms per MiB moved, at each end. */
function cpuPerMiB (m: Measured, bytes: number): { sender: number, receiver: number } {
  return { sender: msPerMiB(m.senderCpuMs, bytes), receiver: msPerMiB(m.receiverCpuMs, bytes) }
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
    const p = peer
    const tcpPort = p.tcpPort
    const tlsPort = p.tlsPort
    const tcp = await best(p, async () => await tcpCopy(payload, tcpPort))
    const tlsCount = tlsPort == null ? undefined : await best(p, async () => await tlsCopy(payload, tlsPort))
    const tlsFilePort = p.tlsFilePort
    const tlsToFile = tlsFilePort == null ? undefined : await best(p, async () => await tlsCopy(payload, tlsFilePort))

    renter = await createNode(resolveConfig({ role: 'renter', flags: { dataDir: join(tmp.path, 'renter'), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], heartbeatSeconds: 60 } }))
    const r = renter
    const providerId = peerIdFromString(p.peerId)
    const connection = await r.libp2p.dial(multiaddr(p.addr))

    // raw bytes over one stream; the receiver acks once it counted them all (or, on the file
    // protocol, once it hashed them and wrote them to a file it closed)
    const rawCopy = async (protocol: string): Promise<number> => {
      const stream = await r.libp2p.dialProtocol(providerId, protocol)
      const t0 = performance.now()
      await stream.sink(
        (async function * () {
          for (let at = 0; at < size; at += SLICE) yield payload.subarray(at, at + SLICE)
        })()
      )
      await stream.source[Symbol.asyncIterator]().next()
      return performance.now() - t0
    }
    const raw = await best(p, async () => await rawCopy(RAW_PROTOCOL))
    const rawToFile = await best(p, async () => await rawCopy(RAW_FILE_PROTOCOL))

    // the job protocol: upload, copy, download, verify
    await writeFile(join(tmp.path, 'payload.bin'), payload)
    const job = { runtime: { command: ['/bin/sh', '-c', 'cp inputs/payload.bin outputs/payload.bin'], timeoutMs: 600_000 }, inputs: [{ path: 'payload.bin', file: join(tmp.path, 'payload.bin') }] }
    /** Wall time and both ends' CPU at one moment (the peer's asked then, answered as soon as it can). */
    const peerPid = p.child.pid ?? 0
    const mark = (): {
      at: number
      own: number
      peer: Promise<number>
      ownThreads: Map<number, number>
      peerThreads: Map<number, number>
    } => ({
      at: performance.now(),
      own: ownCpuMs(),
      peer: p.cpuMs(),
      ownThreads: threadCpuMs(),
      peerThreads: threadCpuMs(peerPid)
    })
    const between = async (
      from: ReturnType<typeof mark>,
      to: ReturnType<typeof mark>,
      peerSends: boolean
    ): Promise<Measured> => {
      const own = to.own - from.own
      const theirs = await to.peer - await from.peer
      const ownThreads = threadSplit(from.ownThreads, to.ownThreads)
      const peerThreads = threadSplit(from.peerThreads, to.peerThreads, peerPid)
      return {
        ms: to.at - from.at,
        senderCpuMs: peerSends ? theirs : own,
        receiverCpuMs: peerSends ? own : theirs,
        threads: { sender: peerSends ? peerThreads : ownThreads, receiver: peerSends ? ownThreads : peerThreads }
      }
    }
    const copyJob = async (run: number): Promise<{ input: Measured, output: Measured }> => {
      const started = mark()
      let sendStart: ReturnType<typeof mark> | undefined
      let accepted: ReturnType<typeof mark> | undefined
      let firstOutput: ReturnType<typeof mark> | undefined
      const result = await runAttempt(makeAward(r, providerId), job, {
        libp2p: r.libp2p,
        privateKey: r.privateKey,
        peerId: r.peerId,
        dir: join(tmp.path, `out-big-${run}`),
        limits: { maxOutputBytes: size + MiB },
        onEvent: (e) => {
          if (e.type === 'sending' && sendStart == null) sendStart = mark()
          if (e.type === 'accepted') accepted = mark()
          if (e.type === 'receiving' && firstOutput == null) firstOutput = mark()
        }
      })
      const end = mark()
      if (result.outcome !== 'ok' || accepted == null || firstOutput == null) throw new Error(`copy job ended ${result.outcome}: ${result.detail ?? ''}`)
      // scratch, as the baselines' files are: left in place, each job's output made the next
      // one's file writes grow the page cache (docs/scale.md)
      await rm(join(tmp.path, `out-big-${run}`), { recursive: true, force: true })
      // input: from the first chunk sent (manifest hashing excluded) to Accepted, which follows the
      // provider's check of every input
      return {
        input: await between(sendStart ?? started, accepted, false),
        output: await between(firstOutput, end, true)
      }
    }
    // A fresh process's first job costs both ends about twice the CPU of the next ones (its
    // heap, buffers and code are cold; docs/scale.md), so it is reported apart (jobFirst*), and
    // the job's figures are the faster of the two jobs after it, as a provider that has run a
    // job before moves its next.
    const first = await copyJob(0)
    const warm = [await copyJob(1), await copyJob(2)]
    const input = fastest(warm.map(x => x.input))
    const output = fastest(warm.map(x => x.output))
    const [inputMs, outputMs, rawMs, tcpMs] = [input.ms, output.ms, raw.ms, tcp.ms]
    const tlsMs = tlsCount?.ms
    const tlsFileMs = tlsToFile?.ms

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
      /** a libp2p stream's bytes hashed and written to a file: the job input's work without its framing */
      libp2pStreamSha256FileMiBps: mibps(size, rawToFile.ms),
      libp2pStreamSha256FileVsBaseline: vsBaseline(mibps(size, rawToFile.ms)),
      libp2pStreamVsTcp: Math.round(mibps(size, rawMs) / mibps(size, tcpMs) * 100) / 100,
      jobInputMiBps: mibps(size, inputMs),
      jobInputVsTls: ratio(mibps(size, inputMs)),
      jobInputVsBaseline: vsBaseline(mibps(size, inputMs)),
      jobOutputMiBps: mibps(size, outputMs),
      jobOutputVsTls: ratio(mibps(size, outputMs)),
      jobOutputVsBaseline: vsBaseline(mibps(size, outputMs)),
      /** the first job of both processes (cold), apart from the figures above */
      jobFirstInputMiBps: mibps(size, first.input.ms),
      jobFirstOutputMiBps: mibps(size, first.output.ms),
      awardToFirstLogMsMedian: Math.round(firstLog[2] as number),
      awardToFirstLogMsMin: Math.round(firstLog[0] as number),
      // CPU per MiB at each end: what the load on the machine does not inflate as it does wall time
      cpuMsPerMiB: {
        tcp: cpuPerMiB(tcp, size),
        ...(tlsCount != null ? { tls: cpuPerMiB(tlsCount, size) } : {}),
        ...(tlsToFile != null ? { tlsSha256File: cpuPerMiB(tlsToFile, size) } : {}),
        libp2pStream: cpuPerMiB(raw, size),
        libp2pStreamSha256File: cpuPerMiB(rawToFile, size),
        jobInput: cpuPerMiB(input, size),
        jobOutput: cpuPerMiB(output, size),
        jobFirstInput: cpuPerMiB(first.input, size),
        jobFirstOutput: cpuPerMiB(first.output, size)
      },
      // the job's phases per thread (Linux): each end's main thread, and its other threads
      // together (V8's GC helpers above all, libuv's file work)
      jobThreadCpuMsPerMiB: { input: threadsPerMiB(input, size), output: threadsPerMiB(output, size) },
      loadAverage: loadavg().map(x => Math.round(x * 10) / 10)
    }
  } finally {
    await renter?.stop()
    await peer?.stop()
    await tmp.cleanup()
  }
}
