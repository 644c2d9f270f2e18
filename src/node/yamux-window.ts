/**
 * Window updates with hysteresis for @chainsafe/libp2p-yamux 7, applied once when src/node loads.
 *
 * The library sends a window update frame after every data frame a stream reads, however
 * small: a request and its answer cost four muxer frames instead of two, each its own
 * encrypted record and socket write on both sides (the serve gateway's per-request CPU, the
 * heartbeat and bid streams). go-yamux, rust-yamux and py-libp2p send an update only once half
 * a window has been read; this does the same with a threshold the sender can never be stalled
 * by: every yamux sender starts with the spec's 256 KiB and its window only grows, so while
 * less than 128 KiB read is unacknowledged it can still send 128 KiB minus what is in flight,
 * and once that is read the threshold is passed and the update goes. Updates that carry a
 * flag (the stream's SYN or ACK) are never held back. The wire is unchanged: an update is
 * still a plain yamux window update, sent later and larger. test/node/yamux-window.spec.ts
 * counts the frames and moves 8 MiB in 1 KiB writes through it.
 */

import { YamuxStream } from '@chainsafe/libp2p-yamux/stream'

/** half the 256 KiB window every yamux sender starts with (yamux spec, "Flow Control") */
export const WINDOW_UPDATE_THRESHOLD = 128 * 1024

/** the library's StreamState values whose next frame carries SYN or ACK (src/stream.ts) */
const STATE_INIT = 0
const STATE_SYN_RECEIVED = 2

interface WindowState {
  state: number
  recvWindow: number
  recvWindowCapacity: number
  sendWindowUpdate: () => void
}

const proto = YamuxStream.prototype as unknown as WindowState & { librarySendWindowUpdate?: () => void }
if (proto.librarySendWindowUpdate == null) {
  const original = proto.sendWindowUpdate
  proto.librarySendWindowUpdate = original
  proto.sendWindowUpdate = function (this: WindowState) {
    const flagged = this.state === STATE_INIT || this.state === STATE_SYN_RECEIVED
    if (!flagged && this.recvWindow - this.recvWindowCapacity < WINDOW_UPDATE_THRESHOLD) return
    original.call(this)
  }
}
