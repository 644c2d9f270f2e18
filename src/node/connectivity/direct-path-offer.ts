/**
 * The direct path's offers (protocols/README.md §7 "Direct path"): what each side sends in its
 * CONNECT frame, the rule both sides apply to two offers, and the checks on a peer's offer
 * (public TCP addresses only, within bounds). direct-path.ts runs the exchange.
 */
import { isPrivate } from '@libp2p/utils/multiaddr/is-private'
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import { TCP } from '@multiformats/multiaddr-matcher'
import { decodeBounded, LIMITS, MAX_BYTES } from '../../../protocols/codec.js'
import { Punch } from '../../../protocols/punch.js'
import { directPathFailed } from '../errors.js'
import { MAX_MESSAGE_ADDR_BYTES } from './addresses.js'
import type { Stream } from '@libp2p/interface'
import type { LengthPrefixedStream } from 'it-length-prefixed-stream'

export type DirectPlan = 'dial-responder' | 'responder-dials' | 'punch' | 'none'
export type NatMapping = 'endpoint-independent' | 'endpoint-dependent' | 'unknown'

/** What each side offers: its public listen addresses, and where its dial port was seen. */
export interface DirectOffer {
  listen: Multiaddr[]
  punch: Multiaddr[]
}

/** Both sides' rule: who dials whom, from the two offers. */
export function planDirectPath (initiator: DirectOffer, responder: DirectOffer): DirectPlan {
  if (responder.listen.length > 0) return 'dial-responder'
  if (initiator.listen.length > 0) return 'responder-dials'
  if (initiator.punch.length > 0 && responder.punch.length > 0) return 'punch'
  return 'none'
}

export function encodeOffer (offer: DirectOffer, type: Punch.Type): Uint8Array {
  return Punch.encode({ type, listenAddrs: offer.listen.map(a => a.bytes), punchAddrs: offer.punch.map(a => a.bytes) })
}

/** Reads one frame of `type` and checks its addresses: public TCP ones only (`usable`), within bounds. */
export async function readOffer (
  frames: LengthPrefixedStream<Stream>,
  type: Punch.Type,
  usable: (addr: Multiaddr) => boolean,
  signal: AbortSignal
): Promise<DirectOffer> {
  const message = decodeBounded(Punch, await frames.read({ signal }), 'punch', MAX_BYTES.punch, LIMITS.punch)
  if (message.type !== type) throw directPathFailed('bad-offer', `expected ${type}, got ${message.type}`)
  const addrs = (list: Uint8Array[], what: string): Multiaddr[] => list.map(bytes => {
    if (bytes.byteLength > MAX_MESSAGE_ADDR_BYTES) throw directPathFailed('bad-offer', `a ${what} address of ${bytes.byteLength} bytes (at most ${MAX_MESSAGE_ADDR_BYTES})`)
    let addr: Multiaddr
    try { addr = multiaddr(bytes) } catch (err) { throw directPathFailed('bad-offer', `a ${what} address does not decode`, { cause: err }) }
    if (!usable(addr)) throw directPathFailed('bad-offer', `${what} address ${addr.toString()} is not a public TCP address`)
    return addr
  })
  return { listen: addrs(message.listenAddrs, 'listen'), punch: addrs(message.punchAddrs, 'punch') }
}

/** A TCP address over IP, public (or private where `allowPrivate`: a one-machine test), no /p2p, port not 0. */
export function usableAddress (addr: Multiaddr, allowPrivate: boolean): boolean {
  const bare = addr.getComponents().at(-1)?.code === 421 ? addr.decapsulateCode(421) : addr
  if (!TCP.exactMatch(bare) || bare.toOptions().port === 0) return false
  try {
    return allowPrivate || isPrivate(bare) === false
  } catch {
    return false
  }
}

/** Why two offers give no path, for the error a person reads. */
export function noPathWhy (mine: DirectOffer, theirs: DirectOffer): string {
  const side = (o: DirectOffer, who: string): string => o.punch.length === 0 ? `${who} no public address and no seen dial port` : ''
  const missing = [side(mine, 'this node has'), side(theirs, 'the peer has')].filter(s => s !== '')
  return `neither side listens publicly, and ${missing.join('; ')} (a NAT that maps each connection anew, or no public peer has seen it yet)`
}
