import { createNode, type IdlegridNode, type NodeExtensions } from '../node/index.js'
import type { NodeConfig } from '../config/index.js'

/**
 * The composition root: which services each role runs on top of the core node. Each idea
 * (capability, market, exec, ledger) contributes its services and DHT rules here.
 */
export function roleExtensions (_config: NodeConfig): NodeExtensions {
  const extensions: Required<NodeExtensions> = { services: {}, dhtValidators: {}, dhtSelectors: {} }
  return extensions
}

export async function buildNode (config: NodeConfig): Promise<IdlegridNode> {
  return await createNode(config, roleExtensions(config))
}
