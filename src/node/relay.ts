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
import { needsRelays, RELAY_RESERVATIONS, type NodeConfig } from '../config/index.js'

/** Bounds on the relay's protocol streams: a flood of hop or stop requests waits its turn. */
const MAX_HOP_STREAMS = 64
const MAX_STOP_STREAMS = 64
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
  return circuitRelayTransport({
    maxInboundStopStreams: MAX_STOP_STREAMS,
    maxOutboundStopStreams: MAX_STOP_STREAMS,
    reservationCompletionTimeout: 10_000,
    // a relay that will not answer costs one slot of the queue, not the node's attention
    maxReservationQueueLength: 16
  })
}

/** The relay service a node serves for others, or none. */
export function relayServer (config: NodeConfig): ReturnType<typeof circuitRelayServer> | undefined {
  const relay = config.relay
  if (!relay.serve) return undefined
  return circuitRelayServer({
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
}
