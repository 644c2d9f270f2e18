/**
 * Serve: always-on services (issue 17). Leases (inference jobs marked as such) run on
 * providers beside batch jobs; a renter's deployment keeps its replicas at size and a gateway
 * routes each HTTP request to one of them over /idlegrid/serve/1.1.0.
 */
export { serveServices } from './role-services.js'
export { ServeHost } from './host.js'
export { SERVE_HOST_SERVICE } from './service.js'
export { isForwardError, isUsageError } from './errors.js'
export { Gateway } from './gateway.js'
export { ReplicaPool } from './router.js'
export { forward } from './forward.js'
export { ServeStreamPool } from './stream-pool.js'
export { loadServiceFile, parseServiceSpec, leaseJobSpec } from './service-file.js'
