/** What the submit room adds to a node (the composition root merges it in): renters run jobs. */
import { submitService, SUBMIT_SERVICE, type SubmitServiceInit } from './service.js'
import type { Role } from '../config/index.js'
import type { ServiceFactory } from '../node/index.js'

export interface SubmitServicesOptions extends SubmitServiceInit {
  role: Role
}

export function submitServices (opts: SubmitServicesOptions): Record<string, ServiceFactory> {
  if (opts.role !== 'renter') return {}
  return {
    [SUBMIT_SERVICE]: submitService({
      defaultBaseDir: opts.defaultBaseDir,
      bootstrap: opts.bootstrap,
      receiptAckTimeoutMs: opts.receiptAckTimeoutMs
    })
  }
}
