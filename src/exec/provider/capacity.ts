/**
 * The slot scheduler as a service other rooms read (CAPACITY_SERVICE): free and preemptible
 * slots, whether thermal or power limits hold, and the disk budget jobs in progress leave. A pause
 * (closed window, limit reached) means no capacity at all.
 */
import { serviceCapabilities } from '@libp2p/interface'
import { CAPACITY_CAPABILITY, type CapacitySource } from '../../capability/index.js'
import type { DiskBudget } from './admission.js'
import type { SlotScheduler } from './scheduler.js'
import type { InputCache } from '../../cache/index.js'

/** The job service's disk budget and output bound, for the bid engine's disk check. */
export interface DiskView {
  budget: DiskBudget
  /** bytes of outputs each job may leave (the job service's maxOutputBytes) */
  outputBoundBytes: number
}

/** Public cache entries a record names at most (CapabilityRecord.cached_datasets holds 64, the policy's list first). */
const ADVERTISED_INPUTS = 64

class SlotCapacity implements CapacitySource {
  readonly [Symbol.toStringTag] = CAPACITY_CAPABILITY
  readonly [serviceCapabilities]: string[] = [CAPACITY_CAPABILITY]
  readonly freeDiskBytes?: () => number
  readonly jobDiskBytes?: (inputBytes: number) => number
  readonly heldInputs?: (renter: string, digests: readonly Uint8Array[]) => { count: number, bytes: number }
  readonly advertisedInputs?: () => Uint8Array[]
  readonly onAdvertisedInputsChange?: (listener: () => void) => () => void

  constructor (private readonly scheduler: SlotScheduler, disk?: DiskView, cache?: Pick<InputCache, 'held' | 'publicDigests' | 'onPublicChange'>) {
    if (disk != null) {
      this.freeDiskBytes = () => disk.budget.free()
      this.jobDiskBytes = (inputBytes) => inputBytes + disk.outputBoundBytes
    }
    if (cache != null) {
      this.heldInputs = (renter, digests) => cache.held(renter, digests)
      this.advertisedInputs = () => cache.publicDigests(ADVERTISED_INPUTS)
      this.onAdvertisedInputsChange = (listener) => cache.onPublicChange(listener)
    }
  }

  freeSlots (renter?: string): number {
    if (renter == null) {
      const c = this.scheduler.capacity()
      return c.paused.length > 0 ? 0 : c.free
    }
    return this.scheduler.capacity().paused.length > 0 ? 0 : this.scheduler.freeCountFor(renter)
  }

  preemptibleSlots (): number {
    const c = this.scheduler.capacity()
    return c.paused.length > 0 ? 0 : c.preemptible
  }

  totalSlots (): number {
    return this.scheduler.capacity().total
  }

  busySlots (): number {
    return this.scheduler.capacity().busy
  }

  thermalOk (): boolean {
    return !this.scheduler.capacity().paused.includes('thermal')
  }

  powerOk (): boolean {
    return !this.scheduler.capacity().paused.includes('power')
  }
}

/**
 * The capacity service over `scheduler` (and `disk`, shared with the job service too) (libp2p
 * factory pattern); the job service runs on the same scheduler.
 */
export function slotCapacity (scheduler: SlotScheduler, disk?: DiskView, cache?: Pick<InputCache, 'held' | 'publicDigests' | 'onPublicChange'>): () => CapacitySource {
  return () => new SlotCapacity(scheduler, disk, cache)
}
