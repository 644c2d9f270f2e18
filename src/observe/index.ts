/**
 * Observe: what an operator looks at. Prometheus metrics (`--metrics`: libp2p's own and the
 * market's, job path's and ledger's, bounded labels), the dashboard (`--dashboard`: pages in
 * web/dashboard and their JSON, behind a token) and the observer that feeds both.
 */
export { OBSERVE_OPTIONS, observeSettings, prepareMetrics, startObservability } from './start.js'
export type { PreparedMetrics, Observability } from './start.js'
export { loadDashboardToken, TOKEN_FILE } from './dashboard-auth.js'
export { liveView, formatBytes } from './progress.js'
