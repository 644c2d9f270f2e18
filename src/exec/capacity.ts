/**
 * The slot scheduler as a service other rooms read (CAPACITY_SERVICE): free and preemptible
 * slots, and whether thermal or power limits hold. A pause (closed window, limit reached)
 * means no capacity at all.
 */
import { serviceCapabilities } from '@libp2p/interface'
import { CAPACITY_CAPABILITY, type CapacitySource } from '../capability/index.js'
import type { SlotScheduler } from './scheduler.js'

class SlotCapacity implements CapacitySource {
  readonly [Symbol.toStringTag] = CAPACITY_CAPABILITY
  readonly [serviceCapabilities]: string[] = [CAPACITY_CAPABILITY]

  constructor (private readonly scheduler: SlotScheduler) {}

  freeSlots (): number {
    const c = this.scheduler.capacity()
    return c.paused.length > 0 ? 0 : c.free
  }

  preemptibleSlots (): number {
    const c = this.scheduler.capacity()
    return c.paused.length > 0 ? 0 : c.preemptible
  }

  totalSlots (): number {
    return this.scheduler.capacity().total
  }

  thermalOk (): boolean {
    return !this.scheduler.capacity().paused.includes('thermal')
  }

  powerOk (): boolean {
    return !this.scheduler.capacity().paused.includes('power')
  }
}

/** The capacity service over `scheduler` (libp2p factory pattern); the job service runs on the same scheduler. */
export function slotCapacity (scheduler: SlotScheduler): () => CapacitySource {
  return () => new SlotCapacity(scheduler)
}
