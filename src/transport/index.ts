import { noise } from '@chainsafe/libp2p-noise'
import { checkDialedPeer } from './dialed-peer.js'
import { nativeTls, type NativeTlsComponents } from './native-tls.js'
import type { ConnectionEncrypter } from '@libp2p/interface'

export { tlsTcp } from './tls-tcp.js'
export { DialPort, freeTcpPort } from './dial-port.js'

/**
 * A node's connection encrypters, in preference order: TLS 1.3 (natively over TCP, as
 * @libp2p/tls over WebSockets), then noise for peers that speak only that. Each checks, on a
 * dial, that the peer proven is the one the dialed address names (nativeTls() has the check built in).
 */
export function connectionEncrypters (): Array<
  (components: NativeTlsComponents & Parameters<ReturnType<typeof noise>>[0]) => ConnectionEncrypter
> {
  return [nativeTls(), checkDialedPeer(noise())]
}
