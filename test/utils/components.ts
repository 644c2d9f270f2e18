/**
 * A node's libp2p internals that specs reach for: libp2p keeps its components on the node
 * object without a public accessor, and a spec that speaks a protocol by hand (a raw bid, a
 * record fetch, a relayed dial) needs the connection manager to open its streams.
 */
import type { IdlegridNode } from '../../src/node/index.js'
import type { ConnectionManager } from '@libp2p/interface-internal'

export function connectionManagerOf (node: IdlegridNode): ConnectionManager {
  const { components } = node.libp2p as unknown as { components: { connectionManager: ConnectionManager } }
  return components.connectionManager
}
