/**
 * Reaching peers behind NAT through circuit relay v2 (issue 37): every node can dial a relayed
 * address (/…/p2p/<relay>/p2p-circuit/p2p/<peer>); a node that serves as a relay (bootstraps by
 * default, others when their operator opts in) does so within its operator's limits; a node
 * that cannot be dialed directly reserves slots on relays, whose relayed addresses it then
 * announces (identify, job requests, bids). Relayed connections are end-to-end encrypted (TLS
 * or noise run over the circuit between the two peers), so a relay sees only ciphertext.
 *
 * By default a circuit is "limited" (its time and bytes bounded by the relay): the market's
 * small streams run on it (request-response.ts, heartbeat-stream.ts), job and service streams
 * do not. A relay whose operator sets `relay.unlimited` carries every stream.
 */
import { networkInterfaces } from 'node:os'
import { circuitRelayServer, circuitRelayTransport } from '@libp2p/circuit-relay-v2'
import { needsRelays, RELAY_RESERVATIONS, type NodeConfig } from '../../config/index.js'
import { pacedWalk } from './paced-walk.js'
import { withComponents } from './component-proxies.js'
import { budgetedRegistrar, RelayBudget } from './relay-budget.js'
import type { Connection, ConnectionGater, PeerId } from '@libp2p/interface'
import type { TransportManager } from '@libp2p/interface-internal'
import type { Multiaddr } from '@multiformats/multiaddr'

/** Bounds on the relay's protocol streams: a flood of hop or stop requests waits its turn. */
const MAX_HOP_STREAMS = 64
const MAX_STOP_STREAMS = 64
const CIRCUIT_CODE = 290
/** A reservation on a relay lasts this long before it is renewed (libp2p's default is 2 h). */
const RESERVATION_TTL_MS = 30 * 60_000

/** The addresses of this machine's network interfaces (for a wildcard listen address). */
export function interfaceAddresses (): string[] {
  return Object.values(networkInterfaces()).flatMap(list => (list ?? []).map(i => i.address))
}

/** Whether this node, as configured on this machine, reserves slots on relays. */
export function reservesRelays (config: NodeConfig, interfaces: string[] = interfaceAddresses()): boolean {
  return needsRelays({ ...config, interfaceAddresses: interfaces })
}

/** The `/p2p-circuit` listen addresses that make the relay transport reserve slots (one each). */
export function relayListenAddresses (config: NodeConfig, interfaces?: string[]): string[] {
  return reservesRelays(config, interfaces) ? Array.from({ length: RELAY_RESERVATIONS }, () => '/p2p-circuit') : []
}

/** The transport every node has: dials relayed addresses, and listens on them when asked to. */
export function relayTransport (): ReturnType<typeof circuitRelayTransport> {
  const factory = circuitRelayTransport({
    maxInboundStopStreams: MAX_STOP_STREAMS,
    maxOutboundStopStreams: MAX_STOP_STREAMS,
    reservationCompletionTimeout: 10_000,
    // a relay that will not answer costs one slot of the queue, not the node's attention
    maxReservationQueueLength: 16
  })
  // relay discovery walks the DHT until the node holds its slots: forever where the network
  // has fewer relays than it wants, redialing what it cannot reach (paced-walk.ts)
  return withComponents(factory, (components) => ({ randomWalk: pacedWalk(() => components.peerRouting) }))
}

/** The relay service a node serves for others, or none. */
export function relayServer (config: NodeConfig): ReturnType<typeof circuitRelayServer> | undefined {
  const relay = config.relay
  if (!relay.serve) return undefined
  const factory = circuitRelayServer({
    maxInboundHopStreams: MAX_HOP_STREAMS,
    maxOutboundStopStreams: MAX_STOP_STREAMS,
    reservations: {
      maxReservations: relay.maxReservations,
      reservationTtl: RESERVATION_TTL_MS,
      applyDefaultLimit: !relay.unlimited,
      defaultDurationLimit: relay.circuitSeconds * 1000,
      defaultDataLimit: BigInt(relay.circuitBytes)
    }
  })
  if (relay.maxBytesPerHour == null) return factory
  // all circuits together, within the operator's hourly budget (relay-budget.ts)
  const budget = new RelayBudget(relay.maxBytesPerHour)
  return withComponents(factory, components => ({
    registrar: budgetedRegistrar(components.registrar, budget, components.logger)
  }))
}

/**
 * Relayed connections one remote peer may open to this node: at most this many at once, and
 * at most this many admitted within RELAYED_WINDOW_MS (a burst is admitted before any of it has
 * finished its handshake). Without it one peer could take every stop stream a relay's
 * connection offers (MAX_STOP_STREAMS) and so shut every other peer out of that relay.
 */
export const MAX_RELAYED_PER_PEER = 4
const RELAYED_WINDOW_MS = 10_000
/** remote peers whose admissions are remembered (the oldest are forgotten first) */
const MAX_REMEMBERED_PEERS = 4_096

/** The connection gater's check of relayed connections; `connections` is the node's, once it exists. */
export function relayedConnectionLimit (connections: () => ((peer: PeerId) => Connection[]) | undefined): Pick<ConnectionGater, 'denyInboundRelayedConnection'> {
  const admitted = new Map<string, number[]>()
  return {
    denyInboundRelayedConnection: (_relay, remote) => {
      const key = remote.toString()
      const now = Date.now()
      const recent = (admitted.get(key) ?? []).filter(t => now - t < RELAYED_WINDOW_MS)
      const open = (connections()?.(remote) ?? []).filter(c => c.status === 'open' && c.remoteAddr.getComponents().some(p => p.code === CIRCUIT_CODE)).length
      if (open >= MAX_RELAYED_PER_PEER || recent.length >= MAX_RELAYED_PER_PEER) return true
      admitted.delete(key)
      admitted.set(key, [...recent, now])
      if (admitted.size > MAX_REMEMBERED_PEERS) admitted.delete(admitted.keys().next().value as string)
      return false
    }
  }
}

/** Relays a first contact tries at once (a peer names at most four addresses). */
const MAX_RACED_RELAYS = 4

/**
 * The first connection to a peer through any of its relayed addresses, all dialed at once.
 * libp2p's dial queue tries a peer's addresses one after another under one time limit, so a
 * relay that stalls (connections open, nothing moving) would hold the whole dial; here it holds
 * only its own. The losers are aborted, or closed if they connected too.
 */
export async function dialViaRelays (transports: Pick<TransportManager, 'dial'>, addrs: Multiaddr[], signal: AbortSignal): Promise<Connection> {
  const relayed = addrs.filter(a => a.getComponents().some(c => c.code === CIRCUIT_CODE)).slice(0, MAX_RACED_RELAYS)
  if (relayed.length === 0) throw new Error('no relayed address to dial')
  const done = new AbortController()
  const each = AbortSignal.any([signal, done.signal])
  const attempts = relayed.map(async addr => await transports.dial(addr, { signal: each }))
  try {
    const winner = await Promise.any(attempts)
    done.abort()
    void Promise.allSettled(attempts).then(results => {
      for (const r of results) if (r.status === 'fulfilled' && r.value !== winner) void r.value.close().catch(() => {})
    })
    return winner
  } catch (err: any) {
    throw err instanceof AggregateError ? (err.errors[0] ?? err) : err
  }
}
