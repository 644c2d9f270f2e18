/**
 * Valid-message flood (issue 19 item 5): from one key, validly signed bids at `--rate` a second
 * (default 1,000) for as long as it plays: on the latest job request another renter published
 * (each a little cheaper than the last, all dearer than an honest provider), and until one is
 * seen on a job request of its own. Every message passes every check but the rate limit;
 * the honest nodes must keep their auctions going and drop the flooder. Prints a progress line
 * each second ({sent, peers}).
 */
import { TOPIC } from '../../../protocols/ids.js'
import { sleep } from '../../../src/common/index.js'
import { readJobRequest, signBid, usdToMicro, type JobRequest } from '../../../src/market/messages.js'
import { GOSSIP_SERVICE, type IdlegridNode } from '../../../src/node/index.js'
import { numberOption, type Attack } from './attack.js'
import { bidFor, jobFor } from './forge.js'

const TICKS_PER_SECOND = 50

export const validFlood: Attack = {
  summary: 'validly signed bids from one key at --rate a second, on the latest job request of someone else',
  play: async ({ nodes: [me], options, signal, report }) => {
    if (me == null) throw new Error('no node')
    const rate = numberOption(options, 'rate', 1_000)
    let job: JobRequest = jobFor(me, 'own', 60_000).message
    let jobsSeen = 0
    const off = me.libp2p.services[GOSSIP_SERVICE].onMessage(TOPIC.jobs, (envelope) => {
      const seen = readJobRequest(envelope)
      if (seen.signer.equals(me.peerId)) return
      job = seen.message
      jobsSeen++
    })
    const counts = { sent: 0, sendFailed: 0, peers: 0 }
    const started = Date.now()
    const flooding = flood(me, rate, signal, counts, () => job)
    while (!signal.aborted) {
      await sleep(1_000, signal).catch(() => {})
      counts.peers = me.libp2p.getPeers().length
      report({ elapsedMs: Date.now() - started, jobsSeen, ...counts })
    }
    await flooding
    off()
    const seconds = (Date.now() - started) / 1000
    return { ...counts, jobsSeen, seconds, messagesPerSecond: counts.sent / seconds }
  }
}

/**
 * Sends up to the rate each tick and always yields between ticks: a loop that only catches up
 * (each bid is signed here, which is slow) would starve its own node of I/O until its
 * connections died, and the flood would end by itself rather than by the honest nodes.
 */
async function flood (me: IdlegridNode, rate: number, signal: AbortSignal, counts: { sent: number, sendFailed: number }, job: () => JobRequest): Promise<void> {
  const perTick = Math.max(1, Math.ceil(rate / TICKS_PER_SECOND))
  let due = 0
  const started = Date.now()
  while (!signal.aborted) {
    const target = Math.min(Math.floor((Date.now() - started) * rate / 1000), due + 2 * perTick)
    for (; due < target && !signal.aborted; due++) {
      const bid = signBid(me.privateKey, me.peerId, bidFor(job(), me.peerId, usdToMicro(100) - BigInt(due)))
      await me.libp2p.services.pubsub.publish(TOPIC.bids, bid.envelope).then(() => { counts.sent++ }, () => { counts.sendFailed++ })
    }
    // a tick late means the signing is the bound: the next one starts from now, not from the start
    due = Math.max(due, Math.floor((Date.now() - started) * rate / 1000) - 2 * perTick)
    await sleep(1000 / TICKS_PER_SECOND, signal).catch(() => {})
  }
}
