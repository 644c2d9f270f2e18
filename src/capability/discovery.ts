/**
 * Discovery: find providers by constraint with no directory server. Look up the narrowest
 * index key the filters allow (`findProviders`), fetch each candidate's record from the DHT
 * (`get`, which runs the validator), verify it again locally, and apply every filter to
 * the record itself. Candidate count, parallelism and time are all bounded.
 */

import { multiaddr } from '@multiformats/multiaddr'
import { toString as uint8ArrayToString } from 'uint8arrays/to-string'
import { failedFilter, indexKeysFor, recordAvailableAt, type DiscoveryFilters } from './discovery-filters.js'
import { CapabilityRecordError, type CapabilityRejection } from './errors.js'
import { indexCid, type IndexKey } from './index-keys.js'
import { openCapabilityRecord } from './record.js'
import { capabilityKey } from './record-key.js'
import { recordTierFromWire, type Tier } from './tiers.js'
import { formatWindow } from './windows.js'
import type { CapabilityRecord } from '../../protocols/capability.js'
import type { Signed } from '../identity/index.js'
import type { AbortOptions, PeerId } from '@libp2p/interface'
import type { KadDHT, QueryEvent } from '@libp2p/kad-dht'

export interface DiscoveryOptions {
  /** bound on the whole discovery (default 20 s) */
  timeoutMs?: number
  /** bound on one record fetch (default 8 s) */
  fetchTimeoutMs?: number
  /** most candidates whose records are fetched (default 64) */
  maxCandidates?: number
  /** record fetches in flight (default 8) */
  parallelism?: number
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
  /** DHT requests this node sent (SEND_QUERY events) */
  dhtMessages: number
  elapsedMs: number
}

export interface RejectionLookup {
  /** the latest reason the validator rejected a value under `key`, if any */
  reasonFor(key: Uint8Array): CapabilityRecordError | undefined
}

/** kad-dht stops a findProviders query at k (20) providers. */
const PROVIDERS_PER_KEY = 20
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
    gpus: r.gpus.map(g => ({ model: g.model, vramGb: Math.round(g.vramMib / 102.4) / 10, vramMib: g.vramMib, count: g.count, simulated: g.simulated })),
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

/**
 * Finds providers matching `filters` through `dht`. Works on any node with the DHT (renters
 * in client mode included); with `rejections` (the discovery service's memory of the DHT
 * validator's refusals), dropped records say why the validator refused them.
 */
export async function discoverWith (dht: KadDHT, filters: DiscoveryFilters, opts: DiscoveryOptions = {}, rejections?: RejectionLookup): Promise<DiscoveryResult> {
  const started = Date.now()
  const timeoutMs = opts.timeoutMs ?? 20_000
  const signal = opts.signal != null ? AbortSignal.any([opts.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs)
  const maxCandidates = opts.maxCandidates ?? 64
  const counter = { sent: 0 }

  // 1. candidates from the narrowest index key; broader keys only when it hit the per-key cap
  const candidates = new Map<string, PeerId>()
  const indexKeys: string[] = []
  let truncated = false
  const groups = indexKeysFor(filters)
  for (const group of groups) {
    let saturated = false
    for (const key of group) {
      if (indexKeys.length >= MAX_INDEX_LOOKUPS || candidates.size >= maxCandidates || signal.aborted) break
      indexKeys.push(`${key.dim}/${key.value}`)
      const found = await findCandidates(dht, key, signal, counter)
      if (found.length >= PROVIDERS_PER_KEY) saturated = true
      for (const p of found) {
        if (candidates.size >= maxCandidates) { truncated = true; break }
        candidates.set(p.toString(), p)
      }
    }
    if (!saturated) break
    truncated = true
  }

  // 2. fetch and verify each record, bounded in parallelism and time
  const dropped: DroppedRecord[] = []
  const verified: Signed<CapabilityRecord>[] = []
  const queue = [...candidates.values()]
  const workers = Array.from({ length: Math.min(opts.parallelism ?? 8, queue.length) }, async () => {
    for (let peer = queue.shift(); peer != null; peer = queue.shift()) {
      if (signal.aborted) { dropped.push({ peerId: peer.toString(), reason: 'not-found', detail: 'discovery timed out before this record was fetched' }); continue }
      const outcome = await fetchRecord(dht, peer, { signal: AbortSignal.any([signal, AbortSignal.timeout(opts.fetchTimeoutMs ?? 8_000)]) }, counter, opts.now, rejections)
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
  return { providers, indexKeys, candidates: candidates.size, dropped, removedBy, truncated, dhtMessages: counter.sent, elapsedMs: Date.now() - started }
}

function countSent (event: QueryEvent, counter: { sent: number }): void {
  if (event.name === 'SEND_QUERY') counter.sent++
}

async function findCandidates (dht: KadDHT, key: IndexKey, signal: AbortSignal, counter: { sent: number }): Promise<PeerId[]> {
  const found = new Map<string, PeerId>()
  try {
    for await (const event of dht.findProviders(indexCid(key), { signal })) {
      countSent(event, counter)
      if (event.name !== 'PROVIDER') continue
      for (const p of event.providers) found.set(p.id.toString(), p.id)
      if (found.size >= PROVIDERS_PER_KEY) break
    }
  } catch (err: any) {
    // a timed-out or failed lookup still yields what it found so far
    if (!signal.aborted && err?.name !== 'AbortError') throw err
  }
  return [...found.values()]
}

async function fetchRecord (dht: KadDHT, peer: PeerId, options: AbortOptions, counter: { sent: number }, now: number | undefined, rejections?: RejectionLookup): Promise<Signed<CapabilityRecord> | DroppedRecord> {
  const key = capabilityKey(peer)
  const peerId = peer.toString()
  let value: Uint8Array | undefined
  let invalidSeen = 0
  try {
    for await (const event of dht.get(key, options)) {
      countSent(event, counter)
      if (event.name === 'VALUE') value = event.value
      if (event.name === 'QUERY_ERROR' && /invalid record/i.test(event.error.message)) invalidSeen++
    }
  } catch (err: any) {
    if (value == null && err?.name !== 'NotFoundError') {
      return { peerId, reason: 'not-found', detail: options.signal?.aborted === true ? 'record fetch timed out' : `record fetch failed: ${String(err?.message ?? err)}` }
    }
  }
  if (value == null) {
    const why = rejections?.reasonFor(key)
    if (why != null) return { peerId, reason: why.reason, detail: why.message }
    if (invalidSeen > 0) return { peerId, reason: 'invalid', detail: `${invalidSeen} peer(s) returned a record that failed validation (expired or badly signed)` }
    return { peerId, reason: 'not-found', detail: 'no record stored under its key' }
  }
  try {
    return openCapabilityRecord(value, { key, now })
  } catch (err) {
    if (err instanceof CapabilityRecordError) return { peerId, reason: err.reason, detail: err.message }
    throw err
  }
}
