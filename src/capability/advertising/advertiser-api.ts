/**
 * The advertiser as the node and its callers see it: its service name, its options, the
 * report of a publish round, its events and its interface (advertiser.ts implements it).
 */

import type { DetectedGpu } from '../gpu/gpu.js'
import type { ProviderProfile } from '../policy/profile.js'
import type { CapabilityRecord } from '../../../protocols/capability.js'
import type { Signed } from '../../identity/index.js'
import type { TypedEventTarget } from '@libp2p/interface'

/** The advertiser's name in a node's services, and what it provides to `serviceDependencies`. */
export const CAPABILITY_SERVICE = 'capability'
export const CAPABILITY_CAPABILITY = '@idlegrid/capability'

export interface AdvertiserInit {
  profile: ProviderProfile
  /** record lifetime (default 30 min) */
  recordTtlMs?: number
  /** refresh after this fraction of the lifetime (default 0.5) */
  refreshFraction?: number
  /** attempts per publish round (default 5) */
  attempts?: number
  /** bound on one put or provide (default 45 s: a node's first DHT query waits for its initial self-query) */
  operationTimeoutMs?: number
  /** first retry delay, doubled each time (default 500 ms) */
  retryDelayMs?: number
  /** job runner the record names ("docker" / "process"; default none) */
  runner?: string
  /** after a round that saw under k DHT peers, how often to check whether to publish again (default 30 s) */
  earlyRepublishMs?: number
  /**
   * re-detects the GPUs every `intervalMs` (real GPUs only); a change in the GPU set
   * republishes at once with a new sequence
   */
  gpuCheck?: { detect: () => Promise<DetectedGpu[]>, intervalMs: number }
}

export interface PublishReport {
  /** record sequence published */
  sequence: bigint
  /**
   * peers that acknowledged the put: idlegrid nodes acknowledge only a record they stored
   * (src/node/dht-put-guard.ts)
   */
  stored: number
  /** index keys provided to at least one peer, of those wanted */
  provided: number
  wanted: number
  at: number
}

export interface CapabilityAdvertiserEvents {
  /** a record was built for a new profile (before it is published) */
  change: CustomEvent<ProviderProfile>
  /** a publish round reached at least one peer */
  published: CustomEvent<PublishReport>
}

export interface CapabilityAdvertiser {
  /** the profile advertised now */
  profile(): ProviderProfile
  /** the current signed record (its envelope is the DHT value) */
  current(): Signed<CapabilityRecord>
  /** the last publish round that reached the network, if any */
  lastPublished(): PublishReport | undefined
  /** a publish round (put and index keys, DHT walks) is running now */
  publishing(): boolean
  /** replaces the profile: bumps the sequence and republishes at once */
  update(profile: ProviderProfile): Promise<PublishReport | undefined>
  /** publishes the current record now (a refresh with a new expiry) */
  republish(): Promise<PublishReport | undefined>
  readonly events: TypedEventTarget<CapabilityAdvertiserEvents>
}

export const DEFAULT_RECORD_TTL_MS = 30 * 60_000
