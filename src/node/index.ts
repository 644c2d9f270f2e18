/**
 * The core node: libp2p assembled for idlegrid (transports, DHT, gossipsub with one validator
 * per topic, heartbeats, the peer connector), its status, and the one request-response helper.
 */
export { createNode } from './create-node.js'
export type { IdlegridNode, CoreServices, NodeExtensions, NodeComposition, ServiceFactory } from './create-node.js'
export { nodeStatus, nodeIdentity } from './status.js'
export type { NodeStatus, NodeIdentity } from './status.js'
export { ACCEPT, ignore, reject, GOSSIP_SERVICE, GOSSIP_CAPABILITY } from './gossip.js'
export type { GossipRouter, GossipVerdict } from './gossip.js'
export type { HeartbeatService, HeartbeatSlots, PeerPresence } from './heartbeat.js'
export { requestOnce, serveOnce, RequestResponseError } from './request-response.js'
export { messageAddresses, reachabilityOf, recordAddresses, untilReachable } from './addresses.js'
export { dialViaRelays, interfaceAddresses, reservesRelays } from './relay.js'
export { longStreamDialer, DirectPathError } from './direct-path.js'
export type { DirectPathService, DirectPathStatus } from './direct-path.js'
export type { Reachability, ReachabilityKind } from './addresses.js'
export { PeerGuard, PEER_GUARD_DEFAULTS } from './peer-guard.js'
export type { PeerGuardInit, PeerGuardCounters, PeerGuardSnapshot } from './peer-guard.js'
export type { PeerGuardHandle } from './peer-guard-service.js'
export type { Denial } from './deny-list.js'
export { GOSSIP_RATE_LIMITS, topicClass } from './gossip-limits.js'
export type { TopicClass } from './gossip-limits.js'
export type { RateLimit } from './token-bucket.js'
