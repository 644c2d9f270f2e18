/**
 * Capability: what a provider's GPUs and policy offer, signed into a DHT record, and how
 * renters find providers by constraint. Other folders import only from here.
 */

// GPUs
export {
  detectGpus, readGpuTelemetry, parseNvidiaSmi, parseTelemetry, parseSimulatedGpu, parseSimulatedGpus,
  groupGpus, normaliseGpuModel, gpuModelMatches, gpuModelTokens, GpuDetectionError, NVIDIA_SMI_NOT_FOUND
} from './gpu.js'
export type { DetectedGpu, GpuGroup, GpuTelemetry, DetectOptions } from './gpu.js'

// policy, residency and availability
export { parsePolicy, applyPolicyFlags, imageAllowed, residencyOf, POLICY_FLAGS, POLICY_DEFAULTS, TIERS, WORKLOAD_KINDS } from './policy.js'
export type { ProviderPolicy, Tier, WorkloadKind } from './policy.js'
export { isAvailable, availableFor, nextChange, parseWindow, parseWindows, formatWindow, isValidTimeZone, localTimeFormat } from './windows.js'
export type { AvailabilityWindow, WindowInput } from './windows.js'

// the provider profile (policy + GPUs)
export { loadProviderProfile, loadProviderSetup, providerProfile, parseRecordTtlSeconds, DEFAULT_RECORD_TTL_SECONDS, RECORD_TTL_BOUNDS } from './profile.js'
export type { ProviderProfile, ProviderSetup, LoadProfileOptions } from './profile.js'

// signed records and DHT rules
export {
  buildCapabilityRecord, sealCapabilityRecord, openCapabilityRecord, capabilityKey, capabilityKeyText,
  peerIdFromCapabilityKey, capabilityRecordValidator, selectCapabilityRecord, compareRecords, tierFromWire,
  CapabilityRecordError, MAX_RECORD_BYTES, MAX_RECORD_VALUE_BYTES, DHT_NAMESPACE
} from './record.js'
export type { VerifiedCapabilityRecord, CapabilityRejection, BuildRecordOptions, OpenRecordOptions } from './record.js'
export { indexCid, indexKeyText, recordIndexKeys, vramAtLeast, vramBucketsFor, vramBucketFor, gpuIndexValues, gpuIndexValue, VRAM_BUCKETS_GB } from './index-keys.js'
export type { IndexKey, IndexDimension } from './index-keys.js'

// services and discovery
export { capabilityAdvertiser, DEFAULT_RECORD_TTL_MS } from './advertiser.js'
export type { CapabilityAdvertiser, AdvertiserInit, PublishReport } from './advertiser.js'
export { capabilityDiscoveryService, RecordRejections } from './discovery-service.js'
export type { CapabilityDiscovery } from './discovery-service.js'
export { discoverProviders, discoverWith, parseDiscoveryFilters, failedFilter, recordAvailableAt, describeRecord, indexKeysFor } from './discovery.js'
export type { DiscoveryFilters, DiscoveryOptions, DiscoveryResult, DiscoveredProvider, DiscoveredGpu, DroppedRecord, DropReason } from './discovery.js'
export { capabilityExtensions, CAPABILITY_SERVICE, DISCOVERY_SERVICE, CAPABILITY_CAPABILITY, DISCOVERY_CAPABILITY } from './extensions.js'
export type { CapabilityExtensionOptions } from './extensions.js'
