/**
 * yamux with window updates sent once half the smallest stream window is owed, not after every
 * read. @chainsafe/libp2p-yamux 7 answers each data frame a stream's reader takes with a
 * WindowUpdate frame of its own: on a request/response stream (a bid, a serve request) that is
 * one more frame, one more TLS record and one more socket write per message, about a quarter of
 * the serve path's CPU (test/bench/serve.bench.ts). go-yamux, rust-yamux and hashicorp/yamux all
 * wait until half the window is owed.
 *
 * Deadlock-free: the sender's window is never below the initial 256 KiB (yamux starts every
 * stream there and only grows it), so a sender blocked on its window has at least 256 KiB
 * outstanding, and the reader's taking it owes at least the 128 KiB that sends the update.
 * Frames that carry flags (a stream's SYN or ACK) always go out at once, and the first update
 * announces the receive window configured beyond 256 KiB (yamux 7 never did: its senders stayed
 * at 256 KiB whatever the receiver allowed).
 *
 * Works on the stream's own fields (state, recvWindow, recvWindowCapacity); a yamux whose
 * streams lack them is used unchanged (`lazyWindowStats` counts the streams it tuned).
 */
import { yamux } from '@chainsafe/libp2p-yamux'

/** yamux's initial stream window (the spec's 256 KiB), the least window a sender ever has */
const INITIAL_STREAM_WINDOW = 256 * 1024
/** send a window update once this much of the window is owed */
export const WINDOW_UPDATE_THRESHOLD = INITIAL_STREAM_WINDOW / 2
/** yamux's StreamState: only Init and SYNReceived send flags with their next update */
const STATE_INIT = 0
const STATE_SYN_RECEIVED = 2

type YamuxFactoryInit = Parameters<typeof yamux>[0]
type MuxerFactoryFn = ReturnType<typeof yamux>

interface TunableStream {
  state: number
  recvWindow: number
  recvWindowCapacity: number
  sendWindowUpdate: () => void
}

/** What this process's tuned streams did so far (zero streams means yamux's internals moved). */
export interface LazyWindowStats {
  streams: number
  /** window updates sent (with flags, or with at least the threshold owed) */
  updates: number
  /** reads that owed less and sent nothing */
  skipped: number
}

const stats: LazyWindowStats = { streams: 0, updates: 0, skipped: 0 }

export function lazyWindowStats (): LazyWindowStats {
  return { ...stats }
}

function isTunable (stream: any): stream is TunableStream {
  return stream != null && typeof stream.sendWindowUpdate === 'function' && typeof stream.state === 'number' &&
    typeof stream.recvWindow === 'number' && typeof stream.recvWindowCapacity === 'number'
}

function tune (stream: unknown): void {
  if (!isTunable(stream)) return
  const eager = stream.sendWindowUpdate
  // the window this side allows beyond the 256 KiB every sender starts with: yamux 7 counts it
  // as given but never says so, so the first update tells the sender (as go-yamux does with SYN)
  let unannounced = Math.max(0, stream.recvWindow - INITIAL_STREAM_WINDOW)
  stream.sendWindowUpdate = function (this: TunableStream) {
    const flagged = this.state === STATE_INIT || this.state === STATE_SYN_RECEIVED
    if (!flagged && unannounced === 0 && this.recvWindow - this.recvWindowCapacity < WINDOW_UPDATE_THRESHOLD) {
      stats.skipped++
      return
    }
    if (unannounced > 0) {
      this.recvWindowCapacity -= unannounced
      unannounced = 0
    }
    stats.updates++
    eager.call(this)
  }
  stats.streams++
}

/** `yamux(init)` whose muxers' streams send lazy window updates. */
export function lazyWindowYamux (init?: YamuxFactoryInit): MuxerFactoryFn {
  const factoryFn = yamux(init)
  return (components) => {
    const factory = factoryFn(components)
    const createStreamMuxer = factory.createStreamMuxer.bind(factory)
    factory.createStreamMuxer = (muxerInit) => {
      const muxer: any = createStreamMuxer(muxerInit)
      // every stream, inbound and outbound, is made by this one method
      if (typeof muxer._newStream === 'function') {
        const newStream = muxer._newStream.bind(muxer)
        muxer._newStream = (...args: unknown[]) => {
          const stream = newStream(...args)
          tune(stream)
          return stream
        }
      }
      return muxer
    }
    return factory
  }
}
