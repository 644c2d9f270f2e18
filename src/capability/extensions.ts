/**
 * What the capability idea adds to a node (the composition root merges it in): the DHT
 * validator and selector for `/idlegrid/...` keys on every role, the discovery service on
 * every role, and the advertiser on providers that have a profile.
 */

import { capabilityAdvertiser } from './advertiser.js'
import { detectGpus } from './gpu.js'
import { capabilityDiscoveryService, RecordRejections } from './discovery-service.js'
import { capabilityRecordValidator, DHT_NAMESPACE, selectCapabilityRecord } from './record.js'
import type { ProviderProfile } from './profile.js'
import type { NodeExtensions } from '../node/index.js'

export interface CapabilityExtensionOptions {
  /** the provider's profile; without it the node does not advertise */
  profile?: ProviderProfile
  /** capability record lifetime (default 30 min) */
  recordTtlMs?: number
  /** job runner named in the record */
  runner?: string
  /** nvidia-smi to re-detect real GPUs with (default on PATH) */
  nvidiaSmi?: string
  /** how often real GPUs are re-detected (default 5 min) */
  gpuCheckIntervalMs?: number
}

/** Service names, so other services can ask for them in their components. */
export const CAPABILITY_SERVICE = 'capability'
export const DISCOVERY_SERVICE = 'capabilityDiscovery'
/** What the capability services provide, for other services' `serviceDependencies`. */
export const CAPABILITY_CAPABILITY = '@idlegrid/capability'
export const DISCOVERY_CAPABILITY = '@idlegrid/discovery'

export function capabilityExtensions (opts: CapabilityExtensionOptions = {}): Required<NodeExtensions> {
  const rejections = new RecordRejections()
  const services: Record<string, (components: any) => unknown> = {
    [DISCOVERY_SERVICE]: capabilityDiscoveryService({ rejections })
  }
  if (opts.profile != null) {
    const nvidiaSmi = opts.nvidiaSmi
    services[CAPABILITY_SERVICE] = capabilityAdvertiser({
      profile: opts.profile,
      recordTtlMs: opts.recordTtlMs,
      runner: opts.runner,
      // simulated GPUs never change; real ones may (a card lost or added)
      gpuCheck: opts.profile.simulated ? undefined : { detect: async () => await detectGpus({ nvidiaSmi }), intervalMs: opts.gpuCheckIntervalMs ?? 5 * 60_000 }
    })
  }
  return {
    services,
    dhtValidators: { [DHT_NAMESPACE]: capabilityRecordValidator((key, err) => { rejections.record(key, err) }) },
    dhtSelectors: { [DHT_NAMESPACE]: (key, records) => selectCapabilityRecord(key, records) }
  }
}
