/**
 * The price pump's yardstick: publishes one job request like a renter's (never awarded) on its
 * shard and reports the bid every provider not of the attacker sent it, USD/h by peer id. The
 * probing node takes the bid stream over for the probe (bids come straight to the renter).
 */
import { jobShardOf, PROTOCOL } from '../../../protocols/ids.js'
import { sleep } from '../../../src/common/index.js'
import { answerBid, MAX_BID_REQUEST_BYTES } from '../../../src/market/shared/bid-stream.js'
import { microToUsd } from '../../../src/market/shared/messages.js'
import { serveOnce, type IdlegridNode } from '../../../src/node/index.js'
import { defaultLogger } from '@libp2p/logger'
import { componentsOf } from '../../utils/components.js'
import { jobFor } from './forge.js'
import type { Attack } from './attack.js'

const PROBE_WINDOW_MS = 1_000

/** Publishes a probe job from `renter`; resolves with the bids others made on it (USD/h by peer id). */
export async function probeBids (renter: IdlegridNode, ours: IdlegridNode[]): Promise<Record<string, number>> {
  return Object.fromEntries(
    Object.entries(await probeBidsMicro(renter, ours)).map(([peer, micro]) => [peer, microToUsd(micro)])
  )
}

/** probeBids in µUSD/h, as the bids carried them. */
export async function probeBidsMicro (renter: IdlegridNode, ours: IdlegridNode[]): Promise<Record<string, bigint>> {
  const job = jobFor(renter, 'probe', PROBE_WINDOW_MS)
  const bids: Record<string, bigint> = {}
  const { registrar } = componentsOf(renter)
  await renter.libp2p.unhandle(PROTOCOL.bid)
  await serveOnce(registrar, PROTOCOL.bid, async (request, remote) => answerBid(request, remote, (bid) => {
    if (Buffer.compare(bid.message.jobId, job.message.jobId) !== 0 || ours.some(n => n.peerId.equals(bid.signer))) return 'unknown-auction'
    bids[bid.signer.toString()] = bid.message.priceMicroUsd
    return 'kept'
  }), { maxRequestBytes: MAX_BID_REQUEST_BYTES, timeoutMs: 5_000, log: defaultLogger().forComponent('redteam:probe') })
  try {
    await renter.libp2p.services.pubsub.publish(jobShardOf(job.message.constraints), job.envelope)
    // the window, and half a second more for the last bids to arrive
    await sleep(PROBE_WINDOW_MS + 500)
    return bids
  } finally {
    await renter.libp2p.unhandle(PROTOCOL.bid)
  }
}

export const priceProbe: Attack = {
  summary: 'publish a probe job and report the bids made on it',
  play: async ({ nodes }) => ({ bids: await probeBids(nodes[0] as IdlegridNode, nodes) })
}
