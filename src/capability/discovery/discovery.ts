/**
 * Discovery: find providers by constraint with no directory server. Look up the narrowest
 * index key the filters allow (GET_PROVIDERS to its closest known DHT servers at once,
 * closest-lookup.ts; a kad-dht `findProviders` walk when none is known; both bounded in DHT
 * messages), ask each candidate for its record directly (`/idlegrid/cap/1.0.0`, dialled at
 * the addresses the DHT gave), falling back to the DHT record (`get`, which runs the
 * validator) when it cannot or will not answer; keep verified records in a bounded cache.
 * Every record, wherever it came from, is opened again (record-fetcher.ts: signature, signer =
 * candidate, expiry) and every filter is applied to the record itself. Candidate count, parallelism,
 * messages and time are all bounded.
 */

import { multiaddr } from '@multiformats/multiaddr'
import { toString as uint8ArrayToString } from 'uint8arrays/to-string'
import { failedFilter, indexKeysFor, recordAvailableAt, type DiscoveryFilters } from './discovery-filters.js'
import type { IndexKey } from './index-keys.js'
import type { CapabilityRecordError, CapabilityRejection, RecordFetchFailure } from '../errors.js'
import { findClosestProviders } from './closest-lookup.js'
import type { DhtPeerBook } from './dht-peers.js'
import type { AskProviders } from './kad-providers.js'
import { findCandidates, PROVIDERS_PER_KEY, type Candidate, type MessageCounter } from './provider-lookup.js'
import { RecordFetcher } from './record-fetcher.js'
import type { RecordCache } from '../record/record-cache.js'
import { recordTierFromWire, type Tier } from '../policy/tiers.js'
import { formatWindow } from '../policy/windows.js'
import type { CapabilityRecord } from '../../../protocols/capability.js'
import type { Signed } from '../../identity/index.js'
import type { ConnectionManager } from '@libp2p/interface-internal'
import type { KadDHT } from '@libp2p/kad-dht'

export interface DiscoveryOptions {
  /** bound on the whole discovery (default 20 s) */
  timeoutMs?: number
  /** bound on one record fetch (default 8 s) */
  fetchTimeoutMs?: number
  /** most candidates whose records are fetched (default 64) */
  maxCandidates?: number
  /** record fetches in flight (default 8) */
  parallelism?: number
  /** bound on asking a provider directly before falling back to the DHT (default 3 s) */
  directTimeoutMs?: number
  /** a cached record fetched less than this long ago is used without asking again (default 15 s; 0: always ask) */
  maxRecordAgeMs?: number
  /** DHT requests the index lookups may send in all (default 24) */
  maxLookupMessages?: number
  /** DHT servers asked at once per index key when asking the closest directly (default 4) */
  lookupWidth?: number
  /** the local clock (default Date.now()) */
  now?: number
  signal?: AbortSignal
}

export interface DiscoveredGpu {
  model: string
  /** GiB, one decimal */
  vramGb: number
  vramMib: number
  count: number
  simulated: boolean
}

/** One provider as discovery reports it: JSON-safe (no bigint, no bytes). */
export interface DiscoveredProvider {
  peerId: string
  gpus: DiscoveredGpu[]
  region: string
  residency: string
  /** USD per GPU-hour */
  priceFloor: number
  priceFloorMicroUsd: number
  tiers: Tier[]
  workloads: string[]
  /** canonical window texts; ["always"] when the record has none */
  windows: string[]
  timeZone: string
  availableNow: boolean
  simulated: boolean
  maxJobMinutes: number
  datasets: string[]
  images: string[]
  /** listen multiaddrs (with /p2p/<peer id>) */
  addrs: string[]
  sequence: string
  issuedAt: number
  expiresAt: number
  /** ms since the record was issued */
  ageMs: number
}

export type DropReason = CapabilityRejection | 'not-found' | 'invalid'

export interface DroppedRecord {
  peerId: string
  reason: DropReason
  detail: string
}

export interface DiscoveryResult {
  providers: DiscoveredProvider[]
  /** index keys looked up, narrowest first ("gpu/h-100") */
  indexKeys: string[]
  /** distinct providers found under them */
  candidates: number
  /** candidates whose record was missing, expired or failed verification */
  dropped: DroppedRecord[]
  /** filter name → records it removed (each record counted under the first filter it failed) */
  removedBy: Record<string, number>
  /** more candidates existed than were fetched, or a lookup hit kad-dht's per-key cap */
  truncated: boolean
  /** DHT requests this node sent (SEND_QUERY events), index lookups and DHT fallbacks together */
  dhtMessages: number
  /** where the records used came from: cache (re-verified), the provider itself, the DHT */
  recordsFrom: { cache: number, direct: number, dht: number }
  /** providers whose direct answer was refused or missing (their DHT record was tried instead) */
  directFailures: DirectFailure[]
  /** time spent finding candidates (the index lookups), of elapsedMs */
  lookupMs: number
  /** how the index lookups ran (closest-lookup.ts) */
  lookup: LookupStats
  elapsedMs: number
}

export interface LookupStats {
  /** index keys asked of their closest known servers directly */
  direct: number
  /** index keys looked up by a kad-dht walk (no DHT server known yet, or no direct path) */
  walk: number
  /** request rounds of the direct lookups, summed */
  waves: number
  /** direct lookups whose answers still disagreed at the end (some server lacked a provider another had) */
  disagreed: number
  /** direct requests that failed */
  failed: number
  /** providers that no server of a direct lookup's first wave named (found by asking further) */
  foundAfterFirstWave: number
}

export interface DirectFailure {
  peerId: string
  reason: RecordFetchFailure
  detail: string
}

export interface RejectionLookup {
  /** the latest reason the validator rejected a value under `key`, if any */
  reasonFor(key: Uint8Array): CapabilityRecordError | undefined
}

const MAX_INDEX_LOOKUPS = 8

export function describeRecord (verified: Signed<CapabilityRecord>, now: number): DiscoveredProvider {
  const r = verified.message
  const peerId = verified.signer.toString()
  const addrs: string[] = []
  for (const bytes of r.listenAddrs) {
    try { addrs.push(multiaddr(bytes).encapsulate(`/p2p/${peerId}`).toString()) } catch {}
  }
  return {
    peerId,
    gpus: r.gpus.map(g => ({
      model: g.model,
      vramGb: Math.round(g.vramMib / 102.4) / 10,
      vramMib: g.vramMib,
      count: g.count,
      simulated: g.simulated
    })),
    region: r.region,
    residency: r.residency,
    priceFloor: Number(r.priceFloorMicroUsd) / 1_000_000,
    priceFloorMicroUsd: Number(r.priceFloorMicroUsd),
    tiers: r.acceptedTiers.map(recordTierFromWire).filter((t): t is Tier => t !== undefined),
    workloads: [...r.workloads],
    windows: r.availability.length === 0 ? ['always'] : r.availability.map(formatWindow),
    timeZone: r.timeZone === '' ? 'UTC' : r.timeZone,
    availableNow: recordAvailableAt(r, now),
    simulated: r.gpus.some(g => g.simulated),
    maxJobMinutes: r.maxJobMinutes,
    datasets: r.cachedDatasets.map(d => uint8ArrayToString(d, 'base16')),
    images: [...r.allowedImages],
    addrs,
    sequence: r.sequence.toString(),
    issuedAt: Number(r.issuedAt),
    expiresAt: Number(r.expiresAt),
    ageMs: Math.max(0, now - Number(r.issuedAt))
  }
}

/** What a node's discovery service adds to a bare DHT lookup: direct record fetches and a cache. */
export interface DirectRecords {
  connectionManager: ConnectionManager
  cache: RecordCache
  /** DHT servers to ask an index key's providers of directly (with `ask`); a kad-dht walk without them */
  book?: DhtPeerBook
  ask?: AskProviders
}

/** What a node's discovery service adds to a bare DHT lookup (discovery-service.ts); a bare lookup has neither. */
export interface DiscoveryAids {
  /** the service's memory of the DHT validator's refusals: dropped records say why they were refused */
  rejections?: RejectionLookup
  /** records asked of the providers themselves, and cached; without it every record comes from the DHT */
  direct?: DirectRecords
}

/** Answers in a row that added no provider before a lookup stops (once it found some). */
const QUIET_RESPONSES = 3

/**
 * Finds providers matching `filters` through `dht`. Works on any node with the DHT (renters
 * in client mode included), with what the discovery service adds where it runs (`aids`).
 */
export async function discoverWith (
  dht: KadDHT,
  filters: DiscoveryFilters,
  opts: DiscoveryOptions = {},
  aids: DiscoveryAids = {}
): Promise<DiscoveryResult> {
  const { rejections, direct } = aids
  const started = Date.now()
  const timeoutMs = opts.timeoutMs ?? 20_000
  const signal =
    opts.signal != null
      ? AbortSignal.any([opts.signal, AbortSignal.timeout(timeoutMs)])
      : AbortSignal.timeout(timeoutMs)
  const maxCandidates = opts.maxCandidates ?? 64
  const maxLookupMessages = opts.maxLookupMessages ?? 24
  const counter: MessageCounter = { sent: 0 }
  const lookup: LookupStats = { direct: 0, walk: 0, waves: 0, disagreed: 0, failed: 0, foundAfterFirstWave: 0 }

  // 1. candidates from the narrowest index key; broader keys only when it hit the per-key cap
  const candidates = new Map<string, Candidate>()
  const indexKeys: string[] = []
  let truncated = false
  for (const group of indexKeysFor(filters)) {
    let saturated = false
    for (const key of group) {
      if (indexKeys.length >= MAX_INDEX_LOOKUPS || candidates.size >= maxCandidates || signal.aborted) break
      if (counter.sent >= maxLookupMessages) { truncated = true; break }
      indexKeys.push(`${key.dim}/${key.value}`)
      const found = await lookUp(dht, key, {
        signal,
        maxMessages: maxLookupMessages - counter.sent,
        width: opts.lookupWidth,
        counter,
        stats: lookup,
        direct
      })
      if (found.length >= PROVIDERS_PER_KEY) saturated = true
      for (const c of found) {
        if (candidates.size >= maxCandidates) { truncated = true; break }
        candidates.set(c.id.toString(), c)
      }
    }
    if (!saturated) break
    truncated = true
  }

  const lookupMs = Date.now() - started

  // 2. each record: cache, the provider itself, the DHT; bounded in parallelism and time
  const fetcher = new RecordFetcher({ dht, opts, signal, counter, rejections, direct })
  const dropped: DroppedRecord[] = []
  const verified: Array<Signed<CapabilityRecord>> = []
  const queue = [...candidates.values()]
  const workers = Array.from({ length: Math.min(opts.parallelism ?? 8, queue.length) }, async () => {
    for (let c = queue.shift(); c != null; c = queue.shift()) {
      if (signal.aborted) { dropped.push({ peerId: c.id.toString(), reason: 'not-found', detail: 'discovery timed out before this record was fetched' }); continue }
      const outcome = await fetcher.record(c)
      if ('message' in outcome) verified.push(outcome)
      else dropped.push(outcome)
    }
  })
  await Promise.all(workers)

  // 3. filters, on the verified record itself
  const now = opts.now ?? Date.now()
  const removedBy: Record<string, number> = {}
  const providers: DiscoveredProvider[] = []
  for (const v of verified) {
    const failed = failedFilter(v.message, filters, now)
    if (failed !== undefined) { removedBy[failed] = (removedBy[failed] ?? 0) + 1; continue }
    providers.push(describeRecord(v, now))
  }
  providers.sort((a, b) => a.priceFloorMicroUsd - b.priceFloorMicroUsd || a.peerId.localeCompare(b.peerId))
  return {
    providers,
    indexKeys,
    candidates: candidates.size,
    dropped,
    removedBy,
    truncated,
    dhtMessages: counter.sent,
    recordsFrom: fetcher.from,
    directFailures: fetcher.directFailures,
    lookupMs,
    lookup,
    elapsedMs: Date.now() - started
  }
}

/**
 * One index key's lookup: its bounds, the query's message count and stats it adds to, and the
 * direct servers if any.
 */
interface KeyLookup {
  signal: AbortSignal
  maxMessages: number
  width?: number
  counter: MessageCounter
  stats: LookupStats
  direct?: DirectRecords
}

/** One index key's providers: asked of the closest known servers when there are any, else by a kad-dht walk. */
async function lookUp (dht: KadDHT, key: IndexKey, limits: KeyLookup): Promise<Candidate[]> {
  const { counter, stats, direct } = limits
  const before = counter.sent
  if (direct?.book != null && direct.ask != null && direct.book.size > 0) {
    const r = await findClosestProviders({ ask: direct.ask, book: direct.book }, key, limits, counter)
    stats.direct++
    stats.waves += r.waves
    stats.failed += r.failed
    stats.foundAfterFirstWave += r.foundAfterFirstWave
    if (!r.agreed) stats.disagreed++
    // nobody answered (every known server gone): the walk still may find some
    if (r.answered > 0 || limits.signal.aborted) return r.candidates
  }
  stats.walk++
  return await findCandidates(
    dht,
    key,
    {
      signal: limits.signal,
      maxMessages: limits.maxMessages - (counter.sent - before),
      quietResponses: QUIET_RESPONSES
    },
    counter
  )
}
