/**
 * A node's libp2p internals that specs reach for: libp2p keeps its components on the node
 * object without a public accessor, and a spec that speaks a protocol by hand (a raw bid, a
 * record fetch, a relayed dial, a handler of its own) needs them to open or answer streams.
 */
import type { IdlegridNode } from '../../src/node/index.js'
import type { PeerRouting, PeerStore } from '@libp2p/interface'
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal'

/** The components specs use; libp2p's object holds more. */
export interface NodeComponents {
  connectionManager: ConnectionManager
  registrar: Registrar
  peerStore: PeerStore
  peerRouting: PeerRouting
}

export function componentsOf (node: IdlegridNode): NodeComponents {
  return (node.libp2p as unknown as { components: NodeComponents }).components
}

export function connectionManagerOf (node: IdlegridNode): ConnectionManager {
  return componentsOf(node).connectionManager
}
