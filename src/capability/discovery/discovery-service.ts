/**
 * The discovery service every node runs: finds providers by constraint (`discover`, with
 * records asked of the providers themselves and cached), answers the `capability.discover`
 * control call (what `idlegrid market ls` uses) and remembers why the DHT validator refused
 * records, so discovery can say why a candidate was dropped.
 */

import { serviceCapabilities } from '@libp2p/interface'
import { toString as uint8ArrayToString } from 'uint8arrays/to-string'
import { asNumber } from '../../config/index.js'
import { parseDiscoveryFilters, type DiscoveryFilters } from './discovery-filters.js'
import { discoverWith, type DiscoveryOptions, type DiscoveryResult, type RejectionLookup } from './discovery.js'
import { RecordCache } from '../record/record-cache.js'
import { DhtPeerBook } from './dht-peers.js'
import { askProvidersWith, type AskProviders } from './kad-providers.js'
import { dialAddrsFor } from '../record/record-fetch.js'
import { PROTOCOL } from '../../../protocols/ids.js'
import type { CapabilityRecordError } from '../errors.js'
import { CONTROL_HANDLERS, type ControlHandler } from '../../control/index.js'
import type { ComponentLogger, IdentifyResult, Libp2pEvents, Logger, Startable, TypedEventTarget } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'
import type { KadDHT } from '@libp2p/kad-dht'

/** The discovery service's name in a node's services, and what it provides to `serviceDependencies`. */
export const DISCOVERY_SERVICE = 'capabilityDiscovery'
export const DISCOVERY_CAPABILITY = '@idlegrid/discovery'

/** Remembered rejections: bounded in count and age. */
const MAX_REJECTIONS = 1024
const REJECTION_TTL_MS = 10 * 60_000

/** A bounded memory of the latest validator rejection per DHT key. */
export class RecordRejections implements RejectionLookup {
  private readonly entries = new Map<string, { error: CapabilityRecordError, at: number }>()

  record (key: Uint8Array, error: CapabilityRecordError): void {
    const id = uint8ArrayToString(key)
    this.entries.delete(id)
    this.entries.set(id, { error, at: Date.now() })
    if (this.entries.size > MAX_REJECTIONS) this.entries.delete(this.entries.keys().next().value as string)
  }

  reasonFor (key: Uint8Array): CapabilityRecordError | undefined {
    const entry = this.entries.get(uint8ArrayToString(key))
    if (entry == null || Date.now() - entry.at > REJECTION_TTL_MS) return undefined
    return entry.error
  }
}

export interface DiscoveryServiceInit {
  rejections: RecordRejections
}

interface DiscoveryComponents {
  dht: KadDHT
  connectionManager: ConnectionManager
  logger: ComponentLogger
  events: TypedEventTarget<Libp2pEvents>
}

export interface CapabilityDiscovery extends RejectionLookup {
  /** providers matching `filters`, found through this node's DHT */
  discover(filters: DiscoveryFilters, opts?: DiscoveryOptions): Promise<DiscoveryResult>
  [CONTROL_HANDLERS](): Record<string, ControlHandler>
}

/** Longest discovery a control call may ask for. */
const MAX_DISCOVERY_TIMEOUT_MS = 120_000

class DiscoveryService implements CapabilityDiscovery, Startable {
  readonly [serviceCapabilities] = [DISCOVERY_CAPABILITY]
  private readonly components: DiscoveryComponents
  private readonly rejections: RecordRejections
  /** records verified by earlier queries, asked again after DiscoveryOptions.maxRecordAgeMs */
  private readonly cache = new RecordCache()
  /** DHT servers identify told us of: index keys are asked of the closest directly */
  private readonly book = new DhtPeerBook()
  private readonly ask: AskProviders
  private readonly log: Logger

  constructor (components: DiscoveryComponents, init: DiscoveryServiceInit) {
    this.components = components
    this.rejections = init.rejections
    this.log = components.logger.forComponent('idlegrid:discovery')
    this.ask = askProvidersWith(components.connectionManager)
  }

  private readonly onIdentify = (e: CustomEvent<IdentifyResult>): void => {
    const { peerId, protocols, listenAddrs } = e.detail
    if (protocols.includes(PROTOCOL.kad)) this.book.confirm(peerId, dialAddrsFor(peerId, listenAddrs))
    else this.book.forget(peerId)
  }

  start (): void {
    this.components.events.addEventListener('peer:identify', this.onIdentify)
  }

  stop (): void {
    this.components.events.removeEventListener('peer:identify', this.onIdentify)
  }

  reasonFor (key: Uint8Array): CapabilityRecordError | undefined {
    return this.rejections.reasonFor(key)
  }

  async discover (filters: DiscoveryFilters, opts: DiscoveryOptions = {}): Promise<DiscoveryResult> {
    return await discoverWith(this.components.dht, filters, opts, {
      rejections: this.rejections,
      direct: {
        connectionManager: this.components.connectionManager,
        cache: this.cache,
        book: this.book,
        ask: this.ask
      }
    })
  }

  [CONTROL_HANDLERS] (): Record<string, ControlHandler> {
    return {
      /**
       * params: { filters: {gpus, minVramGb, region, residency, tier, workload, availableNow,
       * excludeSimulated, datasets}, timeoutMs }
       */
      'capability.discover': async (params, _emit, signal): Promise<DiscoveryResult> => {
        const raw = params.filters != null && typeof params.filters === 'object' ? params.filters as Record<string, unknown> : {}
        const filters = parseDiscoveryFilters(raw)
        const timeoutMs = asNumber(params.timeoutMs ?? 20_000, 'timeout', { min: 100, max: MAX_DISCOVERY_TIMEOUT_MS })
        const result = await this.discover(filters, { timeoutMs, signal })
        this.log('discovery: %d of %d candidates matched in %d ms', result.providers.length, result.candidates, result.elapsedMs)
        return result
      }
    }
  }
}

/** The discovery service (libp2p factory pattern), named DISCOVERY_SERVICE. */
export function capabilityDiscoveryService (
  init: DiscoveryServiceInit
): (components: DiscoveryComponents) => CapabilityDiscovery {
  return (components) => new DiscoveryService(components, init)
}
