/**
 * One GET_PROVIDERS request to one DHT server, sent by discovery itself instead of through a
 * kad-dht walk (protocols/kad-providers.proto, the same bytes kad-dht sends): discovery picks
 * the servers closest to an index key from what it already knows and asks them all at once.
 * The answer is untrusted: bounded before it is read, every peer id parsed (bad ones
 * skipped), at most MAX_DIAL_ADDRS addresses kept per peer, each ending in /p2p/<that peer>.
 */

import { peerIdFromMultihash } from '@libp2p/peer-id'
import * as Digest from 'multiformats/hashes/digest'
import { createHash } from 'node:crypto'
import { decodeBounded } from '../../../protocols/codec.js'
import { PROTOCOL } from '../../../protocols/ids.js'
import { KadMessage } from '../../../protocols/kad-providers.js'
import { requestOnce } from '../../node/index.js'
import { dialAddrsFor } from '../record/record-fetch.js'
import type { PeerId } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'
import type { Multiaddr } from '@multiformats/multiaddr'
import type { CID } from 'multiformats/cid'

/** Largest GET_PROVIDERS answer read (64 closer peers and 256 providers with a few addresses each fit). */
export const MAX_PROVIDERS_ANSWER_BYTES = 256 * 1024

/** A peer as an answer names it: its id and where it says the peer listens (possibly nowhere). */
export interface PeerHint {
  id: PeerId
  addrs: Multiaddr[]
}

export interface ProvidersAnswer {
  providers: PeerHint[]
  /** DHT servers closer to the key than the one that answered */
  closer: PeerHint[]
}

/** Sends one GET_PROVIDERS for `cid` to `peer`; throws NodeError (ERR_REQUEST_RESPONSE) or WireDecodeError. */
export type AskProviders = (peer: PeerHint, cid: CID, signal: AbortSignal) => Promise<ProvidersAnswer>

/** `AskProviders` over this node's connections (dialled at the hint's addresses when not connected). */
export function askProvidersWith (connectionManager: ConnectionManager): AskProviders {
  return async (peer, cid, signal) => {
    const request = KadMessage.encode({
      type: KadMessage.MessageType.GET_PROVIDERS,
      key: cid.bytes,
      closerPeers: [],
      providerPeers: []
    })
    const bytes = await requestOnce(connectionManager, peer.id, {
      protocol: PROTOCOL.kad,
      request,
      maxResponseBytes: MAX_PROVIDERS_ANSWER_BYTES,
      signal,
      dial: peer.addrs
    })
    return parseProvidersAnswer(bytes)
  }
}

/** Decodes an answer's bytes (bounded); peers whose id does not parse are skipped. */
export function parseProvidersAnswer (bytes: Uint8Array): ProvidersAnswer {
  const message = decodeBounded(KadMessage, bytes, 'GET_PROVIDERS answer', MAX_PROVIDERS_ANSWER_BYTES)
  return { providers: hints(message.providerPeers), closer: hints(message.closerPeers) }
}

function hints (peers: KadMessage.Peer[]): PeerHint[] {
  const out: PeerHint[] = []
  const seen = new Set<string>()
  for (const p of peers) {
    let id: PeerId
    try {
      id = peerIdFromMultihash(Digest.decode(p.id))
    } catch {
      continue
    }
    if (seen.has(id.toString())) continue
    seen.add(id.toString())
    out.push({ id, addrs: dialAddrsFor(id, p.addrs) })
  }
  return out
}

/** A peer's position in the DHT keyspace (kad-dht's: sha256 of its multihash bytes). */
export function kadIdOfPeer (id: PeerId): Uint8Array {
  return sha256(id.toMultihash().bytes)
}

/** A CID's position in the DHT keyspace (kad-dht's: sha256 of its multihash bytes). */
export function kadIdOfCid (cid: CID): Uint8Array {
  return sha256(cid.multihash.bytes)
}

function sha256 (bytes: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(bytes).digest())
}

/** XOR distance order: negative when `a` is closer to `target` than `b`. */
export function compareDistance (target: Uint8Array, a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < target.length; i++) {
    const da = (a[i] as number) ^ (target[i] as number)
    const db = (b[i] as number) ^ (target[i] as number)
    if (da !== db) return da - db
  }
  return 0
}
