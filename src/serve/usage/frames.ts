/**
 * /idlegrid/usage/1.0.0 framing: one length-prefixed UsageFrame each way per stream, at most
 * 1 KiB, with a deadline; the asking side opens the stream through a Dialer (as the gateway
 * does), the answering side never throws into libp2p.
 */
import * as lp from 'it-length-prefixed'
import { pipe } from 'it-pipe'
import { decodeBounded, MAX_BYTES } from '../../../protocols/codec.js'
import { PROTOCOL } from '../../../protocols/ids.js'
import { UsageFrame } from '../../../protocols/usage.js'
import { isUsageError, usageError, type UsageRefusedCode } from '../errors.js'
import type { Libp2p, PeerId, Stream } from '@libp2p/interface'

export type UsageDialer = Pick<Libp2p, 'dialProtocol'>

export function refused (code: UsageRefusedCode, message: string): UsageFrame {
  return { refused: { code: UsageFrame.Refused.Code[code] as UsageFrame.Refused.Code, message: message.slice(0, 256) } }
}

export function decodeFrame (bytes: Uint8Array): UsageFrame {
  try {
    const frame = decodeBounded(UsageFrame, bytes, 'usage frame', MAX_BYTES.usageFrame)
    const set = (['proposal', 'countersigned', 'signed', 'recorded', 'refused'] as const).filter(k => frame[k] != null)
    if (set.length !== 1) throw new Error(`frame sets ${set.length} members`)
    return frame
  } catch (err) {
    throw usageError('PROTOCOL', (err as Error).message)
  }
}

async function first (source: AsyncIterable<{ subarray: () => Uint8Array }>): Promise<Uint8Array | undefined> {
  const next = await source[Symbol.asyncIterator]().next()
  return next.done === true ? undefined : next.value.subarray()
}

/** Sends `frame` to `peer` and returns its one answer; a Refused answer throws ServeError ERR_USAGE_EXCHANGE. */
export async function exchange (
  dialer: UsageDialer,
  peer: PeerId,
  frame: UsageFrame,
  timeoutMs: number
): Promise<UsageFrame> {
  const signal = AbortSignal.timeout(timeoutMs)
  let stream: Stream | undefined
  const onAbort = (): void => { stream?.abort(new Error('usage exchange timed out')) }
  signal.addEventListener('abort', onAbort, { once: true })
  let bytes: Uint8Array | undefined
  try {
    stream = await dialer.dialProtocol(peer, PROTOCOL.usage, { signal })
    bytes = await pipe(
      [UsageFrame.encode(frame)],
      s => lp.encode(s),
      stream,
      s => lp.decode(s, { maxDataLength: MAX_BYTES.usageFrame }),
      first
    )
  } catch (err: any) {
    stream?.abort(err instanceof Error ? err : new Error(String(err)))
    throw usageError('PROTOCOL', signal.aborted ? `no answer within ${timeoutMs} ms` : `usage stream failed: ${String(err?.message ?? err)}`)
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
  if (bytes == null) throw usageError('PROTOCOL', 'the peer closed without answering')
  const answer = decodeFrame(bytes)
  if (answer.refused != null) {
    const code = (UsageFrame.Refused.Code[answer.refused.code] ?? 'PROTOCOL') as UsageRefusedCode
    throw usageError(code === 'CODE_UNSPECIFIED' ? 'PROTOCOL' : code, answer.refused.message.slice(0, 256), true)
  }
  return answer
}

/** Answers one frame on an inbound stream with `answer`'s frame; a frame that does not decode gets Refused PROTOCOL. */
export async function answerOne (
  stream: Stream,
  remote: PeerId,
  answer: (frame: UsageFrame, remote: PeerId) => Promise<UsageFrame>,
  timeoutMs: number
): Promise<void> {
  const signal = AbortSignal.timeout(timeoutMs)
  const onAbort = (): void => { stream.abort(new Error('usage request timed out')) }
  signal.addEventListener('abort', onAbort, { once: true })
  try {
    await pipe(
      stream,
      (s) => lp.decode(s, { maxDataLength: MAX_BYTES.usageFrame }),
      async function * (s) {
        const bytes = await first(s)
        if (bytes == null) return
        let reply: UsageFrame
        try {
          reply = await answer(decodeFrame(bytes), remote)
        } catch (err) {
          reply = isUsageError(err) ? refused(err.wireCode, err.message) : refused('PROTOCOL', String((err as Error)?.message ?? err))
        }
        yield UsageFrame.encode(reply)
      },
      (s) => lp.encode(s),
      stream
    )
  } catch (err) {
    // an oversized frame or a broken stream: nothing to answer
    stream.abort(err instanceof Error ? err : new Error(String(err)))
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}
