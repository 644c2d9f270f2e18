/**
 * The discovery service every node runs: answers the `capability.discover` control call
 * (what `idlegrid market ls` uses) and remembers why the DHT validator refused records,
 * so discovery can say why a candidate was dropped.
 */

import { discoverWith, parseDiscoveryFilters, type DiscoveryResult, type RejectionLookup } from './discovery.js'
import type { CapabilityRecordError } from './record.js'
import type { ControlHandler } from '../control/index.js'
import type { ComponentLogger, Logger } from '@libp2p/interface'
import type { KadDHT } from '@libp2p/kad-dht'
import { asNumber } from '../config/validate.js'
import { toString as uint8ArrayToString } from 'uint8arrays/to-string'

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
  logger: ComponentLogger
}

export interface CapabilityDiscovery extends RejectionLookup {
  controlHandlers(): Record<string, ControlHandler>
}

/** Longest discovery a control call may ask for. */
const MAX_DISCOVERY_TIMEOUT_MS = 120_000

class DiscoveryService implements CapabilityDiscovery {
  private readonly components: DiscoveryComponents
  private readonly rejections: RecordRejections
  private readonly log: Logger

  constructor (components: DiscoveryComponents, init: DiscoveryServiceInit) {
    this.components = components
    this.rejections = init.rejections
    this.log = components.logger.forComponent('idlegrid:discovery')
  }

  reasonFor (key: Uint8Array): CapabilityRecordError | undefined {
    return this.rejections.reasonFor(key)
  }

  controlHandlers (): Record<string, ControlHandler> {
    return {
      /** params: { filters: {gpus, minVramGb, region, residency, tier, workload, availableNow, excludeSimulated, datasets}, timeoutMs } */
      'capability.discover': async (params, _emit, signal): Promise<DiscoveryResult> => {
        const raw = params.filters != null && typeof params.filters === 'object' ? params.filters as Record<string, unknown> : {}
        const filters = parseDiscoveryFilters(raw)
        const timeoutMs = asNumber(params.timeoutMs ?? 20_000, 'timeout', { min: 100, max: MAX_DISCOVERY_TIMEOUT_MS })
        const result = await discoverWith(this.components.dht, filters, { timeoutMs, signal }, this)
        this.log('discovery: %d of %d candidates matched in %d ms', result.providers.length, result.candidates, result.elapsedMs)
        return result
      }
    }
  }
}

/** The discovery service (libp2p factory pattern); name it `capabilityDiscovery`. */
export function capabilityDiscoveryService (init: DiscoveryServiceInit): (components: DiscoveryComponents) => CapabilityDiscovery {
  return (components) => new DiscoveryService(components, init)
}
