/**
 * Who a renter asks "why not?" (explain.ts): providers found under the DHT index keys, each
 * record asked of the provider itself over /idlegrid/cap/1.0.0 and kept in a cache (one
 * round trip, no DHT walk per provider), with the provider's DHT record as the fallback when
 * it does not answer; plus providers heard through heartbeats (those connected to us: heartbeats
 * go to connected peers only, so discovery is what finds the rest). Every record is verified
 * again on use (capability discovery), never trusted from the cache alone.
 */

import { peerIdFromString } from '@libp2p/peer-id'
import { multiaddr } from '@multiformats/multiaddr'
import { discoverWith, RecordCache, type DiscoveryFilters, type DiscoveryResult } from '../../capability/index.js'
import type { HeartbeatService } from '../../node/index.js'
import type { Logger, PeerStore } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'
import type { KadDHT } from '@libp2p/kad-dht'

/** Time allowed to find candidates (the explain step's own deadline is 4 s). */
const DISCOVERY_TIMEOUT_MS = 3_000
/** A provider's own answer must come within this, leaving time for its DHT record. */
const DIRECT_TIMEOUT_MS = 1_000
const MAX_CANDIDATES = 64

export interface CandidateComponents {
  dht: KadDHT
  connectionManager: ConnectionManager
  peerStore: PeerStore
  heartbeats: HeartbeatService
}

export interface ProviderCandidatesInit {
  /** a cached record is asked again after this (default 15 s, discovery's default) */
  maxRecordAgeMs?: number
}

export class ProviderCandidates {
  private readonly cache = new RecordCache()
  /** where the latest lookup's records came from (logs, tests) */
  lastRecordsFrom?: DiscoveryResult['recordsFrom']

  constructor (
    private readonly components: CandidateComponents,
    private readonly log: Logger,
    private readonly init: ProviderCandidatesInit = {}
  ) {}

  /** Providers advertised in the DHT and providers heard through heartbeats, at most 64. */
  async find (signal: AbortSignal): Promise<string[]> {
    const heard = this.components.heartbeats.presence().filter(p => p.role === 'provider').map(p => p.peerId)
    const advertised = await this.discover({}, MAX_CANDIDATES, signal)
    return [...new Set([...advertised, ...heard])].slice(0, MAX_CANDIDATES)
  }

  /**
   * Providers advertised in the DHT whose verified records match `filters` (at most `max`,
   * cheapest floor first) within `timeoutMs` (or `signal`); their listen addresses go to the peer
   * store. A record asked of its provider leaves a connection to it. Never throws: a failed lookup finds nobody.
   */
  async discover (
    filters: DiscoveryFilters,
    max: number,
    signal: AbortSignal,
    timeoutMs = DISCOVERY_TIMEOUT_MS
  ): Promise<string[]> {
    const { dht, connectionManager, peerStore } = this.components
    try {
      const result = await discoverWith(dht, filters, {
        timeoutMs,
        maxCandidates: Math.min(max, MAX_CANDIDATES),
        directTimeoutMs: DIRECT_TIMEOUT_MS,
        maxRecordAgeMs: this.init.maxRecordAgeMs,
        signal
      }, { direct: { connectionManager, cache: this.cache } })
      this.lastRecordsFrom = result.recordsFrom
      // the records carry listen addresses: dial those rather than look the peers up again
      await Promise.all(result.providers.map(async (p) => {
        const multiaddrs = p.addrs.flatMap(a => { try { return [multiaddr(a)] } catch { return [] } })
        if (multiaddrs.length > 0) await peerStore.merge(peerIdFromString(p.peerId), { multiaddrs }).catch(() => {})
      }))
      return result.providers.map(p => p.peerId)
    } catch (err) {
      this.log('discovery failed: %e', err)
      return []
    }
  }
}
