/**
 * What a provider's GPU slots can take right now: the contract between the room that owns
 * the slots (exec's scheduler provides it as a service) and the rooms that read it (the
 * market's bid engine, the ledger's uptime summaries). It lives here, with the GPUs and the
 * policy, so that neither reader imports the room that runs jobs.
 */
export interface CapacitySource {
  /**
   * `renter` (its peer id bytes, hex): as that renter sees it (slots held for its own accepted
   * awards count as free)
   */
  freeSlots(renter?: string): number
  /** slots running preemptible (bronze) work that gold and silver jobs may displace */
  preemptibleSlots(): number
  totalSlots(): number
  /** slots running a job, paused or not (heartbeats report it; absent: total minus free) */
  busySlots?(): number
  /** false while any GPU is above the provider's temperature limit */
  thermalOk(): boolean
  /** false while the GPUs draw at the provider's power limit (default true) */
  powerOk?(): boolean
  /** bytes of the provider's disk budget that jobs in progress leave free (absent: not bounded) */
  freeDiskBytes?(): number
  /** bytes a job with `inputBytes` of declared inputs reserves: those plus the provider's output bound */
  jobDiskBytes?(inputBytes: number): number
  /**
   * Of `digests`, those the provider's input cache holds that `renter` (peer id bytes, hex) may
   * reuse, and their bytes: the bid's cached_datasets and cached_bytes (absent: no cache)
   */
  heldInputs?(renter: string, digests: readonly Uint8Array[]): { count: number, bytes: number }
  /** digests of the input cache's public entries, largest first: the record names them (cached_datasets) */
  advertisedInputs?(): Uint8Array[]
  /** calls `listener` when that set changes; returns the unsubscribe */
  onAdvertisedInputsChange?(listener: () => void): () => void
}

/** The capacity service's name in a node's services, and what it provides to `serviceDependencies`. */
export const CAPACITY_SERVICE = 'capacity'
export const CAPACITY_CAPABILITY = '@idlegrid/capacity'
