import { CONTROL_HANDLERS, isControlProvider, startControlServer, type ControlHandler, type ControlServer } from '../control/index.js'
import { nodeIdentity, nodeStatus, type IdlegridNode } from '../node/index.js'

/** The control methods of a node: the core ones, plus those of every service that offers some. */
export function nodeHandlers (node: IdlegridNode): Record<string, ControlHandler> {
  const handlers: Record<string, ControlHandler> = {
    ping: async () => ({ pong: true, pid: process.pid }),
    id: async () => nodeIdentity(node),
    status: async () => nodeStatus(node)
  }
  for (const service of Object.values(node.libp2p.services)) {
    if (isControlProvider(service)) Object.assign(handlers, service[CONTROL_HANDLERS]())
  }
  return handlers
}

export async function serveControl (node: IdlegridNode): Promise<ControlServer> {
  return await startControlServer(node.config.dataDir, nodeHandlers(node))
}
