/**
 * A random walk that cannot spin. libp2p's (random-walk.js) queries the DHT for random keys
 * back to back while anyone walks, and its consumers here dial what it yields: relay discovery
 * walks until the node holds its relay slots (never, where the network has fewer relays than a
 * node wants), and a peer it cannot dial comes straight back. Measured in the NAT lab: a NAT'd
 * node with one relay redialed one stale peer every 5–10 ms for as long as it ran. So the two
 * walkers (circuit relay discovery, AutoNAT) get this one: one DHT query per interval, bounded
 * in time, and a peer yielded at most once per `forgetMs`.
 */
import { randomBytes } from '@libp2p/crypto'
import { sleep } from '../../common/index.js'
import type { AbortOptions, PeerInfo, PeerRouting } from '@libp2p/interface'
import type { RandomWalk } from '@libp2p/interface-internal'

export interface PacedWalkOptions {
  /** one query starts at most this often (default 10 s) */
  intervalMs?: number
  /** a query gives up after this (default 10 s) */
  queryTimeoutMs?: number
  /** a peer yielded is not yielded again for this long (default 10 min) */
  forgetMs?: number
}

/** Peers remembered as yielded (the oldest are forgotten first). */
const MAX_REMEMBERED = 1024

/** `routing` is read when a query starts (a component may not exist yet when a factory runs). */
export function pacedWalk (routing: () => Pick<PeerRouting, 'getClosestPeers'>, opts: PacedWalkOptions = {}): RandomWalk {
  const intervalMs = opts.intervalMs ?? 10_000
  const queryTimeoutMs = opts.queryTimeoutMs ?? 10_000
  const forgetMs = opts.forgetMs ?? 10 * 60_000
  const yielded = new Map<string, number>()
  const fresh = (peer: PeerInfo): boolean => {
    const key = peer.id.toString()
    const last = yielded.get(key)
    if (last != null && Date.now() - last < forgetMs) return false
    yielded.delete(key)
    yielded.set(key, Date.now())
    if (yielded.size > MAX_REMEMBERED) yielded.delete(yielded.keys().next().value as string)
    return true
  }
  return {
    async * walk (options: AbortOptions = {}): AsyncGenerator<PeerInfo> {
      const outer = options.signal ?? new AbortController().signal
      while (!outer.aborted) {
        const started = Date.now()
        try {
          const signal = AbortSignal.any([outer, AbortSignal.timeout(queryTimeoutMs)])
          for await (const peer of routing().getClosestPeers(randomBytes(32), { signal })) {
            if (fresh(peer)) yield peer
          }
        } catch {
          // no peers to ask yet, or the query timed out: the next one comes after the interval
        }
        await sleep(intervalMs - (Date.now() - started), outer)
      }
    }
  }
}
