/**
 * The price pump's yardstick: publishes one job request like a renter's (never awarded) and
 * reports the bid every provider not of the attacker made on it, USD/h by peer id.
 */
import { TOPIC } from '../../../protocols/ids.js'
import { sleep } from '../../../src/common/index.js'
import { microToUsd, readBid } from '../../../src/market/messages.js'
import { GOSSIP_SERVICE, type IdlegridNode } from '../../../src/node/index.js'
import { jobFor } from './forge.js'
import type { Attack } from './attack.js'

const PROBE_WINDOW_MS = 1_000

/** Publishes a probe job from `renter`; resolves with the bids others made on it (USD/h by peer id). */
export async function probeBids (renter: IdlegridNode, ours: IdlegridNode[]): Promise<Record<string, number>> {
  const job = jobFor(renter, 'probe', PROBE_WINDOW_MS)
  const bids: Record<string, number> = {}
  const off = renter.libp2p.services[GOSSIP_SERVICE].onMessage(TOPIC.bids, (envelope) => {
    const bid = readBid(envelope)
    if (Buffer.compare(bid.message.jobId, job.message.jobId) !== 0 || ours.some(n => n.peerId.equals(bid.signer))) return
    bids[bid.signer.toString()] = microToUsd(bid.message.priceMicroUsd)
  })
  try {
    await renter.libp2p.services.pubsub.publish(TOPIC.jobs, job.envelope)
    // the window, and half a second more for the last bids to arrive
    await sleep(PROBE_WINDOW_MS + 500)
    return bids
  } finally {
    off()
  }
}

export const priceProbe: Attack = {
  summary: 'publish a probe job and report the bids made on it',
  play: async ({ nodes }) => ({ bids: await probeBids(nodes[0] as IdlegridNode, nodes) })
}
