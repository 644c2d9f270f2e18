import { startControlServer, type ControlHandler, type ControlServer } from '../control/index.js'
import { nodeIdentity, nodeStatus, type IdlegridNode } from '../node/index.js'

/** The control methods every running node serves; roles add their own. */
export function coreHandlers (node: IdlegridNode): Record<string, ControlHandler> {
  return {
    ping: async () => ({ pong: true, pid: process.pid }),
    id: async () => nodeIdentity(node),
    status: async () => nodeStatus(node)
  }
}

export async function serveControl (node: IdlegridNode, extra: Record<string, ControlHandler> = {}): Promise<ControlServer> {
  return await startControlServer(node.config.dataDir, { ...coreHandlers(node), ...extra })
}
