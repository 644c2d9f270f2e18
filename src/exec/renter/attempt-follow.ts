/**
 * The renter follows a running job: Log frames into the attempt's log.txt, Progress frames
 * as events, OutputChunk frames into outputs/ (hashed as they arrive), until the provider's
 * Result and then its attestation. The renter's own limits (attempt-limits.ts) bound the log,
 * the number, depth and bytes of the outputs, whatever the provider says it caps.
 */
import { createHash, type Hash } from 'node:crypto'
import { appendFile, mkdir, open } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { JobFrame, type FileEntry } from '../../../protocols/job.js'
import { type DiskBudget, type RenterLimits } from './attempt-limits.js'
import { pieces, type ReceivedChunk } from '../shared/chunk-frame.js'
import { checkRelativePath, sortEntries } from '../shared/digest.js'
import { renterLimitError, streamError } from '../errors.js'
import { FileSink } from '../shared/file-sink.js'
import { frameKind, type FrameChannel } from '../shared/job-stream.js'
import type { JobEvent } from './attempt.js'

/** Log lines held before they are appended to log.txt: at most this many, */
const LOG_BATCH_LINES = 256
/** or this many bytes. */
const LOG_BATCH_BYTES = 1024 * 1024

/** The job's log lines, appended to the attempt's log.txt in batches; ExecError ERR_RENTER_LIMIT past `maxBytes`. */
export class AttemptLog {
  private readonly lines: string[] = []
  private pending = 0
  /** bytes of log lines received so far */
  total = 0

  constructor (
    private readonly file: string,
    private readonly maxBytes = Infinity,
    private readonly disk?: DiskBudget
  ) {}

  async push (stream: 'stdout' | 'stderr', line: string): Promise<void> {
    const bytes = Buffer.byteLength(line, 'utf8') + 3
    this.total += bytes
    if (this.total > this.maxBytes) throw renterLimitError('log-bytes', `the provider sent more than ${this.maxBytes} bytes of log (the renter's limit)`)
    this.disk?.take(bytes)
    this.lines.push(`${stream === 'stderr' ? 'E ' : '  '}${line}\n`)
    this.pending += bytes
    if (this.lines.length >= LOG_BATCH_LINES || this.pending >= LOG_BATCH_BYTES) await this.flush()
  }

  async flush (): Promise<void> {
    this.pending = 0
    if (this.lines.length > 0) await appendFile(this.file, this.lines.splice(0).join(''))
  }
}

export type OutputLimits = Pick<RenterLimits, 'maxOutputBytes' | 'maxFiles' | 'maxDepth'>

/**
 * The outputs as they arrive: one file open at a time, each path once (and never both a file
 * and a directory), within the renter's limits on bytes, files and depth. Every check is
 * linear: a set of file paths and a set of their directories, each path's prefixes looked up.
 */
export class OutputFiles {
  /** complete files, in arrival order */
  readonly received: FileEntry[] = []
  /** bytes received so far */
  total = 0
  private current?: { path: string, handle: FileSink, hash: Hash, size: bigint }
  private readonly files = new Set<string>()
  private readonly dirs = new Set<string>()
  private readonly limits: OutputLimits

  constructor (private readonly dir: string, limits: Partial<OutputLimits>, private readonly disk?: DiskBudget) {
    this.limits = {
      maxOutputBytes: limits.maxOutputBytes ?? Infinity,
      maxFiles: limits.maxFiles ?? Infinity,
      maxDepth: limits.maxDepth ?? Infinity
    }
  }

  async write (chunk: ReceivedChunk): Promise<void> {
    this.total += chunk.data.byteLength
    if (this.total > this.limits.maxOutputBytes) throw renterLimitError('output-bytes', `outputs exceed ${this.limits.maxOutputBytes} bytes (the renter's limit)`)
    this.disk?.take(chunk.data.byteLength)
    if (this.current?.path !== chunk.path) this.current = await this.next(chunk)
    const current = this.current
    if (chunk.offset !== current.size) throw streamError('PROTOCOL', `output ${chunk.path} chunk at ${chunk.offset}, expected ${current.size}`)
    await current.handle.write(chunk.data)
    for (const piece of pieces(chunk.data)) current.hash.update(piece)
    current.size += BigInt(chunk.data.byteLength)
  }

  /** Completes the file being written, if any. */
  async finish (): Promise<void> {
    const current = this.current
    if (current == null) return
    await current.handle.close()
    this.received.push({ path: current.path, size: current.size, sha256: new Uint8Array(current.hash.digest()) })
    this.current = undefined
  }

  /** Closes the file being written after a failure (it does not count as received). */
  async abandon (): Promise<void> {
    await this.current?.handle.close().catch(() => {})
  }

  /** What was received, sorted for the digest. */
  entries (): FileEntry[] {
    return sortEntries(this.received)
  }

  private async next (chunk: ReceivedChunk): Promise<NonNullable<OutputFiles['current']>> {
    await this.finish()
    try { checkRelativePath(chunk.path) } catch (err: any) { throw streamError('PROTOCOL', err.message) }
    if (this.files.size + 1 > this.limits.maxFiles) throw renterLimitError('files', `the provider sent more than ${this.limits.maxFiles} output files (the renter's limit)`)
    const segments = chunk.path.split('/')
    if (segments.length - 1 > this.limits.maxDepth) throw renterLimitError('depth', `output ${chunk.path.slice(0, 80)}… is ${segments.length - 1} directories deep; the renter's limit is ${this.limits.maxDepth}`)
    const prefixes: string[] = []
    for (let i = 0, at = 0; i < segments.length - 1; i++) {
      at += (segments[i] as string).length + (i > 0 ? 1 : 0)
      prefixes.push(chunk.path.slice(0, at))
    }
    if (this.files.has(chunk.path) || this.dirs.has(chunk.path) || prefixes.some(p => this.files.has(p))) throw streamError('PROTOCOL', `output ${chunk.path} sent twice`)
    if (chunk.offset !== 0n) throw streamError('PROTOCOL', `output ${chunk.path} does not start at offset 0`)
    this.files.add(chunk.path)
    for (const p of prefixes) this.dirs.add(p)
    const path = join(this.dir, chunk.path)
    await mkdir(dirname(path), { recursive: true })
    return { path: chunk.path, handle: new FileSink(await open(path, 'wx')), hash: createHash('sha256'), size: 0n }
  }
}

export interface FollowOptions {
  outputs: OutputFiles
  log: AttemptLog
  attempt: number
  emit: (event: JobEvent) => void
  /** called at the first log line */
  onFirstLog: () => void
}

/** What the provider said at the end: its Result and its attestation envelope (not yet verified). */
export interface RunReport {
  result: JobFrame.Result
  attestation: Uint8Array
  /** when the attestation frame arrived (unix ms): Receipt.latency_ms ends here */
  attestationAt: number
}

/** Reads frames until the attestation; the log is flushed and an unfinished output closed whatever happens. */
export async function followRun (ch: FrameChannel, opts: FollowOptions): Promise<RunReport> {
  const { outputs, log, attempt, emit } = opts
  let result: JobFrame.Result | undefined
  let logged = false
  try {
    while (true) {
      const frame = await ch.next()
      if (frame == null) throw streamError('CANCELLED', 'provider closed the stream before its attestation')
      const kind = frameKind(frame)
      if (kind === 'log') {
        const line = frame.log as JobFrame.Log
        const stream = line.stream === JobFrame.Log.Stream.STDERR ? 'stderr' : 'stdout'
        if (!logged) { logged = true; opts.onFirstLog() }
        await log.push(stream, line.line)
        emit({ type: 'log', attempt, stream, line: line.line })
      } else if (kind === 'progress') {
        emit({ type: 'progress', attempt, elapsedMs: Number(frame.progress?.elapsedMs ?? 0n) })
      } else if (kind === 'outputChunk') {
        if (result != null) throw streamError('PROTOCOL', 'output chunk after Result')
        const chunk = frame.outputChunk as ReceivedChunk
        await outputs.write(chunk)
        emit({ type: 'receiving', attempt, path: chunk.path, receivedBytes: outputs.total })
      } else if (kind === 'result') {
        await outputs.finish()
        result = frame.result as JobFrame.Result
      } else if (kind === 'attestation') {
        if (result == null) throw streamError('PROTOCOL', 'attestation before Result')
        return { result, attestation: frame.attestation as Uint8Array, attestationAt: Date.now() }
      } else {
        throw streamError('PROTOCOL', `unexpected ${kind} frame while the job runs`)
      }
    }
  } finally {
    await outputs.abandon()
    await log.flush().catch(() => {})
  }
}
