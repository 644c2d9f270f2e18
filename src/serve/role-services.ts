/** What the serve room adds to a node: providers host leases, renters deploy services. */
import { ServeHost, type HostOptions } from './host.js'
import { deploymentsService, DEPLOYMENTS_SERVICE, serveHostService, SERVE_HOST_SERVICE, type DeploymentsInit } from './service.js'
import type { Role } from '../config/index.js'
import type { ServiceFactory } from '../node/index.js'

export interface ServeServicesOptions {
  role: Role
  host?: HostOptions
  deployments?: DeploymentsInit
}

/** The services, and on a provider the lease host its job service must be given (exec's `leases`). */
export function serveServices (opts: ServeServicesOptions): {
  services: Record<string, ServiceFactory>
  host?: ServeHost
} {
  if (opts.role === 'provider') {
    const host = new ServeHost(opts.host)
    return {
      services: {
        [SERVE_HOST_SERVICE]: serveHostService(host, {
          usageIntervalMs: opts.host?.usageIntervalMs
        }) as ServiceFactory
      },
      host
    }
  }
  if (opts.role === 'renter') return { services: { [DEPLOYMENTS_SERVICE]: deploymentsService(opts.deployments) as ServiceFactory } }
  return { services: {} }
}
