/**
 * Framing of the job stream (/idlegrid/job/1.0.0): length-prefixed JobFrames both ways over
 * one libp2p stream, with a bound on each frame (checked on the length prefix, before the
 * body is read) and on the idle time between frames. Every violation becomes a
 * ExecError ERR_JOB_STREAM; the side that sees it sends an Error frame and ends the stream.
 */
import * as lp from 'it-length-prefixed'
import { Uint8ArrayList } from 'uint8arraylist'
import { LIMITS, MAX_BYTES, MAX_CHUNK_BYTES, decodeBounded } from '../../../protocols/codec.js'
import { JobFrame } from '../../../protocols/job.js'
import { decodeChunkFrame, encodeChunkFrame, type ChunkKind, type ReceivedChunk } from './chunk-frame.js'
import { errorFrame, isStreamError, type JobStreamError, type JobStreamErrorCode, streamError } from '../errors.js'
import type { Stream } from '@libp2p/interface'

/** Largest encoded JobFrame (1 MiB of chunk data + 4 KiB). */
export const MAX_FRAME_BYTES = MAX_BYTES.jobFrame
/**
 * Bytes of file data per chunk frame. A little under MAX_CHUNK_BYTES so that a whole frame,
 * prefix and all, fits one 1 MiB yamux message.
 */
export const CHUNK_BYTES = MAX_CHUNK_BYTES - 256
/** Frames queued for sending before send() waits: bounds memory on a slow reader. */
const SEND_QUEUE_FRAMES = 8

export type FrameKind = 'start' | 'inputChunk' | 'inputEnd' | 'accepted' | 'rejected' | 'log' | 'outputChunk' | 'result' | 'attestation' | 'receipt' | 'error' | 'progress' | 'receiptAck' | 'held'

const KINDS: FrameKind[] = ['start', 'inputChunk', 'inputEnd', 'accepted', 'rejected', 'log', 'outputChunk', 'result', 'attestation', 'receipt', 'error', 'progress', 'receiptAck', 'held']

/** A frame as received: chunk data stays in the pieces it arrived in (chunk-frame.ts). */
export type ReceivedFrame = Omit<JobFrame, 'inputChunk' | 'outputChunk'> & { inputChunk?: ReceivedChunk, outputChunk?: ReceivedChunk }

/** Which member of the oneof is set; exactly one must be (else PROTOCOL). */
export function frameKind (frame: ReceivedFrame): FrameKind {
  const set = KINDS.filter(k => frame[k] != null)
  if (set.length !== 1) throw streamError('PROTOCOL', set.length === 0 ? 'frame has no known member' : `frame sets ${set.join(' and ')}`)
  return set[0] as FrameKind
}

/** `promise`, unless `ms` pass first: then the error `onTimeout` makes is thrown. */
export async function withDeadline<T> (promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([promise, new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { reject(onTimeout()) }, ms)
    })])
  } finally {
    clearTimeout(timer)
  }
}

export interface ChannelOptions {
  /** longest wait for the next frame, ms */
  idleMs: number
  /** bound on one incoming frame (default MAX_FRAME_BYTES) */
  maxFrameBytes?: number
}

function mapReadError (err: any): JobStreamError {
  if (isStreamError(err)) return err
  switch (err?.name) {
    case 'InvalidDataLengthError':
    case 'InvalidDataLengthLengthError':
      return streamError('FRAME_TOO_LARGE', 'incoming frame exceeds the frame bound', { cause: err })
    case 'InvalidMessageLengthError':
    case 'UnexpectedEOFError':
      return streamError('PROTOCOL', `stream ended inside a frame: ${String(err?.message ?? err)}`, { cause: err })
    default:
      return streamError('CANCELLED', `stream failed: ${String(err?.message ?? err)}`, { cause: err })
  }
}

/**
 * One side of a job stream. `next()` reads the next frame (undefined when the other side
 * closed cleanly); `send()` queues one (waiting while the queue is full); `fail()` sends an
 * Error frame and closes; an Error frame received is thrown as a remote ExecError ERR_JOB_STREAM.
 */
export class FrameChannel {
  readonly stream: Stream
  private readonly idleMs: number
  private readonly reader: AsyncIterator<Uint8ArrayList>
  private readonly queue: Uint8ArrayList[] = []
  private wakeWriter?: () => void
  private readonly spaceWaiters: Array<() => void> = []
  private ended = false
  private closed = false
  private readonly sinkDone: Promise<void>

  constructor (stream: Stream, opts: ChannelOptions) {
    this.stream = stream
    this.idleMs = opts.idleMs
    this.reader = lp
      .decode(stream.source, { maxDataLength: opts.maxFrameBytes ?? MAX_FRAME_BYTES })[Symbol.asyncIterator]()
    this.sinkDone = stream.sink(this.outgoing()).catch(() => {})
  }

  /** Queues a frame; resolves when it has been handed to the stream (or the stream is gone). */
  async send (frame: JobFrame): Promise<void> {
    const body = JobFrame.encode(frame)
    await this.enqueue(lp.encode.single(body), body.byteLength)
  }

  /** Queues a chunk frame without copying `data` (chunk-frame.ts); as send() otherwise. */
  async sendChunk (kind: ChunkKind, path: string, offset: bigint, data: Uint8Array): Promise<void> {
    const { framed, bodyBytes } = encodeChunkFrame(kind, path, offset, data)
    await this.enqueue(framed, bodyBytes)
  }

  private async enqueue (framed: Uint8ArrayList, bodyBytes: number): Promise<void> {
    if (this.ended || this.closed) throw streamError('CANCELLED', 'stream already ended')
    if (bodyBytes > MAX_FRAME_BYTES) throw streamError('FRAME_TOO_LARGE', `frame of ${bodyBytes} bytes exceeds the bound`)
    while (this.queue.length >= SEND_QUEUE_FRAMES && !this.closed) {
      await new Promise<void>(resolve => { this.spaceWaiters.push(resolve) })
    }
    if (this.closed) throw streamError('CANCELLED', 'stream closed')
    this.queue.push(framed)
    this.wakeWriter?.()
  }

  /** Sends raw bytes as one frame (tests use this to send what a well-behaved peer never would). */
  async sendRaw (bytes: Uint8Array): Promise<void> {
    this.queue.push(new Uint8ArrayList(lp.encode.single(bytes)))
    this.wakeWriter?.()
  }

  /** The next frame, or undefined at a clean end. Throws ExecError ERR_JOB_STREAM on any violation. */
  async next (idleMs = this.idleMs): Promise<ReceivedFrame | undefined> {
    let result: IteratorResult<Uint8ArrayList>
    try {
      result = await withDeadline(this.reader.next(), idleMs, () => streamError('IDLE_TIMEOUT', `no frame within ${idleMs} ms`))
    } catch (err) {
      throw mapReadError(err)
    }
    if (result.done === true) return undefined
    const chunk = decodeChunkFrame(result.value, MAX_FRAME_BYTES)
    if (chunk != null) return { [chunk.kind]: chunk.chunk }
    let frame: JobFrame
    try {
      frame = decodeBounded(JobFrame, result.value, 'job frame', MAX_FRAME_BYTES, LIMITS.jobFrame)
    } catch (err) {
      throw streamError('PROTOCOL', (err as Error).message, { cause: err })
    }
    if (frameKind(frame) === 'error') {
      const e = frame.error as JobFrame.Error
      const code = (e.code === JobFrame.Error.Code.CODE_UNSPECIFIED ? 'PROTOCOL' : e.code) as JobStreamErrorCode
      throw streamError(code, `peer reported ${code}: ${e.message.slice(0, 512)}`, { remote: true })
    }
    return frame
  }

  /** Sends what is queued, then closes our side for writing. */
  async end (): Promise<void> {
    this.ended = true
    this.wakeWriter?.()
    await this.sinkDone
  }

  /** Tells the other side why we stop (best effort), then closes the stream. */
  async fail (err: JobStreamError, graceMs = 1_000): Promise<void> {
    if (!err.remote && !this.closed && !this.ended) {
      this.queue.length = 0
      try { await this.send({ error: errorFrame(err) }) } catch {}
    }
    this.ended = true
    this.wakeWriter?.()
    await Promise.race([this.sinkDone, new Promise(resolve => setTimeout(resolve, graceMs).unref())])
    this.abort(err)
  }

  /** Ends the stream at once. */
  abort (err?: Error): void {
    this.closed = true
    this.ended = true
    this.queue.length = 0
    this.wakeWriter?.()
    for (const wake of this.spaceWaiters.splice(0)) wake()
    if (err != null) this.stream.abort(err)
    else this.stream.close().catch(() => { this.stream.abort(new Error('close failed')) })
  }

  /** Closes both directions after our queued frames are sent. */
  async close (): Promise<void> {
    await this.end()
    try {
      await this.stream.close({ signal: AbortSignal.timeout(5_000) })
    } catch {
      this.stream.abort(new Error('close timed out'))
    }
    this.closed = true
  }

  private async * outgoing (): AsyncGenerator<Uint8ArrayList> {
    while (true) {
      const item = this.queue.shift()
      if (item != null) {
        this.spaceWaiters.shift()?.()
        yield item
        continue
      }
      if (this.ended || this.closed) return
      await new Promise<void>(resolve => { this.wakeWriter = resolve })
      this.wakeWriter = undefined
    }
  }
}
