/**
 * Candidates for a discovery query: `findProviders` on index keys, bounded in DHT messages.
 * kad-dht walks its disjoint paths until they run dry (in a small network that is most of
 * the nodes) although provider records sit at the k peers closest to the key, which all
 * answer with the same list: the lookup stops once answers stop adding providers, or when
 * its message budget is spent. Each candidate keeps the addresses the DHT gave for it, so
 * the renter can dial it without another lookup.
 */

import { dialAddrsFor } from '../record/record-fetch.js'
import { indexCid, type IndexKey } from './index-keys.js'
import type { PeerId } from '@libp2p/interface'
import type { KadDHT } from '@libp2p/kad-dht'
import type { Multiaddr } from '@multiformats/multiaddr'

/** kad-dht stops a findProviders query at k (20) providers. */
export const PROVIDERS_PER_KEY = 20

export interface Candidate {
  id: PeerId
  /** where the DHT says it listens (each ending in /p2p/<id>), possibly none */
  addrs: Multiaddr[]
}

/** DHT requests sent so far by one discovery query (SEND_QUERY events). */
export interface MessageCounter { sent: number }

export interface LookupLimits {
  signal: AbortSignal
  /** most DHT requests this lookup may send */
  maxMessages: number
  /** once providers were found: stop after this many answers in a row added none */
  quietResponses: number
}

/** Providers of one index key, at most PROVIDERS_PER_KEY; what was found so far on abort. */
export async function findCandidates (
  dht: KadDHT,
  key: IndexKey,
  limits: LookupLimits,
  counter: MessageCounter
): Promise<Candidate[]> {
  const found = new Map<string, Candidate>()
  let sent = 0
  let quiet = 0
  try {
    for await (const event of dht.findProviders(indexCid(key), { signal: limits.signal })) {
      if (event.name === 'SEND_QUERY') {
        sent++
        counter.sent++
      }
      if (event.name === 'PEER_RESPONSE' && found.size > 0) quiet++
      if (event.name === 'PROVIDER') {
        for (const p of event.providers) {
          const had = found.get(p.id.toString())
          if (had == null) quiet = 0
          if (had == null || had.addrs.length === 0) {
            found.set(p.id.toString(), { id: p.id, addrs: dialAddrsFor(p.id, p.multiaddrs) })
          }
        }
      }
      // kad-dht aborts its in-flight requests when the loop is left
      if (
        found.size >= PROVIDERS_PER_KEY ||
        sent >= limits.maxMessages ||
        (found.size > 0 && quiet >= limits.quietResponses)
      ) {
        break
      }
    }
  } catch (err: any) {
    // a timed-out or failed lookup still yields what it found so far
    if (!limits.signal.aborted && err?.name !== 'AbortError') throw err
  }
  return [...found.values()]
}
