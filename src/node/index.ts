/**
 * The core node: libp2p assembled for idlegrid (transports, DHT, gossipsub with one validator
 * per topic, heartbeats, the peer connector), its status, and the one request-response helper.
 * Inside: connectivity/ (reaching peers: connector, relays, AutoNAT, UPnP, the direct path,
 * routing repair), guard/ (refusing peers: the peer guard, rate limits, replay), streams/
 * (yamux tuning, request-response) and presence/ (heartbeats).
 */
export { createNode } from './create-node.js'
export type { IdlegridNode, CoreServices, NodeExtensions, NodeComposition, ServiceFactory } from './create-node.js'
export { nodeStatus, nodeIdentity } from './status.js'
export type { NodeStatus, NodeIdentity } from './status.js'
export { ACCEPT, ignore, reject, GOSSIP_SERVICE, GOSSIP_CAPABILITY } from './gossip.js'
export type { GossipRouter, GossipVerdict } from './gossip.js'
export type { FeedHint, HeardHeartbeat, HeartbeatService, PeerPresence } from './presence/heartbeat.js'
export { MAX_RELAYED_HEADS } from './presence/heartbeat.js'
export { requestOnce, serveOnce } from './streams/request-response.js'
export type { RequestDialer } from './streams/request-response.js'
export { lookupFirst } from './streams/lookup-first.js'
export { isRequestFailure, requestFailed } from './errors.js'
export { messageAddresses, recordAddresses, untilReachable } from './connectivity/addresses.js'
export { dialViaRelays, interfaceAddresses, reservesRelays } from './connectivity/relay.js'
export { longStreamDialer } from './connectivity/direct-path.js'
export type { DirectPathStatus } from './connectivity/direct-path.js'
export { PEER_GUARD_DEFAULTS } from './guard/peer-guard.js'
export type { PeerGuardSnapshot } from './guard/peer-guard.js'
export { GOSSIP_RATE_LIMITS } from './guard/gossip-limits.js'
export type { TopicClass } from './guard/gossip-limits.js'
export { TokenBuckets } from './guard/token-bucket.js'
export type { RateLimit } from './guard/token-bucket.js'
