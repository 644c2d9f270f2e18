/**
 * One local port for a node's outbound TCP connections (issue 37). Behind a NAT with
 * endpoint-independent mapping, every connection from one local port leaves from one public
 * port: the peers the node dials see it (identify's observed address), and a peer behind
 * another such NAT can then reach it by dialing that public port while the node dials the
 * peer's from the same local port (a TCP simultaneous open: src/node/connectivity/direct-path.ts).
 *
 * Sockets share the port with SO_REUSEADDR (libuv sets it on every bind), which Linux allows
 * among connecting sockets, never with a listening one: so the port is not the listen port.
 */
import { createServer } from 'node:net'
import { TransportError } from './errors.js'
import type { Connection } from '@libp2p/interface'
import type { Multiaddr } from '@multiformats/multiaddr'

/** Opens a TCP connection from the dial port to `addr` and upgrades it as the initiator (TLS client) or not. */
export type Puncher = (addr: Multiaddr, initiator: boolean, signal: AbortSignal) => Promise<Connection>

export class DialPort {
  /** connections whose socket left from the port: their observed address is the port's public mapping */
  private readonly fromPort = new WeakSet<object>()
  private puncher: Puncher | undefined

  constructor (readonly port: number) {
    if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new RangeError(`dial port ${port} is not a TCP port`)
  }

  /** The transport: records a connection it dialed from the port. */
  mark (connection: object): void {
    this.fromPort.add(connection)
  }

  /** Whether `connection`'s socket left from the port. */
  usedBy (connection: object): boolean {
    return this.fromPort.has(connection)
  }

  /** The transport: how to punch from the port. */
  attach (puncher: Puncher): void {
    this.puncher = puncher
  }

  /** Dials `addr` (ending in /p2p/<peer>) from the port, as part of a simultaneous open. */
  async punch (addr: Multiaddr, initiator: boolean, signal: AbortSignal): Promise<Connection> {
    if (this.puncher == null) throw new TransportError('ERR_DIAL_PORT', 'no TCP transport dials from this port')
    return await this.puncher(addr, initiator, signal)
  }
}

/** A TCP port free on this machine now (the system's choice), for a dial port. */
export async function freeTcpPort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen({ port: 0, host: '0.0.0.0' }, () => { resolve() })
  })
  const address = server.address()
  await new Promise<void>(resolve => server.close(() => { resolve() }))
  if (address == null || typeof address === 'string') throw new Error('no TCP port')
  return address.port
}
