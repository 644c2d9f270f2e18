/**
 * The provider receives a job's inputs: InputChunk frames until InputEnd, each manifest file
 * written in manifest order into the job's inputs/ and checked against its size and sha256.
 */
import { createHash, type Hash } from 'node:crypto'
import { mkdir, open } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { equals } from 'uint8arrays/equals'
import { JobFrame, type FileEntry } from '../../../protocols/job.js'
import { pieces, type ReceivedChunk } from '../shared/chunk-frame.js'
import { MAX_PATH_CHARS } from '../shared/digest.js'
import { startDecline, streamError } from '../errors.js'
import { FileSink } from '../shared/file-sink.js'
import { frameKind, type FrameChannel } from '../shared/job-stream.js'
import { toHex } from '../../common/index.js'
import type { Holding, InputCache } from '../../cache/index.js'
import type { Logger } from '@libp2p/interface'

const KiB = 1024

/**
 * How long a renter may take to send its inputs, from its Start to its InputEnd, and in how
 * many chunks: a job receiving its inputs holds a slot and a disk share, so a renter that
 * trickles bytes (or empty chunks) must not keep them for ever.
 */
export interface InputTransferLimits {
  /** time allowed whatever the size, ms */
  floorMs: number
  /** slowest transfer rate allowed beyond the floor, bytes per second */
  minBytesPerSecond: number
  /** longest transfer allowed whatever the size, ms */
  maxMs: number
}

export const INPUT_TRANSFER_DEFAULTS: Readonly<InputTransferLimits> = {
  floorMs: 30_000,
  minBytesPerSecond: 256 * KiB,
  maxMs: 60 * 60_000
}

/**
 * Average chunk size below which a transfer has too many chunks. This implementation sends
 * chunks of almost 1 MiB (smaller only at a file's end), so 64 KiB leaves ample room.
 */
const MIN_AVERAGE_CHUNK_BYTES = 64 * KiB

/** The whole-transfer deadline for `declaredBytes` of inputs: floor + size at the minimum rate, capped. */
export function inputDeadlineMs (declaredBytes: number, limits: InputTransferLimits): number {
  return Math.min(
    limits.maxMs,
    limits.floorMs + Math.ceil((declaredBytes * 1000) / Math.max(1, limits.minBytesPerSecond))
  )
}

/** Most InputChunk frames for a manifest: one per file, plus one per MIN_AVERAGE_CHUNK_BYTES declared. */
export function maxInputChunks (files: number, declaredBytes: number): number {
  return files + Math.ceil(declaredBytes / MIN_AVERAGE_CHUNK_BYTES)
}

export interface ReceiveLimits {
  /** bytes the inputs may hold (the smaller of the declared size and the provider's bound) */
  maxInputBytes: number
  /** from Start to InputEnd, ms (inputDeadlineMs) */
  deadlineMs: number
  /** when the Start arrived (Date.now()) */
  startedAt: number
  /** InputChunk frames allowed (maxInputChunks) */
  maxChunks: number
}

/**
 * Reads the inputs into `dir`; resolves with the manifest once every file arrived whole.
 * Past the deadline or the chunk bound it throws an ExecError ERR_START_DECLINED (the session answers Rejected
 * and gives the slot and disk share back). `stop`, when it rejects, ends the receipt at once
 * with its error (the job lost its slot).
 */
export async function receiveInputs (
  ch: FrameChannel,
  {
    manifest,
    dir,
    limits,
    stop
  }: { manifest: FileEntry[], dir: string, limits: ReceiveLimits, stop?: Promise<never> }
): Promise<FileEntry[]> {
  const files = new InputFiles(manifest, dir)
  let total = 0
  let chunks = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(startDecline(JobFrame.Rejected.Code.OTHER, `inputs not received within ${limits.deadlineMs} ms of Start (${total} of ${limits.maxInputBytes} bytes arrived)`)) }, Math.max(0, limits.startedAt + limits.deadlineMs - Date.now()))
  })
  late.catch(() => {})
  const ends = stop == null ? [late] : [late, stop]
  try {
    while (true) {
      const frame = await Promise.race([ch.next(), ...ends])
      if (frame == null) throw streamError('CANCELLED', 'renter closed the stream while sending inputs')
      const kind = frameKind(frame)
      if (kind === 'inputEnd') break
      if (kind !== 'inputChunk') throw streamError('PROTOCOL', `unexpected ${kind} frame while receiving inputs`)
      const chunk = frame.inputChunk as ReceivedChunk
      if (chunk.data.byteLength === 0) throw streamError('PROTOCOL', 'empty input chunk (an empty file has no chunk)')
      if (++chunks > limits.maxChunks) throw startDecline(JobFrame.Rejected.Code.OTHER, `more than ${limits.maxChunks} input chunks for ${manifest.length} files of ${limits.maxInputBytes} bytes`)
      total += chunk.data.byteLength
      if (total > limits.maxInputBytes) throw streamError('INPUT_TOO_LARGE', `inputs exceed ${limits.maxInputBytes} bytes`)
      await files.write(chunk)
    }
    await files.finishAll()
    return manifest
  } finally {
    clearTimeout(timer)
    await files.abandon()
  }
}

/** The manifest's files as they are written, one open at a time, in manifest order. */
class InputFiles {
  private index = 0
  private offset = 0n
  private handle?: FileSink
  private hash: Hash = createHash('sha256')

  constructor (private readonly manifest: FileEntry[], private readonly dir: string) {}

  async write (chunk: ReceivedChunk): Promise<void> {
    // an empty file has no chunks: move past complete files to the one this chunk is for
    while (this.index < this.manifest.length && this.entry().path !== chunk.path && this.offset === this.entry().size) {
      await this.finishFile()
    }
    const entry = this.manifest[this.index]
    if (entry == null || entry.path !== chunk.path) throw streamError('PROTOCOL', `input chunk for ${chunk.path.slice(0, MAX_PATH_CHARS)} out of manifest order`)
    if (chunk.offset !== this.offset) throw streamError('PROTOCOL', `input chunk for ${entry.path} at offset ${chunk.offset}, expected ${this.offset}`)
    if (this.offset + BigInt(chunk.data.byteLength) > entry.size) throw startDecline(JobFrame.Rejected.Code.INPUT_MISMATCH, `input ${entry.path} is longer than its manifest size`)
    this.handle ??= await this.openFile(entry)
    await this.handle.write(chunk.data)
    for (const piece of pieces(chunk.data)) this.hash.update(piece)
    this.offset += BigInt(chunk.data.byteLength)
  }

  /** At InputEnd: the rest of the manifest (empty files) is written and every file checked. */
  async finishAll (): Promise<void> {
    while (this.index < this.manifest.length) await this.finishFile()
  }

  /** Closes an open file (after a failure; its error no longer matters). */
  async abandon (): Promise<void> {
    await this.handle?.close().catch(() => {})
  }

  private entry (): FileEntry {
    return this.manifest[this.index] as FileEntry
  }

  /** Closes the current file (creating it when it had no chunks) and checks its size and sha256. */
  private async finishFile (): Promise<void> {
    const entry = this.entry()
    this.handle ??= await this.openFile(entry)
    await this.handle.close()
    this.handle = undefined
    if (this.offset !== entry.size || !equals(new Uint8Array(this.hash.digest()), entry.sha256)) {
      throw startDecline(JobFrame.Rejected.Code.INPUT_MISMATCH, `input ${entry.path} does not match its size or sha256`)
    }
    this.index++
    this.offset = 0n
    this.hash = createHash('sha256')
  }

  private async openFile (entry: FileEntry): Promise<FileSink> {
    const path = join(this.dir, entry.path)
    await mkdir(dirname(path), { recursive: true })
    return new FileSink(await open(path, 'wx', 0o644))
  }
}

/**
 * The manifest's files the input cache holds for `renter`, pinned; none without a cache (job/1.1.0:
 * they are not sent again).
 */
export async function holdCachedInputs (
  cache: InputCache | undefined,
  renter: string,
  manifest: FileEntry[],
  log: Logger
): Promise<Holding> {
  const none: Holding = { digests: new Set(), bytes: 0, release: () => {} }
  return await cache?.hold(renter, manifest).catch((err: Error) => { log('input cache not read: %e', err); return none }) ?? none
}

/** Links every held file of the manifest into the job's inputs/ at its path (read-only: the cache's bytes). */
export async function placeHeldInputs (
  cache: InputCache | undefined,
  manifest: FileEntry[],
  holding: Holding | undefined,
  inputsDir: string
): Promise<void> {
  if (holding == null || holding.digests.size === 0 || cache == null) return
  for (const f of manifest) {
    const hex = toHex(f.sha256)
    if (holding.digests.has(hex)) await cache.materialize(hex, join(inputsDir, f.path))
  }
}

/** Keeps the inputs that arrived (checked against their digests) in the input cache for this renter's next jobs. */
export async function keepReceivedInputs (
  cache: InputCache | undefined,
  renter: string,
  received: FileEntry[],
  inputsDir: string
): Promise<void> {
  if (cache == null) return
  for (const f of received) {
    if (f.size > 0n) await cache.put(renter, join(inputsDir, f.path), f)
  }
}
