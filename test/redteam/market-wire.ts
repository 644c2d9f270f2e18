/**
 * How the attacker's nodes meet the version 2 market (protocols/README.md §2 "Job shards", §7
 * "Auction"): job requests are heard on the shards (an attacker joins them all), bids go to the
 * renter on the bid stream, and awards are never gossiped.
 */
import { multiaddr } from '@multiformats/multiaddr'
import { MAX_BYTES } from '../../protocols/codec.js'
import { JOB_SHARD_TOPICS, PROTOCOL } from '../../protocols/ids.js'
import { BidAck } from '../../protocols/market.js'
import { GOSSIP_SERVICE, requestOnce, type IdlegridNode } from '../../src/node/index.js'
import { connectionManagerOf } from '../utils/components.js'
import type { OpenedEnvelope } from '../../src/identity/index.js'
import type { JobRequest } from '../../src/market/shared/messages.js'
import type { PeerId } from '@libp2p/interface'

/** Joins every job shard and calls `handler` with each job request heard; returns the unsubscribe. */
export function onEveryJob (node: IdlegridNode, handler: (envelope: OpenedEnvelope) => void): () => void {
  const offs = JOB_SHARD_TOPICS.map(topic => node.libp2p.services[GOSSIP_SERVICE].onMessage(topic, handler))
  for (const topic of JOB_SHARD_TOPICS) node.libp2p.services.pubsub.subscribe(topic)
  return () => { for (const off of offs) off() }
}

/** Sends bid envelope bytes to `renter` on the bid stream, dialling the job's renter addresses. */
export async function sendBidTo (
  node: IdlegridNode,
  renter: PeerId,
  job: JobRequest,
  envelope: Uint8Array,
  signal: AbortSignal = AbortSignal.timeout(10_000)
): Promise<BidAck> {
  const multiaddrs = job.renterAddrs.map(a => multiaddr(a))
  if (multiaddrs.length > 0) await node.libp2p.peerStore.merge(renter, { multiaddrs })
  const cm = connectionManagerOf(node)
  return BidAck.decode(
    await requestOnce(cm, renter, {
      protocol: PROTOCOL.bid,
      request: envelope,
      maxResponseBytes: MAX_BYTES.bidAck,
      signal,
      lazy: true
    })
  )
}
