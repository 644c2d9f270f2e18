/**
 * Providers of an index key in (usually) one round trip: GET_PROVIDERS sent at once to the
 * `width` DHT servers closest to the key among those this node knows (DhtPeerBook), instead of
 * kad-dht's walk (20 disjoint paths, one request to each of the 20 closest peers in its table,
 * then their closer peers). Provider records sit at the servers closest to the key, so those
 * answer with the list.
 *
 * Two reasons to ask more, each one more round trip, all within the message budget:
 *  - an answer names servers closer to the key than the `width` closest we asked (our book was
 *    incomplete): the closest `width` known are asked until all have answered (Kademlia's rule);
 *  - the first wave names a provider that at most half of its servers hold: that record sits
 *    mostly elsewhere (a provider that published while the network was smaller stored it at
 *    the servers closest *then*), and records like it may be held by none of these; the next
 *    `width` servers are asked, and so on while a wave still adds providers. (One server
 *    lacking one record that the others hold, a lost ADD_PROVIDER, is not a reason.)
 * The result says how many waves ran, whether the answers agreed and what the later waves
 * found, so a caller can measure the rate.
 */

import { indexCid, type IndexKey } from './index-keys.js'
import { compareDistance, kadIdOfCid, kadIdOfPeer, type AskProviders, type PeerHint } from './kad-providers.js'
import type { DhtPeerBook } from './dht-peers.js'
import type { Candidate, MessageCounter } from './provider-lookup.js'

/** Servers asked in the first wave, and added per later wave. */
export const DEFAULT_LOOKUP_WIDTH = 4
/** One server's time to answer: a slow one must not hold its whole wave until the query's deadline. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 2_000

export interface ClosestLookupLimits {
  signal: AbortSignal
  /** most requests this lookup may send */
  maxMessages: number
  /** servers per wave (default DEFAULT_LOOKUP_WIDTH) */
  width?: number
  /** bound on one request (default DEFAULT_REQUEST_TIMEOUT_MS) */
  requestTimeoutMs?: number
}

export interface ClosestLookupResult {
  candidates: Candidate[]
  /** request rounds (waves sent one after the other) */
  waves: number
  /** servers that answered */
  answered: number
  /** requests that failed or timed out (their servers leave the book) */
  failed: number
  /** true when the last wave's answers all named the same providers (or none) */
  agreed: boolean
  /** the message budget ended the lookup while it still had reason to ask */
  budgetSpent: boolean
  /** providers no server of the first wave named (found only by asking further) */
  foundAfterFirstWave: number
}

interface Known extends PeerHint {
  kadId: Uint8Array
  state: 'new' | 'asked' | 'answered' | 'failed'
}

/** The servers a closest lookup knows (`book`) and how it asks one of them (`ask`). */
export interface ClosestServers {
  ask: AskProviders
  book: DhtPeerBook
}

/** Asks the servers closest to `key`; what was found so far on abort. `book` learns who answered and who failed. */
export async function findClosestProviders (
  { ask, book }: ClosestServers,
  key: IndexKey,
  limits: ClosestLookupLimits,
  counter: MessageCounter
): Promise<ClosestLookupResult> {
  const width = Math.max(1, limits.width ?? DEFAULT_LOOKUP_WIDTH)
  const cid = indexCid(key)
  const target = kadIdOfCid(cid)
  const known = new Map<string, Known>()
  for (const p of book.closest(target, Math.max(width, limits.maxMessages))) known.set(p.id.toString(), { ...p, state: 'new' })
  const found = new Map<string, Candidate>()
  const result: ClosestLookupResult = {
    candidates: [],
    waves: 0,
    answered: 0,
    failed: 0,
    agreed: true,
    budgetSpent: false,
    foundAfterFirstWave: 0
  }
  // how many of the closest known servers must have answered: grows by `width` while waves disagree
  let depth = width
  let sent = 0

  while (!limits.signal.aborted) {
    const ordered = [...known.values()].sort((a, b) => compareDistance(target, a.kadId, b.kadId))
    const wave = ordered.filter(k => k.state !== 'failed').slice(0, depth).filter(k => k.state === 'new')
    if (wave.length === 0) break
    const budget = limits.maxMessages - sent
    if (budget <= 0) { result.budgetSpent = true; break }
    const asking = wave.slice(0, budget)
    result.waves++
    const before = found.size
    const sets: Array<Set<string>> = []
    const named = new Map<string, number>()
    await Promise.all(asking.map(async (peer) => {
      peer.state = 'asked'
      sent++
      counter.sent++
      try {
        const answer = await ask(
          peer,
          cid,
          AbortSignal.any([limits.signal, AbortSignal.timeout(limits.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS)])
        )
        peer.state = 'answered'
        result.answered++
        book.confirm(peer.id, peer.addrs)
        const set = new Set(answer.providers.map(p => p.id.toString()))
        sets.push(set)
        for (const id of set) named.set(id, (named.get(id) ?? 0) + 1)
        for (const p of answer.providers) {
          const had = found.get(p.id.toString())
          if (had == null || had.addrs.length === 0) found.set(p.id.toString(), { id: p.id, addrs: p.addrs })
        }
        // an answer may name made-up servers close to every key: each one adds at most its
        // `width` closest new ones (and none without an address: dialling those would need a lookup)
        const closer = answer.closer
          .filter(c => !known.has(c.id.toString()) && c.addrs.length > 0)
          .map(c => ({ ...c, kadId: kadIdOfPeer(c.id), state: 'new' as const }))
          .sort((x, y) => compareDistance(target, x.kadId, y.kadId))
          .slice(0, width)
        for (const c of closer) known.set(c.id.toString(), c)
      } catch (err: any) {
        peer.state = 'failed'
        result.failed++
        // a server that was merely slow stays known; one that failed otherwise is forgotten
        if (!limits.signal.aborted && err?.reason !== 'timeout') book.forget(peer.id)
      }
    }))
    if (sets.length > 0) result.agreed = sets.every(s => s.size === found.size)
    // the first wave must agree; a later one must add nothing, or the next `width` are asked
    const addedNew = result.waves > 1 && found.size > before
    if (addedNew) result.foundAfterFirstWave += found.size - before
    const minorityHeld = [...named.values()].some(n => n * 2 <= sets.length)
    if ((result.waves === 1 && minorityHeld) || addedNew) depth += width
    if (asking.length < wave.length) { result.budgetSpent = true; break }
  }
  result.candidates = [...found.values()]
  return result
}
