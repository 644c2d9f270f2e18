/**
 * A request dialer for peers this node may know by id only (an award's renter, seen on gossip).
 *
 * libp2p dials such a peer by looking it up in the DHT from inside the dial, and the DHT query
 * then dials the peer it found, which joins the dial still waiting on that lookup: each waits on
 * the other until the query's per-peer bound, 5 s later (measured: a bids audit to an unconnected
 * renter took 5.07 s in every run; the same lookup made outside any dial took 61–71 ms). Looking
 * the peer up first and dialing once its addresses are in the peer store avoids that wait.
 */

import { isPeerId, type AbortOptions, type PeerId, type PeerRouting, type PeerStore } from '@libp2p/interface'
import type { RequestDialer } from './request-response.js'
import type { ConnectionManager } from '@libp2p/interface-internal'
import type { Multiaddr } from '@multiformats/multiaddr'

export interface LookupFirstComponents {
  connectionManager: ConnectionManager
  peerStore: Pick<PeerStore, 'get'>
  peerRouting: Pick<PeerRouting, 'findPeer'>
}

/** A dialer that finds a peer with no known address before dialing it (see above). */
export function lookupFirst (components: LookupFirstComponents): RequestDialer {
  const { connectionManager, peerStore, peerRouting } = components
  return {
    getConnections: (peer?: PeerId) => connectionManager.getConnections(peer),
    openConnection: async (target: PeerId | Multiaddr | Multiaddr[], options?: AbortOptions) => {
      if (isPeerId(target) && connectionManager.getConnections(target).length === 0 &&
        !(await hasAddresses(peerStore, target))) {
        // a lookup that fails leaves the dial to say why, under the same signal
        await peerRouting.findPeer(target, { signal: options?.signal }).catch(() => {})
      }
      return await connectionManager.openConnection(target, options)
    }
  }
}

async function hasAddresses (peerStore: Pick<PeerStore, 'get'>, peer: PeerId): Promise<boolean> {
  try {
    return (await peerStore.get(peer)).addresses.length > 0
  } catch {
    return false
  }
}
