/**
 * Spam (issue 19 item 5): from one key, invalid messages on every idlegrid topic at `--rate` a
 * second in all (default 1,000: random bytes that no topic's envelope check accepts, signed by
 * gossipsub so they reach the validators), and streams opened and abandoned on every idlegrid
 * protocol of every connected peer as fast as `--streams` concurrent openers (default 8) can.
 * Prints a progress line each second ({sent, streams}) and, at the end, what it sent.
 */
import { randomBytes } from 'node:crypto'
import { ALL_TOPICS, PROTOCOL } from '../../../protocols/ids.js'
import { sleep } from '../../../src/common/index.js'
import { numberOption, type Attack } from './attack.js'
import type { IdlegridNode } from '../../../src/node/index.js'

/** Ticks a second: the rate is spread over them so the flood is steady, not bursts. */
const TICKS_PER_SECOND = 50
const STREAM_TIMEOUT_MS = 2_000

export const spam: Attack = {
  summary: 'invalid messages on every topic at --rate a second, and streams opened and abandoned on every protocol',
  play: async ({ nodes: [me], options, signal, log, report }) => {
    if (me == null) throw new Error('no node')
    const rate = numberOption(options, 'rate', 1_000)
    const openers = numberOption(options, 'streams', 8)
    const counts = { sent: 0, sendFailed: 0, streams: 0, streamsRefused: 0, peers: 0, dials: 0, dialsFailed: 0 }
    const refusals: Record<string, number> = {}
    const dialing = dialEveryone(me, signal, counts, refusals)
    const flooding = flood(me, rate, signal, counts)
    const opening = Promise.all(
      Array.from({ length: openers }, async (_, i) => {
        await openStreams(me, i, signal, counts, refusals)
      })
    )
    const started = Date.now()
    while (!signal.aborted) {
      await sleep(1_000, signal).catch(() => {})
      report({ elapsedMs: Date.now() - started, ...counts })
    }
    await Promise.all([flooding, opening, dialing])
    const seconds = (Date.now() - started) / 1000
    log(`sent ${counts.sent} invalid messages and opened ${counts.streams} streams in ${seconds.toFixed(1)} s`)
    return {
      ...counts,
      refusals,
      seconds,
      messagesPerSecond: counts.sent / seconds,
      streamsPerSecond: counts.streams / seconds
    }
  }
}

async function flood (
  me: IdlegridNode,
  rate: number,
  signal: AbortSignal,
  counts: { sent: number, sendFailed: number }
): Promise<void> {
  const pubsub = me.libp2p.services.pubsub
  let topic = 0
  let due = 0
  const started = Date.now()
  while (!signal.aborted) {
    // catch up to the rate since the start: a slow tick is made up by the next
    const target = Math.floor((Date.now() - started) * rate / 1000)
    for (; due < target && !signal.aborted; due++) {
      const name = ALL_TOPICS[topic++ % ALL_TOPICS.length] as string
      await pubsub.publish(name, randomBytes(64 + (due % 448))).then(
        () => {
          counts.sent++
        },
        () => {
          counts.sendFailed++
        }
      )
    }
    await sleep(1000 / TICKS_PER_SECOND, signal).catch(() => {})
  }
}

/** Connects to every peer the node has learnt of (the bootstrap leads to the rest), again each second. */
async function dialEveryone (
  me: IdlegridNode,
  signal: AbortSignal,
  counts: { peers: number, dials: number, dialsFailed: number },
  refusals: Record<string, number>
): Promise<void> {
  while (!signal.aborted) {
    for (const peer of await me.libp2p.peerStore.all()) {
      if (peer.id.equals(me.peerId) || peer.addresses.length === 0 || me.libp2p.getConnections(peer.id).length > 0) {
        continue
      }
      counts.dials++
      await me.libp2p
        .dial(peer.id, { signal: AbortSignal.any([signal, AbortSignal.timeout(STREAM_TIMEOUT_MS)]) })
        .catch((err: any) => {
          counts.dialsFailed++
          const why = `dial:${String(err?.name ?? 'Error')}`
          refusals[why] = (refusals[why] ?? 0) + 1
        })
    }
    counts.peers = me.libp2p.getPeers().length
    await sleep(1_000, signal).catch(() => {})
  }
}

async function openStreams (
  me: IdlegridNode,
  offset: number,
  signal: AbortSignal,
  counts: { streams: number, streamsRefused: number },
  refusals: Record<string, number>
): Promise<void> {
  const protocols = Object.values(PROTOCOL)
  for (let i = offset; !signal.aborted; i++) {
    const peers = me.libp2p.getPeers()
    const peer = peers[i % Math.max(1, peers.length)]
    if (peer == null) {
      await sleep(100, signal).catch(() => {})
      continue
    }
    const protocol = protocols[i % protocols.length] as string
    try {
      const stream = await me.libp2p.dialProtocol(peer, protocol, {
        signal: AbortSignal.any([signal, AbortSignal.timeout(STREAM_TIMEOUT_MS)])
      })
      counts.streams++
      // opened, then abandoned: the peer's handler is left to notice
      stream.abort(new Error('spam'))
    } catch (err: any) {
      counts.streamsRefused++
      const why = String(err?.name ?? err?.code ?? 'Error')
      refusals[why] = (refusals[why] ?? 0) + 1
      // a refused opener pauses a moment rather than spin on a peer that shut it out
      await sleep(10, signal).catch(() => {})
    }
  }
}
