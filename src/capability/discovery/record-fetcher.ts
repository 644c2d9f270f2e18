/**
 * One discovery query's record fetching (discovery.ts): each candidate's record from the cache,
 * else from the provider itself, else from the DHT (`get`, counted against the query's DHT
 * messages). Every record, wherever it came from, is opened again (signature, signer =
 * candidate, expiry); a record that fails says why it was dropped.
 */

import { isFetchFailure, isRecordRejection } from '../errors.js'
import { openCapabilityRecord } from '../record/record.js'
import { fetchRecordDirect } from '../record/record-fetch.js'
import { capabilityKey } from '../record/record-key.js'
import type { DirectFailure, DirectRecords, DiscoveryAids, DiscoveryOptions, DroppedRecord, RejectionLookup } from './discovery.js'
import type { Candidate, MessageCounter } from './provider-lookup.js'
import type { CapabilityRecord } from '../../../protocols/capability.js'
import type { Signed } from '../../identity/index.js'
import type { KadDHT, QueryEvent } from '@libp2p/kad-dht'

/** One query's record fetching: cache → the provider → the DHT, each result opened again. */
export class RecordFetcher {
  readonly from = { cache: 0, direct: 0, dht: 0 }
  readonly directFailures: DirectFailure[] = []

  private readonly dht: KadDHT
  private readonly opts: DiscoveryOptions
  private readonly signal: AbortSignal
  private readonly counter: MessageCounter
  private readonly rejections?: RejectionLookup
  private readonly direct?: DirectRecords

  constructor (
    init: { dht: KadDHT, opts: DiscoveryOptions, signal: AbortSignal, counter: MessageCounter } & DiscoveryAids
  ) {
    this.dht = init.dht
    this.opts = init.opts
    this.signal = init.signal
    this.counter = init.counter
    this.rejections = init.rejections
    this.direct = init.direct
  }

  async record (c: Candidate): Promise<Signed<CapabilityRecord> | DroppedRecord> {
    const id = c.id.toString()
    const direct = this.direct
    if (direct != null) {
      const cached = direct.cache.fresh(id, this.now(), this.opts.maxRecordAgeMs ?? 15_000)
      if (cached != null) {
        try {
          const record = openCapabilityRecord(cached, { peerId: c.id, now: this.now() })
          this.from.cache++
          return record
        } catch {
          direct.cache.drop(id)
        }
      }
      try {
        // no addresses from the DHT: the peer store's (a connected peer needs none)
        const record = await fetchRecordDirect(direct.connectionManager, c.id, {
          addrs: c.addrs,
          signal: AbortSignal.any([this.signal, AbortSignal.timeout(this.opts.directTimeoutMs ?? 3_000)]),
          now: this.opts.now
        })
        direct.cache.put(record, this.now())
        this.from.direct++
        return record
      } catch (err) {
        if (!isFetchFailure(err)) throw err
        this.directFailures.push({ peerId: id, reason: err.reason, detail: err.message })
        if (this.signal.aborted) return { peerId: id, reason: 'not-found', detail: `discovery timed out (${err.message})` }
      }
    }
    const outcome = await fetchFromDht(this.dht, c, {
      signal: AbortSignal.any([this.signal, AbortSignal.timeout(this.opts.fetchTimeoutMs ?? 8_000)]),
      counter: this.counter,
      now: this.opts.now,
      rejections: this.rejections
    })
    if ('message' in outcome) {
      direct?.cache.put(outcome, this.now())
      this.from.dht++
    }
    return outcome
  }

  private now (): number {
    return this.opts.now ?? Date.now()
  }
}

function countSent (event: QueryEvent, counter: MessageCounter): void {
  if (event.name === 'SEND_QUERY') counter.sent++
}

interface DhtFetch {
  signal: AbortSignal
  /** the query's DHT messages, counted */
  counter: MessageCounter
  /** the clock records are judged at (default now) */
  now?: number
  rejections?: RejectionLookup
}

async function fetchFromDht (
  dht: KadDHT,
  c: Candidate,
  options: DhtFetch
): Promise<Signed<CapabilityRecord> | DroppedRecord> {
  const { counter, now, rejections } = options
  const key = capabilityKey(c.id)
  const peerId = c.id.toString()
  let value: Uint8Array | undefined
  let invalidSeen = 0
  try {
    for await (const event of dht.get(key, { signal: options.signal })) {
      countSent(event, counter)
      if (event.name === 'VALUE') value = event.value
      if (event.name === 'QUERY_ERROR' && /invalid record/i.test(event.error.message)) invalidSeen++
    }
  } catch (err: any) {
    if (value == null && err?.name !== 'NotFoundError') {
      return { peerId, reason: 'not-found', detail: options.signal.aborted ? 'record fetch timed out' : `record fetch failed: ${String(err?.message ?? err)}` }
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
    if (isRecordRejection(err)) return { peerId, reason: err.reason, detail: err.message }
    throw err
  }
}
