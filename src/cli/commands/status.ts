import { asNumber } from '../../config/index.js'
import { EXIT } from '../errors.js'
import { oneShot } from '../one-shot.js'
import { COMMON_OPTIONS, NODE_OPTIONS } from '../options.js'
import { formatDuration, type Output } from '../output.js'
import { shortPeerId } from '../../common/index.js'
import type { NodeStatus } from '../../node/index.js'
import type { CommandDefinition } from '../command.js'

export const statusCommand: CommandDefinition = {
  name: 'status',
  usage: 'idlegrid status [options] [--wait S]',
  options: { ...NODE_OPTIONS, wait: { type: 'string', valueName: 'S', description: 'a short-lived peer waits up to S seconds to reach its bootstrap peers (default 3)' }, ...COMMON_OPTIONS },
  run: async (values, _, out) => {
    const wait = asNumber(values.wait ?? 3, 'wait', { min: 0, max: 120 })
    const { via, result } = await oneShot('status', {}, values, { settleMs: wait * 1000 })
    const status = result as NodeStatus
    out.data({ ...status, via })
    printStatus(status, via, out)
    return EXIT.ok
  }
}

const REACHABILITY_TEXT: Record<NodeStatus['reachability']['how'], string> = {
  local: 'on the local network (loopback or LAN peers dial it directly)',
  direct: 'directly, at a public address',
  relayed: 'only through relays',
  unreachable: 'not at all from outside (no public address, no relay slot)'
}

function printStatus (s: NodeStatus, via: string, out: Output): void {
  out.info(`${s.role} ${s.peerId}${via === 'short-lived' ? ' (short-lived peer: no node runs on this data directory)' : ''}`)
  out.info(`  uptime ${formatDuration(s.uptimeMs)}, DHT ${s.dhtMode} mode, data dir ${s.dataDir}`)
  for (const addr of s.addrs) out.info(`  listening ${addr}`)
  out.info(`  reachable: ${REACHABILITY_TEXT[s.reachability.how]}${s.reachability.via === 'upnp' ? ', through a port mapping the router made (UPnP)' : ''}`)
  if (s.reachability.advice != null) out.info(`    ${s.reachability.advice}`)
  const path = s.directPath
  if (path.dialPort != null) out.info(`  dials from port ${path.dialPort}, seen at ${path.seenAt.length > 0 ? path.seenAt.join(', ') : 'no address yet'} (NAT mapping: ${path.mapping})`)
  if (path.asked.direct + path.asked.failed + path.served.direct + path.served.failed + path.served.refused > 0) {
    out.info(`  direct paths to relayed peers: asked ${path.asked.direct} made, ${path.asked.failed} failed; for peers ${path.served.direct} made, ${path.served.failed} failed, ${path.served.refused} refused`)
  }
  out.info(`  ${s.peers.length} connected peers, ${s.routingTable.length} in the DHT routing table`)
  for (const p of s.peers) {
    const heard = s.heard.find(h => h.peerId === p.peerId)
    out.info(`    ${shortPeerId(p.peerId)} ${(heard?.role ?? '?').padEnd(9)} ${p.addrs[0]}`)
  }
  out.info('  topics:')
  for (const [topic, peers] of Object.entries(s.topics)) out.info(`    ${topic.padEnd(22)} ${peers.length} peers`)
}
