/**
 * Whether a public listen address works (issue 37 item 2): libp2p 2 announces a public address
 * only once a peer has dialed it back (AutoNAT), so without this a node on a public interface
 * announced nothing until its operator gave `--announce`. Every node answers such requests
 * (one address, of the asker's own IP, dialed once: no amplification) and asks its peers.
 * A node behind NAT has only private interface addresses: they are never sent, and the
 * addresses other peers observe for it need four dial-backs from different networks (the
 * library's rule) before they count, so it stays on relays (relay.ts) until then.
 *
 * The dial-back is a fresh connection: libp2p's openConnection returns an open connection to
 * the same peer instead (the one the request came on), whose remote address is the asker's
 * ephemeral port, so the library's check "the connection reached the address asked" failed
 * every time and no address was ever confirmed.
 */
import { autoNAT } from '@libp2p/autonat'
import { PROTOCOL } from '../../../protocols/ids.js'
import { isMultiaddr } from '@multiformats/multiaddr'
import { pacedWalk } from './paced-walk.js'
import { withComponents, wrappedHandler } from './component-proxies.js'
import { isRelayed } from './addresses.js'
import type { ConnectionManager } from '@libp2p/interface-internal'

/** Requests answered at once per connection, and dial-backs asked at once: a few suffice. */
const MAX_INBOUND_STREAMS = 2
const MAX_OUTBOUND_STREAMS = 4
/** A dial-back request and its dial give up after this. */
const TIMEOUT_MS = 10_000

/**
 * The AutoNAT service on `/idlegrid/autonat/1.0.0` (its own id, as the DHT's: idlegrid never
 * answers outsiders' probes).
 */
export function addressCheck (): (components: any) => unknown {
  const [, prefix, name, version] = PROTOCOL.autonat.split('/')
  if (name !== 'autonat' || version !== '1.0.0') throw new Error(`the autonat library speaks /<prefix>/autonat/1.0.0, not ${PROTOCOL.autonat}`)
  const factory = autoNAT({
    protocolPrefix: prefix,
    maxInboundStreams: MAX_INBOUND_STREAMS,
    maxOutboundStreams: MAX_OUTBOUND_STREAMS,
    timeout: TIMEOUT_MS
  })
  return withComponents(factory, (components) => ({
    // a request over a relay would name the relay's IP as the asker's: the library would dial
    // the relay's host at any port a peer names (an unlimited relay's circuit lets it through)
    registrar: wrappedHandler(components.registrar, PROTOCOL.autonat, (handler) => (data) => {
      if (isRelayed(data.connection.remoteAddr)) { data.stream.abort(new Error('AutoNAT requests are answered on direct connections only')); return }
      return handler(data)
    }),
    connectionManager: freshDialsToOneAddress(components.connectionManager),
    // it walks to find peers to ask while an address is unverified (behind NAT: always)
    randomWalk: pacedWalk(() => components.peerRouting)
  }))
}

/**
 * `manager` whose openConnection to one multiaddr (a dial-back) always dials it; a peer's address
 * list (a random walk) may use an open connection.
 */
function freshDialsToOneAddress (manager: ConnectionManager): ConnectionManager {
  return new Proxy(manager, {
    get: (target, prop) => {
      const value = Reflect.get(target, prop, target)
      if (prop !== 'openConnection') return typeof value === 'function' ? value.bind(target) : value
      return async (to: Parameters<ConnectionManager['openConnection']>[0], options: Parameters<ConnectionManager['openConnection']>[1] = {}) =>
        await target.openConnection(to, isMultiaddr(to) ? { ...options, force: true } : options)
    }
  })
}
