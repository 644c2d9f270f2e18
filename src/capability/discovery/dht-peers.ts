/**
 * The DHT servers a node's discovery knows, to ask the ones closest to an index key directly.
 * A peer enters when identify says it speaks the DHT protocol, or when it answered one of our
 * GET_PROVIDERS requests; it leaves when identify says it no longer does or a request to it
 * fails. Peers merely named in someone's answer are not kept (an answer is untrusted and could
 * name thousands of made-up peers close to every key). Bounded: the least recently confirmed
 * peer is dropped first.
 */

import { compareDistance, kadIdOfPeer, type PeerHint } from './kad-providers.js'
import type { PeerId } from '@libp2p/interface'
import type { Multiaddr } from '@multiformats/multiaddr'

export const MAX_BOOK_PEERS = 4096

export interface BookPeer extends PeerHint {
  kadId: Uint8Array
}

export class DhtPeerBook {
  /** insertion order = confirmation order (re-confirming moves a peer to the end) */
  private readonly peers = new Map<string, BookPeer>()

  constructor (private readonly maxPeers = MAX_BOOK_PEERS) {}

  get size (): number {
    return this.peers.size
  }

  /** `id` is a DHT server; `addrs` where it listens (kept when the new list is empty) */
  confirm (id: PeerId, addrs: Multiaddr[]): void {
    const key = id.toString()
    const had = this.peers.get(key)
    this.peers.delete(key)
    this.peers.set(key, {
      id,
      addrs: addrs.length > 0 ? addrs : (had?.addrs ?? []),
      kadId: had?.kadId ?? kadIdOfPeer(id)
    })
    if (this.peers.size > this.maxPeers) this.peers.delete(this.peers.keys().next().value as string)
  }

  forget (id: PeerId): void {
    this.peers.delete(id.toString())
  }

  has (id: PeerId): boolean {
    return this.peers.has(id.toString())
  }

  /** the `count` known servers closest to `target` (a kad id), closest first */
  closest (target: Uint8Array, count: number): BookPeer[] {
    return [...this.peers.values()].sort((a, b) => compareDistance(target, a.kadId, b.kadId)).slice(0, count)
  }
}
