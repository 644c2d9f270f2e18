/**
 * Capability: what a provider's GPUs and policy offer, signed into a DHT record, and how
 * renters find providers by constraint. The face other src/ folders use; tests import
 * module files directly.
 */

// SLA tiers and workload kinds, and the tier wire mappings
export { TIERS, jobTierFromWire, jobTierToWire } from './tiers.js'
export type { Tier } from './tiers.js'
export { WORKLOAD_KINDS, POLICY_FLAGS, imageAllowed } from './policy.js'
export type { WorkloadKind } from './policy.js'

// GPUs, availability, the provider profile
export { readGpuTelemetry, detectGpus, groupGpus } from './gpu.js'
export { parseSimulatedGpus } from './simulated-gpus.js'
export { gpuModelMatches } from './gpu-model.js'
export type { GpuTelemetry, DetectedGpu } from './gpu.js'
export { isAvailable, availableFor, localWeekMinute } from './availability.js'
export { loadProviderSetup } from './profile.js'
export type { ProviderProfile } from './profile.js'

// discovery
export { parseDiscoveryFilters } from './discovery-filters.js'
export type { DiscoveryFilters } from './discovery-filters.js'
export { discoverWith } from './discovery.js'
export { RecordCache } from './record-cache.js'
export type { DiscoveredProvider, DiscoveryResult } from './discovery.js'

// services
export { capabilityServices } from './services.js'
export { CAPABILITY_SERVICE, CAPABILITY_CAPABILITY } from './advertiser.js'
export type { CapabilityAdvertiser } from './advertiser.js'
export { DISCOVERY_SERVICE, DISCOVERY_CAPABILITY } from './discovery-service.js'

// a provider's GPU slots as other rooms read them (exec provides the service)
export { CAPACITY_SERVICE, CAPACITY_CAPABILITY } from './capacity.js'
export type { CapacitySource } from './capacity.js'
