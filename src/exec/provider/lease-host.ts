/**
 * What the provider's job service asks of whoever hosts service leases (src/serve): a job
 * whose JobRequest carries `lease` is a long-lived server, run like any job on its slot, with
 * a port to listen on, health checks while it runs and a drain when it is preempted. Exec
 * defines the hooks; the serve room implements them (exec never imports serve).
 */
import type { RunHandle } from '../runners/index.js'

export interface LeaseRunHooks {
  /** variables the run gets besides the renter's (PORT: where the service must listen) */
  env: Record<string, string>
  /** the port the service listens on (PORT) */
  port: number
  /**
   * the run started: health-check it (at `handle.endpoint`, else 127.0.0.1), and cancel it through
   * `handle` when it fails
   */
  started(handle: RunHandle): void
  /** a preemption notice came (the run gets SIGTERM now): stop taking requests */
  preempting(notice: { graceMs: number, detail: string }): void
  /** the run ended: forget the lease */
  ended(): void
}

export interface LeaseHost {
  /** `priceMicroUsdPerGpuHour`: the award's clearing price (what the lease's usage statements bill at) */
  begin(lease: {
    leaseId: string
    renter: string
    healthPath: string
    priceMicroUsdPerGpuHour?: number
  }): Promise<LeaseRunHooks>
}
