/**
 * Heartbeats straight to connected peers (issue 15 item 3), replacing the global heartbeat
 * topic that made every node validate N / interval messages a second: a node opens
 * /idlegrid/heartbeat/1.0.0 to each connected peer that speaks it and writes one
 * length-prefixed SignedEnvelope("heartbeat", Heartbeat), then closes; nothing is answered.
 * Per-node cost is O(connections / interval), flat in the network size.
 *
 * The receiving side (protocols/README.md §"Heartbeat stream"): the sender's rate is checked
 * before anything is read, the frame is bounded, the envelope must be signed by the peer that
 * sent it (no relaying), then the heartbeat's own rules (heartbeat.ts) decide. A stream that
 * breaks a rule is aborted and the peer struck through the peer guard; one ignored (a clock
 * rule, a stale sequence) is closed without blame.
 */
import * as lp from 'it-length-prefixed'
import { envelopeMaxBytes, MAX_BYTES } from '../../../protocols/codec.js'
import { DOMAIN, PROTOCOL } from '../../../protocols/ids.js'
import { isEnvelopeError, openEnvelope, type OpenedEnvelope } from '../../identity/index.js'
import { ignore, reject, type GossipVerdict } from '../gossip.js'
import { TokenBuckets, type RateLimit } from '../guard/token-bucket.js'
import type { PeerGuard } from '../guard/peer-guard.js'
import type { Logger, PeerId, Stream } from '@libp2p/interface'
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal'

/** Largest heartbeat frame: one envelope around a heartbeat of at most MAX_BYTES.heartbeat (256 + 256 = 512 bytes). */
export const MAX_HEARTBEAT_FRAME_BYTES = envelopeMaxBytes(MAX_BYTES.heartbeat)
/** Time for one send (open, write, close) and for reading one inbound frame. */
export const HEARTBEAT_STREAM_TIMEOUT_MS = 5_000
/** Heartbeat streams open at once on one connection, each way (one per beat is the honest need). */
export const MAX_HEARTBEAT_STREAMS = 2

/** A heartbeat stream verdict: what the receiver decided and why (counted by reason). */
export type HeartbeatVerdict = GossipVerdict

/** Judges one opened envelope from `from` (heartbeat.ts: time rules, sequence) and records it when accepted. */
export type HeartbeatReceiver = (envelope: OpenedEnvelope, from: PeerId) => HeartbeatVerdict

export interface HeartbeatInboxInit {
  /** heartbeats validated per peer (the gossip limit's heartbeats class by default) */
  rateLimit: RateLimit
  /** strikes peers that break the rules or flood (absent: rejections are only counted) */
  guard?: PeerGuard
  /** peers whose rate buckets are kept (least recently seen dropped past it) */
  maxTrackedPeers?: number
  log: Logger
  now?: () => number
}

/** The receiving side: rate, bounds, envelope and signer checks, then the heartbeat's own rules. */
export class HeartbeatInbox {
  private readonly init: HeartbeatInboxInit
  private readonly rates: TokenBuckets
  private readonly counts: Record<string, number> = {}

  constructor (init: HeartbeatInboxInit) {
    this.init = init
    this.rates = new TokenBuckets(init.maxTrackedPeers ?? 10_000, init.now)
  }

  /** counts of verdicts by reason ("accept", "reject:bad-signature", "ignore:expired" …) */
  stats (): Record<string, number> {
    return { ...this.counts }
  }

  async handle (registrar: Registrar, receive: HeartbeatReceiver): Promise<void> {
    await registrar.handle(
      PROTOCOL.heartbeat,
      ({ stream, connection }) => {
        this.serve(stream, connection.remotePeer, receive).catch((err: unknown) => {
        // serve() settles every verdict itself; this is a broken stream, never a crash
          this.init.log('heartbeat stream from %p failed: %e', connection.remotePeer, err)
          stream.abort(err instanceof Error ? err : new Error(String(err)))
        })
      },
      {
        maxInboundStreams: MAX_HEARTBEAT_STREAMS,
        maxOutboundStreams: MAX_HEARTBEAT_STREAMS,
        runOnLimitedConnection: true
      }
    )
  }

  private async serve (stream: Stream, remote: PeerId, receive: HeartbeatReceiver): Promise<void> {
    // the sender's rate before any read: a flood of streams costs us no decode and no signature check
    if (!this.rates.take(remote.toString(), this.init.rateLimit)) {
      this.init.guard?.messageOverLimit(remote, true, 'heartbeat stream')
      this.settle(stream, remote, ignore('rate limit'))
      return
    }
    let verdict: HeartbeatVerdict
    const signal = AbortSignal.timeout(HEARTBEAT_STREAM_TIMEOUT_MS)
    try {
      const frame = await readOneFrame(stream, signal)
      verdict = frame == null ? reject('no heartbeat frame') : this.judge(frame, remote, receive)
    } catch (err: any) {
      verdict = err?.name === 'InvalidDataLengthError' || err?.name === 'InvalidDataLengthLengthError'
        ? reject(`oversized (over ${MAX_HEARTBEAT_FRAME_BYTES} bytes)`)
        : signal.aborted ? reject('timeout') : reject('malformed frame')
    }
    this.settle(stream, remote, verdict)
  }

  /** The checks after the rate and the read: envelope, signer = sender, then `receive` (public for the fuzzer). */
  judge (frame: Uint8Array, remote: PeerId, receive: HeartbeatReceiver): HeartbeatVerdict {
    let envelope: OpenedEnvelope
    try {
      envelope = openEnvelope(frame, { domain: DOMAIN.heartbeat, maxBytes: MAX_HEARTBEAT_FRAME_BYTES })
    } catch (err) {
      if (isEnvelopeError(err)) return reject(err.reason)
      return reject('malformed envelope')
    }
    // only a peer speaks for its presence: a relayed heartbeat could only replay someone's
    if (!envelope.signer.equals(remote)) return reject('wrong-signer')
    return receive(envelope, remote)
  }

  private settle (stream: Stream, remote: PeerId, verdict: HeartbeatVerdict): void {
    const key = verdict.action === 'accept' ? 'accept' : `${verdict.action}:${verdict.reason}`
    this.counts[key] = (this.counts[key] ?? 0) + 1
    if (verdict.action === 'reject') {
      this.init.log('rejected a heartbeat from %p: %s', remote, verdict.reason)
      this.init.guard?.misbehaved(remote, `heartbeat stream: ${verdict.reason}`)
      stream.abort(new Error(`heartbeat rejected: ${verdict.reason}`))
      return
    }
    stream.close().catch(() => { stream.abort(new Error('heartbeat stream not closed')) })
  }
}

/** Reads the one length-prefixed frame of a heartbeat stream (undefined: closed without one). */
async function readOneFrame (stream: Stream, signal: AbortSignal): Promise<Uint8Array | undefined> {
  const onAbort = (): void => { stream.abort(signal.reason instanceof Error ? signal.reason : new Error('timeout')) }
  signal.addEventListener('abort', onAbort, { once: true })
  try {
    const first = await lp
      .decode(stream.source, { maxDataLength: MAX_HEARTBEAT_FRAME_BYTES })[Symbol.asyncIterator]()
      .next()
    if (signal.aborted) throw signal.reason
    return first.done === true ? undefined : first.value.subarray()
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}

/**
 * Writes `envelope` to `peer` on the heartbeat protocol over an open connection (never dials:
 * presence goes to peers we are connected to) and closes the stream; bounded by `signal`.
 */
export async function sendHeartbeat (connections: Pick<ConnectionManager, 'getConnections'>, peer: PeerId, envelope: Uint8Array, signal: AbortSignal): Promise<void> {
  const connection = connections.getConnections(peer).find(c => c.status === 'open')
  if (connection == null) throw new Error(`not connected to ${peer.toString()}`)
  // lazy select: the frame rides with the protocol proposal (we send only to peers whose identify listed it)
  // one small frame: it may cross a relay's limited circuit (relay.ts)
  const stream = await connection.newStream(PROTOCOL.heartbeat, {
    signal,
    negotiateFully: false,
    runOnLimitedConnection: true
  })
  const onAbort = (): void => { stream.abort(new Error('heartbeat send timed out')) }
  signal.addEventListener('abort', onAbort, { once: true })
  try {
    await stream.sink([lp.encode.single(envelope)])
    await stream.close({ signal })
  } catch (err) {
    stream.abort(err instanceof Error ? err : new Error(String(err)))
    throw err
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}
