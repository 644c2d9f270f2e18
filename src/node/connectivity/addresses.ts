/**
 * The addresses a node puts in its signed messages (a job request's renter_addrs, a bid's
 * addrs), so that the other side can dial it without a lookup. Behind NAT a node's own
 * interface addresses (192.168.x, 127.0.0.1) reach nobody outside, and naming them leaks the
 * home network's layout: once a node has a public or relayed address, only those go out.
 * On a loopback or LAN network every address is private, and they all go out as before.
 */
import { isPrivate } from '@libp2p/utils/multiaddr/is-private'
import { sleep } from '../../common/index.js'
import type { Multiaddr } from '@multiformats/multiaddr'

const P2P_CODE = 421
const CIRCUIT_CODE = 290
/** A message carries at most this many addresses of at most this many bytes (binary multiaddr). */
export const MAX_MESSAGE_ADDRS = 4
export const MAX_MESSAGE_ADDR_BYTES = 64

/** Whether `addr` goes through a relay (has /p2p-circuit). */
export function isRelayed (addr: Multiaddr): boolean {
  return addr.getComponents().some(c => c.code === CIRCUIT_CODE)
}

/**
 * `addrs` (the address manager's) as binary multiaddrs without our /p2p suffix: direct public
 * first, then relayed, private only when there is nothing else.
 */
export function messageAddresses (
  addrs: Multiaddr[],
  bounds: { max: number, maxBytes: number } = { max: MAX_MESSAGE_ADDRS, maxBytes: MAX_MESSAGE_ADDR_BYTES }
): Uint8Array[] {
  const own = addrs.map(withoutOwnId)
  const relayed = own.filter(isRelayed)
  const direct = own.filter(a => !isRelayed(a))
  const publicDirect = direct.filter(a => !isPrivateSafe(a))
  const reachable = [...publicDirect, ...relayed]
  return (reachable.length > 0 ? reachable : direct)
    .map(a => a.bytes)
    .filter(b => b.length <= bounds.maxBytes)
    .slice(0, bounds.max)
}

const TCP_ADDRESS = /^\/ip[46]\/[^/]+\/tcp\/\d+$/

/**
 * The addresses a provider's capability record names (at most 16 of at most 128 bytes): its TCP
 * ones chosen as for messages, so a provider behind NAT names its relayed addresses and never
 * its home network's (the record is spread by the DHT to anyone who asks).
 */
export function recordAddresses (addrs: Multiaddr[]): Uint8Array[] {
  const tcp = addrs.filter(a => isRelayed(a) || TCP_ADDRESS.test(withoutOwnId(a).toString()))
  return messageAddresses(tcp, { max: 16, maxBytes: 128 })
}

/** Drops the trailing /p2p/<our id> (a relayed address keeps its relay's /p2p). */
function withoutOwnId (addr: Multiaddr): Multiaddr {
  const last = addr.getComponents().at(-1)
  return last?.code === P2P_CODE ? addr.decapsulateCode(P2P_CODE) : addr
}

function isPrivateSafe (addr: Multiaddr): boolean {
  try {
    return isPrivate(addr)
  } catch {
    return true
  }
}

export type ReachabilityKind = 'local' | 'direct' | 'relayed' | 'unreachable'

export interface Reachability {
  how: ReachabilityKind
  /**
   * direct: through a port mapping the router made at this node's request (UPnP), or at a
   * listen address a peer dialed back (AutoNAT); neither when the operator announced it
   */
  via?: 'upnp' | 'autonat'
  /** the public or relayed addresses peers outside can use */
  addrs: string[]
  /** what the operator can do about it, when anything */
  advice?: string
}

/**
 * How peers reach this node, from its own addresses: on a local network (loopback/LAN, every
 * peer dials every other), directly at a public address (`routerMapped`: those the router
 * forwards by UPnP; `dialedBack`: listen addresses a peer confirmed), only through relays, or not at all.
 */
export function reachabilityOf (
  addrs: Multiaddr[],
  localNetwork: boolean,
  routerMapped: Multiaddr[] = [],
  dialedBack: Multiaddr[] = []
): Reachability {
  const relayed = addrs.filter(isRelayed)
  const publicDirect = addrs.filter(a => !isRelayed(a) && !isPrivateSafe(a))
  const among = (list: Multiaddr[]): boolean => {
    const keys = new Set(list.map(a => withoutOwnId(a).toString()))
    return publicDirect.some(a => keys.has(withoutOwnId(a).toString()))
  }
  if (publicDirect.length > 0) {
    const via = among(routerMapped) ? 'upnp' as const : among(dialedBack) ? 'autonat' as const : undefined
    return { how: 'direct', addrs: publicDirect.map(String), ...(via != null ? { via } : {}) }
  }
  if (relayed.length > 0) {
    return { how: 'relayed', addrs: relayed.map(String), advice: 'peers reach this node only through relays: auctions work, jobs only through a relay that carries them; to be reached directly, forward a TCP port on the router to this machine and give the public address with --announce' }
  }
  if (localNetwork) return { how: 'local', addrs: addrs.map(String) }
  return { how: 'unreachable', addrs: [], advice: 'no public address and no relay slot: peers cannot open a connection to this node (it can still dial them); check that a bootstrap peer is reachable (idlegrid doctor) and serves relays (bootstraps do by default), or give a public address with --announce' }
}

/** How long a renter behind NAT waits for a relay slot before publishing a job anyway. */
export const REACHABLE_WAIT_MS = 10_000
const REACHABLE_POLL_MS = 100

/**
 * Resolves once `addresses()` holds one that peers outside can dial (public or relayed), or after
 * `timeoutMs`, or when `signal` aborts; says which. A node behind NAT that just started holds no
 * relay slot yet, and what it signs then names no address a NAT'd peer could reach it by.
 */
export async function untilReachable (
  addresses: () => Multiaddr[],
  signal: AbortSignal,
  timeoutMs = REACHABLE_WAIT_MS
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (reachabilityOf(addresses(), false).how !== 'unreachable') return true
    if (signal.aborted || Date.now() >= deadline) return false
    await sleep(Math.min(REACHABLE_POLL_MS, deadline - Date.now()), signal)
  }
}
