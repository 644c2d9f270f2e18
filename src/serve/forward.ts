/**
 * The gateway's side of /idlegrid/serve/1.1.0: one request to one replica on a pooled stream,
 * its answer's head, then its body as it streams; the stream goes back to the pool once the
 * answer's End is read (any failure or abort closes it instead). A failure says whether the
 * replica could have acted on the request (`passedOn`): one it never passed on may go to
 * another replica whatever its method.
 */
import { forwardError, isForwardError, isStreamError, streamError, type ForwardError } from './errors.js'
import { SERVE_CHUNK_BYTES, serveFrameKind, type ServeChannel } from './wire.js'
import type { ServeStreamPool } from './stream-pool.js'
import type { ServeFrame } from '../../protocols/serve.js'
import type { PeerId } from '@libp2p/interface'

export type { Dialer } from './stream-pool.js'

export interface ForwardRequest {
  method: string
  path: string
  headers: ServeFrame.Header[]
  body: Uint8Array
}

export interface ForwardAnswer {
  response: ServeFrame.Response
  /** the body, chunk by chunk; throws ServeError ERR_SERVE_FORWARD when the answer breaks off */
  body: AsyncGenerator<Uint8Array>
  /** the whole body when its End came with the head (the stream is back in the pool then): no need to read `body` */
  whole?: Uint8Array[]
  /** ms from the request's first byte to the response head */
  headMs: number
  abort: () => void
}

/** Codes with which a provider says it did not pass the request on. */
const NOT_PASSED_ON = new Set(['NO_LEASE', 'DRAINING', 'OVERLOADED'])

function asForwardError (err: any): ForwardError {
  if (isForwardError(err)) return err
  // a provider without this protocol version refused it at selection: nothing was passed on
  if (err?.name === 'UnsupportedProtocolError') return forwardError(503, `the replica's provider does not speak this serve protocol version: ${String(err.message)}`, { passedOn: false, wireCode: 'UNSUPPORTED' })
  if (isStreamError(err)) {
    if (err.cause != null && (err.cause as Error).name === 'UnsupportedProtocolError') return asForwardError(err.cause)
    if (err.wireCode === 'TIMEOUT') return forwardError(504, `the replica did not answer in time: ${err.message}`, { passedOn: true, wireCode: err.wireCode, fromProvider: err.remote })
    const notPassed = err.remote && NOT_PASSED_ON.has(err.wireCode)
    return forwardError(notPassed ? 503 : 502, `replica: ${err.wireCode} ${err.message}`, { passedOn: !notPassed, wireCode: err.wireCode, fromProvider: err.remote })
  }
  return forwardError(502, `replica stream failed: ${String(err?.message ?? err)}`, { passedOn: true })
}

/** A replica as a request reaches it: the lease `leaseId` on `provider`. */
export interface ReplicaAddress {
  provider: PeerId
  leaseId: Uint8Array
}

/** Sends `req` to the replica `leaseId` on `provider`; resolves at the response head. */
export async function forward (
  streams: ServeStreamPool,
  replica: ReplicaAddress,
  req: ForwardRequest,
  opts: { timeoutMs: number, dialMs?: number, silenced?: AbortSignal }
): Promise<ForwardAnswer> {
  const { provider, leaseId } = replica
  const t0 = performance.now()
  let ch: ServeChannel
  try {
    ch = (await streams.acquire(provider, opts.dialMs ?? Math.min(opts.timeoutMs, 5_000))).ch
  } catch (err: any) {
    // nothing reached the replica
    throw forwardError(503, `replica unreachable: ${String(err?.message ?? err)}`, { passedOn: false })
  }
  let response: ServeFrame.Response
  // the replica given up as silent while this waits for its head: stop waiting (never answered by
  // it, so not fromProvider)
  const silenced = opts.silenced
  const onSilence = (): void => { ch.abort(streamError('UPSTREAM', 'the replica\'s provider went silent')) }
  if (silenced?.aborted === true) onSilence()
  silenced?.addEventListener('abort', onSilence, { once: true })
  try {
    ch.send({ request: { leaseId, method: req.method, path: req.path, headers: req.headers } })
    for (let at = 0; at < req.body.byteLength; at += SERVE_CHUNK_BYTES) {
      ch.send({ body: { data: req.body.subarray(at, at + SERVE_CHUNK_BYTES) } })
    }
    ch.send({ end: {} })
    const first = await ch.next()
    if (first == null) throw streamError('UPSTREAM', 'the replica closed without an answer')
    const kind = serveFrameKind(first)
    if (kind !== 'response') throw streamError('PROTOCOL', `the replica answered with ${kind}, not Response`)
    response = first.response as ServeFrame.Response
    if (response.status < 100 || response.status > 599) throw streamError('PROTOCOL', `status ${response.status} is not an HTTP status`)
  } catch (err) {
    ch.abort(err as Error)
    throw asForwardError(err)
  } finally {
    silenced?.removeEventListener('abort', onSilence)
  }
  const headMs = performance.now() - t0
  // once released the stream may already carry another request: abort must not touch it then
  let released = false
  // a short answer's body and End come in the same read as its head: taken now, with no wait
  // (a failure among them surfaces when the body is read, as it would have without this)
  const early: Uint8Array[] = []
  let complete = false
  let broken: unknown
  try {
    for (let frame = ch.tryNext(); frame != null; frame = ch.tryNext()) {
      const kind = serveFrameKind(frame)
      if (kind === 'end') { complete = true; break }
      if (kind !== 'body') throw streamError('PROTOCOL', `unexpected ${kind} frame in the answer`)
      early.push((frame.body as ServeFrame.Body).data)
    }
  } catch (err) {
    broken = err
  }
  if (complete) {
    released = true
    streams.release(provider, ch)
  }
  async function * body (): AsyncGenerator<Uint8Array> {
    try {
      for (const chunk of early) yield chunk
      if (broken != null) throw broken
      if (complete) return
      while (true) {
        const frame = await ch.next()
        if (frame == null) throw streamError('UPSTREAM', 'the answer ended without End')
        const kind = serveFrameKind(frame)
        if (kind === 'end') break
        if (kind !== 'body') throw streamError('PROTOCOL', `unexpected ${kind} frame in the answer`)
        yield (frame.body as ServeFrame.Body).data
      }
    } catch (err) {
      ch.abort(err as Error)
      throw asForwardError(err)
    }
    released = true
    streams.release(provider, ch)
  }
  // made when first read: the gateway never reads it for a whole answer
  let generator: AsyncGenerator<Uint8Array> | undefined
  return {
    response,
    get body () { return (generator ??= body()) },
    whole: complete ? early : undefined,
    headMs,
    abort: () => { if (!released) ch.abort(new Error('gateway gave up')) }
  }
}
