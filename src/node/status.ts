import { ALL_TOPICS } from '../../protocols/ids.js'
import type { IdlegridNode } from './create-node.js'
import type { PeerPresence } from './presence/heartbeat.js'
import type { PeerGuardSnapshot } from './guard/peer-guard.js'
import { reachabilityOf, type Reachability } from './connectivity/addresses.js'
import type { DirectPathStatus } from './connectivity/direct-path.js'
import type { Multiaddr } from '@multiformats/multiaddr'

export interface NodeIdentity {
  peerId: string
  addrs: string[]
}

export interface NodeStatus extends NodeIdentity {
  role: string
  dataDir: string
  uptimeMs: number
  dhtMode: 'client' | 'server'
  /** peers in the DHT routing table */
  routingTable: string[]
  /** open connections */
  peers: Array<{ peerId: string, addrs: string[] }>
  /** peers known to be subscribed to each idlegrid topic */
  topics: Record<string, string[]>
  /** peers whose signed heartbeats this node accepted */
  heard: PeerPresence[]
  /** verdicts on the heartbeats peers sent us on the heartbeat stream, by reason */
  heartbeats: Record<string, number>
  /** gossip validation verdicts per topic */
  gossip: Record<string, Record<string, number>>
  /** gossipsub's score of each connected peer (below -80 it is graylisted: its messages go unread) */
  gossipScores: Record<string, number>
  /** the peer guard: peers denied now (and why, until when), and its counters */
  peerGuard: PeerGuardSnapshot
  /** how peers reach this node: local network, directly, only through relays, or not at all */
  reachability: Reachability
  /** direct paths to peers a relay joined (direct-path.ts): the dial port, where peers saw it, how paths ended */
  directPath: DirectPathStatus
}

export function nodeIdentity (node: IdlegridNode): NodeIdentity {
  return {
    peerId: node.peerId.toString(),
    addrs: node.libp2p.getMultiaddrs().map(a => a.toString())
  }
}

interface RoutingTableInternals {
  routingTable?: { kb?: { toIterable(): Iterable<{ peerId: { toString(): string } }> } }
}

export function nodeStatus (node: IdlegridNode): NodeStatus {
  const { libp2p } = node
  const dht = libp2p.services.dht as unknown as RoutingTableInternals
  const routingTable = [...(dht.routingTable?.kb?.toIterable() ?? [])].map(p => p.peerId.toString())
  const peers = new Map<string, string[]>()
  for (const conn of libp2p.getConnections()) {
    const id = conn.remotePeer.toString()
    peers.set(id, [...(peers.get(id) ?? []), conn.remoteAddr.toString()])
  }
  return {
    ...nodeIdentity(node),
    role: node.config.role,
    dataDir: node.config.dataDir,
    uptimeMs: Date.now() - node.startedAt,
    dhtMode: libp2p.services.dht.getMode(),
    routingTable: routingTable.sort(),
    peers: [...peers].map(([peerId, addrs]) => ({ peerId, addrs })),
    topics: Object.fromEntries(
      ALL_TOPICS.map(t => [
        t,
        libp2p.services.pubsub
          .getSubscribers(t)
          .map(p => p.toString())
          .sort()
      ])
    ),
    heard: libp2p.services.heartbeats.presence(),
    heartbeats: libp2p.services.heartbeats.stats(),
    gossip: libp2p.services.gossip.stats(),
    gossipScores: Object.fromEntries([...peers.keys()].map(id => [id, gossipScore(libp2p.services.pubsub, id)])),
    peerGuard: libp2p.services.peerGuard.snapshot(),
    reachability: reachabilityOf(libp2p.getMultiaddrs(), node.config.privateAddresses, addressesOfType(libp2p, 'ip-mapping'), addressesOfType(libp2p, 'transport')),
    directPath: libp2p.services.directPath.status()
  }
}

interface ScoredPubSub { getScore?: (peerId: string) => number }

/** gossipsub's score of `peerId` (0 where the router keeps none) */
function gossipScore (pubsub: unknown, peerId: string): number {
  return (pubsub as ScoredPubSub).getScore?.(peerId) ?? 0
}

/**
 * The address manager's addresses of one kind: 'ip-mapping' those the router maps to this node
 * (UPnP), 'transport' its listen addresses (a public one is listed only once a peer dialed it back).
 */
function addressesOfType (libp2p: IdlegridNode['libp2p'], type: 'ip-mapping' | 'transport'): Multiaddr[] {
  const manager = (
    libp2p as unknown as {
      components?: {
        addressManager?: {
          getAddressesWithMetadata?: () => Array<{ multiaddr: Multiaddr, type: string, verified: boolean }>
        }
      }
    }
  ).components?.addressManager
  return (manager?.getAddressesWithMetadata?.() ?? []).filter(a => a.type === type && a.verified).map(a => a.multiaddr)
}
