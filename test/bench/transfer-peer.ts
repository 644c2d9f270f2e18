/**
 * The receiving side of test/bench/transfer.bench.ts, in its own process as a provider
 * would be: a TCP and a TLS server that count bytes and answer one ack byte once `size`
 * bytes arrived, a TLS server that hashes and writes what arrives to a new file (the fair
 * baseline for the job protocol), and an idlegrid provider node (job service with the process runner and the
 * services it depends on, plus a raw-bytes protocol that acks the same way, and one that hashes
 * and writes what arrives to a file as the job's input receiver does). Prints one JSON
 * line with its ports, address and peer id; answers each "cpu" line on stdin with its CPU time
 * so far; exits when stdin closes.
 *
 * usage: node transfer-peer.js SIZE_BYTES WORK_DIR [CERT_DIR]
 */
import { createHash } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { chmod, mkdir, open, readFile, rm } from 'node:fs/promises'
import { createServer as createTcpServer, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { createServer as createTlsServer } from 'node:tls'
import { resolveConfig } from '../../src/config/index.js'
import { FileSink } from '../../src/exec/shared/file-sink.js'
import { ProcessRunner } from '../../src/exec/runners/index.js'
import { createNode } from '../../src/node/index.js'
import { execProviderServices } from '../exec/fixtures.js'

const RAW_PROTOCOL = '/idlegrid/bench/transfer/1.0.0'
const RAW_FILE_PROTOCOL = '/idlegrid/bench/transfer-file/1.0.0'
const MiB = 1024 * 1024

const [sizeArg, dir, certDir] = process.argv.slice(2)
const size = Number(sizeArg)
if (!Number.isSafeInteger(size) || size <= 0 || dir == null) {
  process.stderr.write('usage: transfer-peer SIZE_BYTES WORK_DIR [CERT_DIR]\n')
  process.exit(2)
}

/** Counts what one connection sends; one ack byte when all of it arrived. */
function countThenAck (socket: Socket): void {
  let got = 0
  socket.on('data', (chunk: Buffer) => {
    got += chunk.length
    if (got >= size) socket.end(Uint8Array.of(1))
  })
  socket.on('error', () => {})
}

let sunk = 0
/**
 * The fair baseline for the job protocol: what one connection sends is hashed (sha256) and
 * written to a new file; the ack byte follows the file's close (the file is removed after).
 */
function hashToFileThenAck (socket: Socket): void {
  const path = join(dir as string, `baseline-${sunk++}.bin`)
  const file = createWriteStream(path, { flags: 'wx' })
  const hash = createHash('sha256')
  let got = 0
  file.on('drain', () => socket.resume())
  socket.on('data', (chunk: Buffer) => {
    hash.update(chunk)
    got += chunk.length
    if (!file.write(chunk)) socket.pause()
    if (got >= size) {
      file.end(() => {
        hash.digest()
        socket.end(Uint8Array.of(1))
        void rm(path, { force: true })
      })
    }
  })
  socket.on('error', () => {})
}

async function listen (server: Server): Promise<number> {
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as { port: number }).port
}

const servers: Server[] = [createTcpServer(countThenAck)]
const tcpPort = await listen(servers[0] as Server)
let tlsPort: number | null = null
let tlsFilePort: number | null = null
await mkdir(dir, { recursive: true })
if (certDir != null) {
  const tlsOptions = { key: await readFile(join(certDir, 'key.pem')), cert: await readFile(join(certDir, 'cert.pem')), minVersion: 'TLSv1.3' } as const
  const tls = createTlsServer(tlsOptions, countThenAck)
  const tlsFile = createTlsServer(tlsOptions, hashToFileThenAck)
  servers.push(tls, tlsFile)
  tlsPort = await listen(tls)
  tlsFilePort = await listen(tlsFile)
}

// jobs run as another user when we are root: it must pass through to the work root
await chmod(dir, 0o711)
const config = resolveConfig({ role: 'provider', flags: { dataDir: join(dir, 'provider'), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], heartbeatSeconds: 60 } })
const node = await createNode(config, {
  services: execProviderServices({
    runner: new ProcessRunner(),
    gpus: [{ index: 0, uuid: 'GPU-sim-h100-0', simulated: true, modelKey: 'h100-80gb' }],
    workRoot: join(dir, 'work'),
    requireAccepted: false,
    maxInputBytes: size + MiB,
    maxOutputBytes: size + MiB
  }, config.dataDir)
})
await node.libp2p.handle(RAW_PROTOCOL, ({ stream }) => {
  void (async () => {
    let got = 0
    for await (const chunk of stream.source) {
      got += chunk.byteLength
      if (got >= size) break
    }
    await stream.sink([Uint8Array.of(1)])
  })().catch(() => { stream.abort(new Error('raw transfer failed')) })
})

// the job input's receiving work without its framing: a libp2p stream's pieces hashed and
// written (with the job's FileSink) to a new file, acked after its close
await node.libp2p.handle(RAW_FILE_PROTOCOL, ({ stream }) => {
  void (async () => {
    const path = join(dir, `libp2p-file-${sunk++}.bin`)
    const sink = new FileSink(await open(path, 'wx'))
    const hash = createHash('sha256')
    let got = 0
    for await (const chunk of stream.source) {
      got += chunk.byteLength
      await sink.write(chunk)
      for (const piece of chunk) hash.update(piece)
      if (got >= size) break
    }
    await sink.close()
    hash.digest()
    await rm(path, { force: true })
    await stream.sink([Uint8Array.of(1)])
  })().catch(() => { stream.abort(new Error('raw transfer failed')) })
})

process.stdout.write(JSON.stringify({ tcpPort, tlsPort, tlsFilePort, addr: node.libp2p.getMultiaddrs()[0]?.toString(), peerId: node.peerId.toString() }) + '\n')

const shutdown = async (): Promise<void> => {
  for (const server of servers) server.close()
  await node.stop()
  process.exit(0)
}
// each "cpu" line asks for this process's CPU time so far (µs, user + system): a figure the
// machine's load does not inflate as it does wall time
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'cpu') { const { user, system } = process.cpuUsage(); process.stdout.write(JSON.stringify({ cpuMicros: user + system }) + '\n') }
})
process.stdin.on('end', () => { void shutdown() })
process.on('SIGTERM', () => { void shutdown() })
