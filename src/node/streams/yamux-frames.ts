/**
 * Large yamux data frames go to the connection as their header and then their data's own
 * pieces, not as one list of both. @libp2p/tls writes each item the muxer gives it with
 * `subarray()`, which copies a list of several pieces into one new buffer: every byte a bulk
 * stream sent (a job's 1 MiB input and output chunks) was copied once more, and each copy was
 * a fresh 1 MiB allocation outside V8's heap, which is what set off most of the sender's major
 * garbage collections (test/bench/transfer.bench.ts, docs/scale.md). Frames under
 * LARGE_FRAME_BYTES keep one item: below that a copy costs less than the TLS records and
 * socket writes that separate pieces would take.
 */
import { Uint8ArrayList } from 'uint8arraylist'
import type { yamux } from '@chainsafe/libp2p-yamux'

type MuxerFactoryFn = ReturnType<typeof yamux>

/** Data frames from this size on are sent in pieces. */
export const LARGE_FRAME_BYTES = 64 * 1024

interface FrameSender {
  sendFrame: (header: { length: number }, data?: Uint8ArrayList) => void
  source: { push: (item: Uint8Array | Uint8ArrayList) => unknown }
}

function isFrameSender (muxer: any): muxer is FrameSender {
  return muxer != null && typeof muxer.sendFrame === 'function' && typeof muxer.source?.push === 'function'
}

const NO_DATA = new Uint8ArrayList()

/**
 * `factoryFn`'s muxers, sending their large data frames in pieces (a muxer without yamux 7's fields
 * is left as it is).
 */
export function largeFramesInPieces (factoryFn: MuxerFactoryFn): MuxerFactoryFn {
  return (components) => {
    const factory = factoryFn(components)
    const createStreamMuxer = factory.createStreamMuxer.bind(factory)
    factory.createStreamMuxer = (muxerInit) => {
      const muxer: unknown = createStreamMuxer(muxerInit)
      // before any stream exists: each stream binds the muxer's sendFrame when it is made
      if (isFrameSender(muxer)) {
        const sendFrame = muxer.sendFrame.bind(muxer)
        muxer.sendFrame = (header, data) => {
          if (data == null || data.byteLength < LARGE_FRAME_BYTES) { sendFrame(header, data); return }
          // yamux's own encoding of the header (its length field already says data's length), alone
          sendFrame(header, NO_DATA)
          for (const piece of data) muxer.source.push(piece)
        }
      }
      return muxer as ReturnType<typeof createStreamMuxer>
    }
    return factory
  }
}
