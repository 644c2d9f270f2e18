/**
 * The slot scheduler as the market's bid engine sees it: free and preemptible slots, and
 * whether thermal or power limits hold. A pause (closed window, limit reached) means no
 * capacity at all.
 */
import type { SlotScheduler } from './scheduler.js'
import type { CapacitySource } from '../market/index.js'

export function schedulerCapacity (scheduler: SlotScheduler): CapacitySource {
  return {
    freeSlots: () => { const c = scheduler.capacity(); return c.paused.length > 0 ? 0 : c.free },
    preemptibleSlots: () => { const c = scheduler.capacity(); return c.paused.length > 0 ? 0 : c.preemptible },
    totalSlots: () => scheduler.capacity().total,
    thermalOk: () => !scheduler.capacity().paused.includes('thermal'),
    powerOk: () => !scheduler.capacity().paused.includes('power')
  }
}
