/**
 * Framing of /idlegrid/serve/1.1.0: length-prefixed ServeFrames both ways over a libp2p
 * stream that carries HTTP requests one after another, each frame bounded (checked on the
 * length prefix, before the body is read), with an idle bound between frames. Violations
 * become ServeErrors (ERR_SERVE_STREAM). Frames sent together go out as one write: a request's head and
 * End, or an answer's head, body and End (held until the answer would wait), cost one muxer
 * frame and one TLS record, not three.
 */
import { decodeBounded } from '../../protocols/codec.js'
import { ServeFrame } from '../../protocols/serve.js'
import { isStreamError, streamError, type ServeFrameCode, type ServeStreamError } from './errors.js'
import type { Stream } from '@libp2p/interface'
import { Uint8ArrayList } from 'uint8arraylist'

/** Body bytes per Body frame. */
export const SERVE_CHUNK_BYTES = 64 * 1024
/** Largest encoded frame: a full body chunk, or a head with its headers. */
export const MAX_SERVE_FRAME_BYTES = SERVE_CHUNK_BYTES + 1024
export const SERVE_LIMITS = { request: { headers: 128 }, response: { headers: 128 } }

/** Largest write of several queued frames (one frame may be larger by itself). */
const BATCH_BYTES = 256 * 1024

/** `frame` behind its unsigned-varint length, in one buffer. */
function lengthPrefixed (frame: Uint8Array): Uint8Array {
  let prefix = 1
  for (let n = frame.byteLength; n >= 0x80; n = Math.floor(n / 0x80)) prefix++
  const out = new Uint8Array(prefix + frame.byteLength)
  let n = frame.byteLength
  for (let i = 0; i < prefix - 1; i++) { out[i] = (n & 0x7f) | 0x80; n = Math.floor(n / 0x80) }
  out[prefix - 1] = n
  out.set(frame, prefix)
  return out
}

const END_BYTES = lengthPrefixed(ServeFrame.encode({ end: {} }))

/**
 * Whether `p` settles in this turn of the event loop (what was already read settles in microtasks),
 * before anything else runs; with `withinMs` > 0, whether it settles within that time.
 */
export async function settlesThisTurn (p: Promise<unknown>, withinMs = 0): Promise<boolean> {
  return await new Promise(resolve => {
    const late = (): void => { resolve(false) }
    const timer = withinMs > 0 ? setTimeout(late, withinMs) : undefined
    const immediate = withinMs > 0 ? undefined : setImmediate(late)
    const settled = (): void => {
      clearTimeout(timer)
      clearImmediate(immediate)
      resolve(true)
    }
    p.then(settled, settled)
  })
}

function concat (items: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size)
  let at = 0
  for (const item of items) { out.set(item, at); at += item.byteLength }
  return out
}

/**
 * Length-prefixed frames (unsigned varint, then that many bytes) from a stream's chunks: each
 * length is checked against the bound as soon as its prefix is read, before its bytes are
 * awaited; whole frames already received are taken without a wait.
 */
class FrameReader {
  private readonly buffer = new Uint8ArrayList()

  constructor (
    private readonly source: AsyncIterator<Uint8ArrayList | Uint8Array>,
    private readonly maxBytes: number
  ) {}

  /** The next whole frame already received, or undefined; throws TOO_LARGE for a length past the bound. */
  take (): Uint8ArrayList | undefined {
    let length = 0
    let at = 0
    while (true) {
      if (at >= this.buffer.byteLength) return undefined
      const byte = this.buffer.get(at)
      length += (byte & 0x7f) * 2 ** (7 * at)
      at++
      if (length > this.maxBytes || (at >= 4 && byte >= 0x80)) throw streamError('TOO_LARGE', `incoming frame exceeds the ${this.maxBytes}-byte frame bound`)
      if (byte < 0x80) break
    }
    if (this.buffer.byteLength < at + length) return undefined
    const frame = this.buffer.sublist(at, at + length)
    this.buffer.consume(at + length)
    return frame
  }

  /** Reads until a whole frame is here (undefined at a clean end of the stream), at most `idleMs`. */
  async fill (idleMs: number): Promise<Uint8ArrayList | undefined> {
    // one timer for the whole wait, and one promise per read (not a race of two: this runs per request)
    let expire: (() => void) | undefined
    let expired = false
    const timer = setTimeout(() => { expired = true; expire?.() }, idleMs)
    try {
      while (true) {
        let chunk: IteratorResult<Uint8ArrayList | Uint8Array>
        try {
          chunk = await new Promise((resolve, reject) => {
            expire = () => { reject(streamError('TIMEOUT', `no frame within ${idleMs} ms`)) }
            if (expired) expire()
            else this.source.next().then(resolve, reject)
          })
        } catch (err: any) {
          if (isStreamError(err)) throw err
          throw streamError('UPSTREAM', `stream failed: ${String(err?.message ?? err)}`, { cause: err })
        }
        if (chunk.done === true) {
          if (this.buffer.byteLength > 0) throw streamError('UPSTREAM', 'the stream ended inside a frame')
          return undefined
        }
        this.buffer.append(chunk.value)
        const frame = this.take()
        if (frame != null) return frame
      }
    } finally {
      clearTimeout(timer)
    }
  }
}

export type ServeFrameKind = 'request' | 'body' | 'end' | 'response' | 'error'
const KINDS: ServeFrameKind[] = ['request', 'body', 'end', 'response', 'error']

export function serveFrameKind (frame: ServeFrame): ServeFrameKind {
  let kind: ServeFrameKind | undefined
  for (const k of KINDS) {
    if (frame[k] == null) continue
    if (kind != null) throw streamError('PROTOCOL', `frame sets ${KINDS.filter(m => frame[m] != null).join(' and ')}`)
    kind = k
  }
  if (kind == null) throw streamError('PROTOCOL', 'frame has no known member')
  return kind
}

/**
 * One side of a serve stream: `next()` reads (undefined at a clean end), `send()` writes, `error()`
 * tells why and ends.
 */
export class ServeChannel {
  private readonly reader: FrameReader
  private readonly queue: Uint8Array[] = []
  private queuedBytes = 0
  private wake?: () => void
  private readonly drained: Array<() => void> = []
  private readonly sinkDone: Promise<void>
  private ended = false
  private holding = false

  constructor (readonly stream: Stream, private readonly idleMs: number) {
    this.reader = new FrameReader(stream.source[Symbol.asyncIterator](), MAX_SERVE_FRAME_BYTES)
    this.sinkDone = stream.sink(this.outgoing()).catch(() => {})
  }

  /** Still usable for another request: nothing ended, aborted or closed on either side. */
  get reusable (): boolean {
    return !this.ended && this.stream.status === 'open' && this.stream.readStatus === 'ready' && (this.stream.writeStatus === 'ready' || this.stream.writeStatus === 'writing')
  }

  /** Queues `frame`; it goes out at once unless the channel holds (`hold`). */
  send (frame: ServeFrame): void {
    if (this.ended) throw streamError('PROTOCOL', 'stream already ended')
    // End is the same bytes every time (once per request each way)
    const bytes =
      frame.end != null &&
      frame.request == null &&
      frame.response == null &&
      frame.body == null &&
      frame.error == null
        ? END_BYTES
        : lengthPrefixed(ServeFrame.encode(frame))
    this.queue.push(bytes)
    this.queuedBytes += bytes.byteLength
    if (!this.holding) this.wake?.()
  }

  /**
   * Frames sent from now on wait until `flush`, then go out together in one write (one muxer
   * frame, one TLS record): an answer's head, short body and End, sent a tick or two apart.
   */
  hold (): void {
    this.holding = true
  }

  flush (): void {
    this.holding = false
    if (this.queue.length > 0) this.wake?.()
  }

  get held (): boolean {
    return this.holding
  }

  /** Bytes queued and not yet taken by the stream: a writer waits (`drain`) while this is high. */
  get queued (): number {
    return this.queuedBytes
  }

  /** Resolves once the queue is empty (or the channel ended). */
  async drain (): Promise<void> {
    this.flush()
    if (this.queue.length === 0 || this.ended) return
    await new Promise<void>(resolve => { this.drained.push(resolve) })
  }

  /** What is queued, length-prefixed frames joined into writes of at most about BATCH_BYTES. */
  private async * outgoing (): AsyncGenerator<Uint8Array> {
    while (true) {
      if (this.queue.length > 0 && (!this.holding || this.ended)) {
        let n = 0
        let size = 0
        while (n < this.queue.length && (n === 0 || size + (this.queue[n] as Uint8Array).byteLength <= BATCH_BYTES)) {
          size += (this.queue[n++] as Uint8Array).byteLength
        }
        const items = this.queue.splice(0, n)
        this.queuedBytes -= size
        yield items.length === 1 ? items[0] as Uint8Array : concat(items, size)
        if (this.queue.length === 0) for (const done of this.drained.splice(0)) done()
        continue
      }
      if (this.ended) return
      await new Promise<void>(resolve => { this.wake = resolve })
      this.wake = undefined
    }
  }

  async next (idleMs = this.idleMs): Promise<ServeFrame | undefined> {
    // frames that came in one read are taken without waiting (an answer's head, body and End)
    const bytes = this.reader.take() ?? await this.reader.fill(idleMs)
    return bytes == null ? undefined : this.decode(bytes)
  }

  /**
   * The next frame when it is already here whole, else undefined (nothing is awaited): a short
   * answer's body and End come in the same read as its head and are taken with no further
   * turn of the event loop.
   */
  tryNext (): ServeFrame | undefined {
    const bytes = this.reader.take()
    return bytes == null ? undefined : this.decode(bytes)
  }

  private decode (bytes: Uint8ArrayList): ServeFrame {
    let frame: ServeFrame
    try {
      frame = decodeBounded(ServeFrame, bytes, 'serve frame', MAX_SERVE_FRAME_BYTES, SERVE_LIMITS)
    } catch (err) {
      throw streamError('PROTOCOL', (err as Error).message, { cause: err })
    }
    if (serveFrameKind(frame) === 'error') {
      const e = frame.error as ServeFrame.Error
      const code = (ServeFrame.Error.Code[e.code] ?? 'PROTOCOL') as ServeFrameCode
      throw streamError(code === 'CODE_UNSPECIFIED' ? 'PROTOCOL' : code, e.message.slice(0, 512), { remote: true })
    }
    return frame
  }

  /** Sends what is queued and closes our side for writing. */
  async end (): Promise<void> {
    this.ended = true
    this.wake?.()
    await this.sinkDone
  }

  /** Sends an Error frame (unless the failure came from the other side) and closes. */
  async fail (err: ServeStreamError): Promise<void> {
    if (!err.remote && !this.ended) {
      try {
        this.send({
          error: {
            code: ServeFrame.Error.Code[err.wireCode] as ServeFrame.Error.Code,
            message: err.message.slice(0, 512)
          }
        })
      } catch {}
    }
    await Promise.race([this.end(), new Promise(resolve => setTimeout(resolve, 1_000).unref())])
    this.stream.close().catch(() => { this.stream.abort(err) })
  }

  abort (err: Error): void {
    this.ended = true
    this.queue.length = 0
    this.wake?.()
    for (const done of this.drained.splice(0)) done()
    this.stream.abort(err)
  }

  async close (): Promise<void> {
    await this.end()
    await this.stream.close({ signal: AbortSignal.timeout(5_000) }).catch(() => { this.stream.abort(new Error('close timed out')) })
  }
}

/** Hop-by-hop headers: they describe one connection and never cross the hop. */
export const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host', 'content-length'])

/** Headers of a Node request/response as wire pairs, without hop-by-hop ones. */
export function wireHeaders (raw: string[]): ServeFrame.Header[] {
  const out: ServeFrame.Header[] = []
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase()
    if (!HOP_BY_HOP.has(name)) out.push({ name, value: raw[i + 1] as string })
  }
  return out
}
