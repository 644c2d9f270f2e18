/**
 * Serve: always-on services (issue 17). Leases (inference jobs marked as such) run on
 * providers beside batch jobs; a renter's deployment keeps its replicas at size and a gateway
 * routes each HTTP request to one of them over /idlegrid/serve/1.1.0.
 */
export { serveServices } from './services.js'
export { ServeHost, HOST_DEFAULTS, type HostOptions, type HostedLease } from './host.js'
export { Deployments, DEPLOYMENTS_SERVICE, SERVE_HOST_SERVICE } from './service.js'
export { ServeError, isForwardError, isUsageError } from './errors.js'
export { Deployment, type DeploymentEvent } from './deployment.js'
export { Gateway } from './gateway.js'
export { ReplicaPool, type Replica } from './router.js'
export { forward } from './forward.js'
export { ServeStreamPool, STREAM_POOL_DEFAULTS } from './stream-pool.js'
export { loadServiceFile, parseServiceSpec, leaseJobSpec, serviceInputs, type ServiceSpec } from './service-file.js'
