/**
 * The dialer's check of the peer it dialed. libp2p 2.x hands encrypters no expected peer (its
 * upgrader passes the dial's options, which name none), and the stock encrypters check one only
 * when told: so a listener at an address naming one peer could prove another, and the dial
 * would resolve with a connection to whoever listened there. Every encrypter a node uses is
 * told the peer its dialed address names.
 */
import { peerIdFromString } from '@libp2p/peer-id'
import type { ConnectionEncrypter, MultiaddrConnection, PeerId, SecureConnectionOptions, SecuredConnection } from '@libp2p/interface'
import type { Multiaddr } from '@multiformats/multiaddr'

/** The peer the connection's remote address names (a dialer's: the address it dialed), if any. */
export function dialedPeer (conn: object): PeerId | undefined {
  const id = (conn as { remoteAddr?: Multiaddr }).remoteAddr?.getPeerId()
  return id == null ? undefined : peerIdFromString(id)
}

/** `factory`'s encrypter, told on each dial the peer the dialed address names. */
export function checkDialedPeer<Components> (
  factory: (components: Components) => ConnectionEncrypter
): (components: Components) => ConnectionEncrypter {
  return (components) => new DialedPeerCheck(factory(components))
}

class DialedPeerCheck implements ConnectionEncrypter {
  readonly protocol: string
  readonly [Symbol.toStringTag] = 'idlegrid/dialed-peer-check'

  constructor (private readonly inner: ConnectionEncrypter) {
    this.protocol = inner.protocol
  }

  async secureInbound<Stream extends object = MultiaddrConnection> (
    conn: Stream,
    options?: SecureConnectionOptions
  ): Promise<SecuredConnection<Stream>> {
    return await this.inner.secureInbound(conn as any, options) as SecuredConnection<Stream>
  }

  async secureOutbound<Stream extends object = MultiaddrConnection> (
    conn: Stream,
    options: SecureConnectionOptions = {}
  ): Promise<SecuredConnection<Stream>> {
    return (await this.inner.secureOutbound(conn as any, {
      ...options,
      remotePeer: options.remotePeer ?? dialedPeer(conn)
    })) as SecuredConnection<Stream>
  }
}
