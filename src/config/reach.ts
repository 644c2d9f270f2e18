/**
 * How a node is reached (issue 37): whether it serves circuit relay v2 for others and with
 * what limits, and whether it needs relays itself (behind a NAT that drops unsolicited inbound
 * connections). Config file: `reachability: auto|public|private` and a `relay:` section; flags
 * `--reachability` and `--relay-serve`.
 */
import { isPrivateIp } from '@libp2p/utils/private-ip'
import { multiaddr } from '@multiformats/multiaddr'
import { asBoolean, asEnum, asNumber, asObject, onlyKnownKeys } from './validate.js'
import type { Role } from './config.js'

export const REACHABILITY = ['auto', 'public', 'private'] as const
export type Reachability = typeof REACHABILITY[number]

export interface RelayConfig {
  /** serve circuit relay v2 for other peers (default: bootstraps do, other roles only if their operator opts in) */
  serve: boolean
  /** peers that may hold a reservation at once */
  maxReservations: number
  /** how long one relayed connection may last (s) and how many bytes it may carry, each way together */
  circuitSeconds: number
  circuitBytes: number
  /**
   * relay without a limit per connection: job and service streams may then run over this relay
   * (for peers behind symmetric NATs, where no direct path can be made); the operator pays the bandwidth
   */
  unlimited: boolean
  /** bytes this relay carries for others per hour, all circuits together (both ways); none: no cap */
  maxBytesPerHour?: number
}

export const RELAY_FIELDS = ['serve', 'maxReservations', 'circuitSeconds', 'circuitBytes', 'unlimited', 'maxBytesPerHour'] as const

/**
 * Defaults: libp2p's 2 min per circuit; 1 MiB (libp2p's is 128 KiB) fits an auction's streams and a
 * ledger sync page.
 */
export const RELAY_DEFAULTS: Omit<RelayConfig, 'serve'> = { maxReservations: 64, circuitSeconds: 120, circuitBytes: 1 << 20, unlimited: false }

/** Relays a node behind NAT reserves a slot on (the issue asks for at least two). */
export const RELAY_RESERVATIONS = 2

export function resolveRelay (value: unknown, serveFlag: unknown, role: Role): RelayConfig {
  const section = value == null ? {} : asObject(value, 'relay')
  onlyKnownKeys(section, RELAY_FIELDS, 'relay')
  const serve = asBoolean(serveFlag ?? section.serve ?? role === 'bootstrap', serveFlag != null ? 'relayServe' : 'relay.serve')
  return {
    serve,
    maxReservations: asNumber(section.maxReservations ?? RELAY_DEFAULTS.maxReservations, 'relay.maxReservations', { integer: true, min: 1, max: 10_000 }),
    circuitSeconds: asNumber(section.circuitSeconds ?? RELAY_DEFAULTS.circuitSeconds, 'relay.circuitSeconds', { integer: true, min: 1, max: 86_400 }),
    circuitBytes: asNumber(section.circuitBytes ?? RELAY_DEFAULTS.circuitBytes, 'relay.circuitBytes', { integer: true, min: 1024, max: 2 ** 40 }),
    unlimited: asBoolean(section.unlimited ?? RELAY_DEFAULTS.unlimited, 'relay.unlimited'),
    ...(section.maxBytesPerHour != null ? { maxBytesPerHour: asNumber(section.maxBytesPerHour, 'relay.maxBytesPerHour', { integer: true, min: 1 << 20, max: 2 ** 50 }) } : {})
  }
}

export function resolveReachability (value: unknown): Reachability {
  return asEnum(value ?? 'auto', 'reachability', REACHABILITY)
}

/**
 * Whether a node needs relays to be reached: `private` yes, `public` no; `auto`: yes when it
 * announces no address and listens on no public one while the network it joins is public (a
 * home or office machine joining public bootstraps). A wildcard listen address (0.0.0.0, ::)
 * says nothing by itself: the interfaces' addresses decide (`interfaceAddresses`).
 */
export function needsRelays (opts: {
  reachability: Reachability
  role: Role
  listen: string[]
  announce: string[]
  privateAddresses: boolean
  interfaceAddresses: string[]
}): boolean {
  if (opts.reachability !== 'auto') return opts.reachability === 'private'
  // a bootstrap is the public end by definition; a local network reaches everyone directly
  if (opts.role === 'bootstrap' || opts.privateAddresses) return false
  if (opts.announce.length > 0) return false
  const hosts = opts.listen.flatMap(text => {
    try {
      const { address } = multiaddr(text).nodeAddress()
      return address === '0.0.0.0' || address === '::' ? opts.interfaceAddresses : [address]
    } catch {
      return []
    }
  })
  return !hosts.some(isPublicHost)
}

/**
 * A unicast address outside the private, loopback, link-local, shared (CGNAT) and documentation
 * blocks: libp2p's own list (@libp2p/utils private-ip), which also judges the addresses a node
 * announces; multicast and reserved IPv4 (224/3) are not a host's either.
 */
export function isPublicHost (host: string): boolean {
  if (isPrivateIp(host) !== false) return false
  return host.includes(':') || Number(host.split('.')[0]) < 224
}
