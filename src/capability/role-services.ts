/**
 * What the capability room adds to a node (the composition root merges it in): the DHT
 * validator and selector for `/idlegrid/...` keys on every role, the discovery service on
 * every role, and the advertiser on providers that have a profile. Wiring only.
 */

import { CAPABILITY_SERVICE, capabilityAdvertiser } from './advertising/advertiser.js'
import { capabilityRecordValidator, DHT_NAMESPACE, selectCapabilityRecord } from './record/dht-rules.js'
import { DISCOVERY_SERVICE, capabilityDiscoveryService, RecordRejections } from './discovery/discovery-service.js'
import { detectGpus } from './gpu/gpu.js'
import type { ProviderProfile } from './policy/profile.js'
import type { NodeExtensions } from '../node/index.js'

export interface CapabilityServicesOptions {
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

export function capabilityServices (opts: CapabilityServicesOptions = {}): Required<NodeExtensions> {
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
      gpuCheck: opts.profile.simulated
        ? undefined
        : { detect: async () => await detectGpus({ nvidiaSmi }), intervalMs: opts.gpuCheckIntervalMs ?? 5 * 60_000 }
    })
  }
  return {
    services,
    dhtValidators: { [DHT_NAMESPACE]: capabilityRecordValidator((key, err) => { rejections.record(key, err) }) },
    dhtSelectors: { [DHT_NAMESPACE]: (key, records) => selectCapabilityRecord(key, records) }
  }
}
