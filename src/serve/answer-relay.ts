/**
 * The service's answer body relayed to the serve stream as Body frames (ServeHost.pass, host.ts):
 * a short answer taken whole, a longer one as it comes, with reading the service paused while the
 * stream is behind.
 */
import { type IncomingMessage } from 'node:http'
import { isStreamError, streamError, type ServeStreamError } from './errors.js'
import { SERVE_CHUNK_BYTES, type ServeChannel } from './wire.js'
import type { HostedLease } from './host.js'

/** Answer bytes held back to go out with the head. */
const HOLD_BYTES = 64 * 1024
/** Answer bytes queued on the stream past which reading the service pauses. */
const QUEUE_BYTES = 1024 * 1024

/** `chunk` as Body frames of at most SERVE_CHUNK_BYTES, counted as the lease's bytes out. */
function sendBody (chunk: Buffer, ch: ServeChannel, hosted: HostedLease): void {
  for (let at = 0; at < chunk.byteLength; at += SERVE_CHUNK_BYTES) {
    const data = chunk.subarray(at, at + SERVE_CHUNK_BYTES)
    hosted.bytesOut += data.byteLength
    ch.send({ body: { data } })
  }
}

/**
 * An answer already parsed whole by the time its head is handled (a short one, usually in the
 * read that brought the head; never more than Node buffers for an unread answer): its body
 * taken at once, with no listeners, promise or wait. Reading it to its end frees the connection
 * to the service for the next request.
 */
export function relayWhole (res: IncomingMessage, ch: ServeChannel, hosted: HostedLease): void {
  try {
    for (let chunk = res.read() as Buffer | null; chunk != null; chunk = res.read() as Buffer | null) {
      sendBody(chunk, ch, hosted)
    }
  } catch (err) {
    res.destroy()
    throw err
  }
}

/**
 * The service's answer body as Body frames, as it comes (events, not an async iterator: this
 * runs once per request); what is held is flushed once the answer waits a turn of the event loop.
 */
export async function relayBody (res: IncomingMessage, ch: ServeChannel, hosted: HostedLease): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    let waiting: NodeJS.Immediate | undefined = setImmediate(() => { waiting = undefined; ch.flush() })
    let done = false
    const finish = (err?: ServeStreamError): void => {
      if (done) return
      done = true
      if (waiting != null) clearImmediate(waiting)
      res.off('data', onData)
      if (err == null) { resolve(); return }
      res.destroy()
      reject(err)
    }
    const onData = (chunk: Buffer): void => {
      try {
        sendBody(chunk, ch, hosted)
      } catch (err: any) {
        finish(isStreamError(err) ? err : streamError('UPSTREAM', String(err?.message ?? err)))
        return
      }
      if (ch.held && ch.queued >= HOLD_BYTES) ch.flush()
      if (ch.queued > QUEUE_BYTES) {
        res.pause()
        void ch.drain().then(() => { if (!done) res.resume() })
      }
    }
    res.on('data', onData)
    res.once('end', () => { finish() })
    res.once('error', (err) => { finish(streamError('UPSTREAM', `the service broke off its answer: ${err.message}`)) })
    // a connection cut before the end (no error on every Node version)
    res.once('close', () => { if (!res.complete) finish(streamError('UPSTREAM', 'the service broke off its answer: the connection closed before the end')) })
  })
}
