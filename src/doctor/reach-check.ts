/**
 * How peers reach this node (issue 37 item 2): from the node running on the data directory when
 * there is one (its addresses, relay slots and what its dial port was seen as), else from the
 * config (what the node will do when it starts), with the fix when it is reachable only
 * through relays or not at all.
 */
import { callControl } from '../control/index.js'
import { needsRelays, type NodeConfig } from '../config/index.js'
import { interfaceAddresses } from '../node/index.js'
import { fail, ok, warn, type CheckResult } from './check.js'
import type { NodeStatus } from '../node/index.js'

const ID = 'reachability'
const FORWARD_FIX = 'to be dialed directly: forward a TCP port on the router to this machine and give the public address with --announce /ip4/<public ip>/tcp/<port> (not needed for jobs: a relay joins peers, and a hole punch connects them directly through most home routers)'

const VIA: Record<NonNullable<NodeStatus['reachability']['via']> | 'announce', string> = {
  upnp: ', through a port mapping the router made (UPnP)',
  autonat: ', confirmed by a peer that dialed it back (AutoNAT)',
  announce: ''
}

/** Judges the running node's status, or (`running` false) the config. */
export async function checkReachability (config: NodeConfig, running: boolean): Promise<CheckResult> {
  if (running) {
    try {
      return judgeStatus(await callControl(config.dataDir, 'status', {}, { timeoutMs: 10_000 }) as NodeStatus)
    } catch {
      // an old node or a busy one: say what its config means instead
    }
  }
  return judgeConfig(config)
}

export function judgeStatus (s: Pick<NodeStatus, 'reachability' | 'directPath'>): CheckResult {
  const r = s.reachability
  const seen = s.directPath.dialPort != null
    ? `; outbound connections leave from port ${s.directPath.dialPort}, ${s.directPath.seenAt.length > 0 ? `seen at ${s.directPath.seenAt[0]} (NAT mapping: ${s.directPath.mapping}${s.directPath.mapping === 'endpoint-dependent' ? ': no hole punch through this NAT, jobs need a relay that carries them' : ''})` : 'not yet seen by a public peer'}`
    : ''
  switch (r.how) {
    case 'direct': return ok(ID, `reachable directly at ${r.addrs.join(', ')}${VIA[r.via ?? 'announce']}`)
    case 'local': return ok(ID, 'on the local network: peers dial it directly')
    case 'relayed': return warn(ID, `reachable only through relays (${r.addrs.length} relayed address${r.addrs.length === 1 ? '' : 'es'})${seen}`, FORWARD_FIX)
    case 'unreachable': return fail(ID, `not reachable from outside: no public address and no relay slot${seen}`, r.advice ?? FORWARD_FIX)
  }
}

export function judgeConfig (config: NodeConfig, interfaces: string[] = interfaceAddresses()): CheckResult {
  if (config.privateAddresses) return ok(ID, 'on the local network (private addresses are in use): peers dial it directly')
  if (config.announce.length > 0) return ok(ID, `announces ${config.announce.join(', ')}: peers dial it there (make sure the port is open to them)`)
  if (needsRelays({ ...config, interfaceAddresses: interfaces })) {
    return warn(ID, 'no public listen or announce address: when it starts, this node reserves slots on relays and is reachable only through them (and directly after a hole punch, where its NAT allows)', FORWARD_FIX)
  }
  return ok(ID, 'listens at a public address: peers dial it directly')
}
