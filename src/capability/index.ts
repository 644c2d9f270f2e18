/**
 * Capability: what a provider's GPUs and policy offer, signed into a DHT record, and how
 * renters find providers by constraint. The face other src/ folders use; tests import
 * module files directly. Inside: gpu/ (detection, models, the capacity contract), policy/
 * (policy, tiers, windows, the profile), record/ (the signed record, its key, fetch, cache
 * and DHT rules), advertising/ (the provider keeping it published) and discovery/ (finding
 * providers by constraint).
 */

// SLA tiers and workload kinds, and the tier wire mappings
export { TIERS, jobTierFromWire, jobTierToWire } from './policy/tiers.js'
export type { Tier } from './policy/tiers.js'
export { WORKLOAD_KINDS, POLICY_FLAGS, imageAllowed, parsePolicy } from './policy/policy.js'
export type { WorkloadKind } from './policy/policy.js'

// GPUs, availability, the provider profile
export { readGpuTelemetry, detectGpus, groupGpus } from './gpu/gpu.js'
export { parseSimulatedGpus } from './gpu/simulated-gpus.js'
export { gpuModelMatches } from './gpu/gpu-model.js'
export type { GpuTelemetry, DetectedGpu } from './gpu/gpu.js'
export { isAvailable, availableFor, localWeekMinute, nextChange, isValidTimeZone } from './policy/availability.js'
export { loadProviderSetup, providerProfile } from './policy/profile.js'
export type { ProviderProfile } from './policy/profile.js'

// discovery
export { parseDiscoveryFilters } from './discovery/discovery-filters.js'
export type { DiscoveryFilters } from './discovery/discovery-filters.js'
export { discoverWith } from './discovery/discovery.js'
export { RecordCache } from './record/record-cache.js'
export type { DiscoveredProvider, DiscoveryResult } from './discovery/discovery.js'

// services
export { capabilityServices } from './role-services.js'
export { CAPABILITY_SERVICE, CAPABILITY_CAPABILITY } from './advertising/advertiser.js'
export type { CapabilityAdvertiser } from './advertising/advertiser.js'
export { DISCOVERY_SERVICE } from './discovery/discovery-service.js'

// a provider's GPU slots as other rooms read them (exec provides the service)
export { CAPACITY_SERVICE, CAPACITY_CAPABILITY } from './gpu/capacity.js'
export type { CapacitySource } from './gpu/capacity.js'
