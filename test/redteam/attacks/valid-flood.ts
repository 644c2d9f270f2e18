/**
 * Valid-message flood (issue 19 item 5): from one key, validly signed job requests at `--rate`
 * a second (default 1,000) for as long as it plays, each a new job on the shard its constraints
 * name. In market version 2 job requests are the market's gossip (bids go to the renter on a
 * stream, awards to the winner): every message passes every check but the per-author rate
 * limit; the honest nodes must keep their auctions going and drop the flooder. Prints a
 * progress line each second ({sent, peers}).
 */
import { jobShardOf } from '../../../protocols/ids.js'
import { sleep } from '../../../src/common/index.js'
import type { IdlegridNode } from '../../../src/node/index.js'
import { numberOption, type Attack } from './attack.js'
import { jobFor } from './forge.js'

const TICKS_PER_SECOND = 50

export const validFlood: Attack = {
  summary: 'validly signed job requests from one key at --rate a second, each a new job on its shard',
  play: async ({ nodes: [me], options, signal, report }) => {
    if (me == null) throw new Error('no node')
    const rate = numberOption(options, 'rate', 1_000)
    const counts = { sent: 0, sendFailed: 0, peers: 0 }
    const started = Date.now()
    const flooding = flood(me, rate, signal, counts)
    while (!signal.aborted) {
      await sleep(1_000, signal).catch(() => {})
      counts.peers = me.libp2p.getPeers().length
      report({ elapsedMs: Date.now() - started, ...counts })
    }
    await flooding
    const seconds = (Date.now() - started) / 1000
    return { ...counts, seconds, messagesPerSecond: counts.sent / seconds }
  }
}

/**
 * Sends up to the rate each tick and always yields between ticks: a loop that only catches up
 * (each request is signed here, which is slow) would starve its own node of I/O until its
 * connections died, and the flood would end by itself rather than by the honest nodes.
 */
async function flood (
  me: IdlegridNode,
  rate: number,
  signal: AbortSignal,
  counts: { sent: number, sendFailed: number }
): Promise<void> {
  const perTick = Math.max(1, Math.ceil(rate / TICKS_PER_SECOND))
  let due = 0
  const started = Date.now()
  while (!signal.aborted) {
    const target = Math.min(Math.floor((Date.now() - started) * rate / 1000), due + 2 * perTick)
    for (; due < target && !signal.aborted; due++) {
      const job = jobFor(me, `flood-${due}`, 60_000)
      await me.libp2p.services.pubsub.publish(jobShardOf(job.message.constraints), job.envelope).then(
        () => {
          counts.sent++
        },
        () => {
          counts.sendFailed++
        }
      )
    }
    // a tick late means the signing is the bound: the next one starts from now, not from the start
    due = Math.max(due, Math.floor((Date.now() - started) * rate / 1000) - 2 * perTick)
    await sleep(1000 / TICKS_PER_SECOND, signal).catch(() => {})
  }
}
