/**
 * A port mapping on the home router (issue 37 item 2): a node behind NAT asks the Internet
 * Gateway Device on its LAN (UPnP IGD, found by SSDP on the LAN only) to forward its TCP listen
 * port, and announces the mapped public address; peers then dial it directly, as if the
 * operator had forwarded the port by hand. Routers without UPnP leave the node as it was:
 * reachable through relays, and directly after a hole punch (direct-path.ts).
 *
 * The mapped address is announced without a dial-back check (libp2p's autonat is not used:
 * `autoConfirmAddress`): a router that maps but does not forward costs a peer one failed dial
 * before the relay. A gateway whose own external address is private (a NAT behind a NAT) is
 * not used at all (@libp2p/upnp-nat's double-NAT check).
 */
import { reservesRelays } from './relay.js'
import type { NodeConfig } from '../../config/index.js'
import type { uPnPNAT } from '@libp2p/upnp-nat'

/** A mapping lasts this long on the router and is renewed before it ends (the library's default is 2 h). */
const MAPPING_TTL_MS = 30 * 60_000

/** The UPnP service of a node behind NAT whose operator left `upnp` on, or none. */
export async function routerPortMapping (
  config: NodeConfig,
  interfaces?: string[]
): Promise<ReturnType<typeof uPnPNAT> | undefined> {
  if (!config.upnp || !reservesRelays(config, interfaces)) return undefined
  // loaded only here: the UPnP client and its SSDP and XML stack are ~85 modules, a tenth of what
  // a node's process loads before it starts, and most nodes have no router to ask
  const { uPnPNAT } = await import('@libp2p/upnp-nat')
  return uPnPNAT({
    autoConfirmAddress: true,
    portMappingDescription: 'idlegrid',
    portMappingTTL: MAPPING_TTL_MS,
    portMappingAutoRefresh: true
  })
}
