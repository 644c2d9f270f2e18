/**
 * Owners who offer only their idle windows take their GPUs back when a window ends. The
 * provider's own rule (exec/provider/conditions.ts → SlotScheduler.setPause('window')) is driven at
 * each flip of its windows: a closing window preempts its bronze work and refuses new market
 * work; gold and silver work runs on (the scheduler never preempts it; the bid engine only bid
 * where the job's estimate fits the window, so only the award's delay can carry it past).
 * The owner's own work still runs on its GPUs while the window is closed.
 */

import { isAvailable, nextChange } from '../../capability/index.js'
import { SIM_EPOCH_MS } from '../report/summary.js'
import type { SimProvider } from '../model/provider.js'

/** When the provider's availability next flips, in virtual time, or undefined (never within 8 days). */
export function nextFlip (p: SimProvider, now: number): number | undefined {
  const { windows, timeZone } = p.profile.policy.availability
  const at = nextChange(windows, timeZone, SIM_EPOCH_MS + now)
  return at == null ? undefined : at - SIM_EPOCH_MS
}

/** Whether the provider's window is open at virtual time `now`. */
export function windowOpen (p: SimProvider, now: number): boolean {
  const { windows, timeZone } = p.profile.policy.availability
  return isAvailable(windows, timeZone, SIM_EPOCH_MS + now)
}

/** Sets the scheduler's window pause (bronze work is told to stop when it closes). */
export function applyWindow (p: SimProvider, open: boolean): void {
  p.scheduler.setPause('window', !open, 'outside the availability window')
}

/**
 * Reserves for the owner's own work even while the window is closed (the pause keeps market
 * work out, not the owner): the pause is lifted for the reservation and set again.
 */
export function whileOpen<T> (p: SimProvider, closed: boolean, reserve: () => T): T {
  if (!closed) return reserve()
  applyWindow(p, true)
  try {
    return reserve()
  } finally {
    applyWindow(p, false)
  }
}
