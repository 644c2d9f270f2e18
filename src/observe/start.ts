/**
 * What a long-running role starts besides its node when asked: `--metrics HOST:PORT` and
 * `--dashboard HOST:PORT` (both off by default; a bare PORT means 127.0.0.1).
 */
import { loadDashboardToken } from './dashboard-auth.js'
import { DashboardApi } from './dashboard-api.js'
import { serveDashboard } from './dashboard-server.js'
import { parseHostPort, type HttpAddress, type LocalHttpServer } from './http-bounds.js'
import { IdlegridMetrics } from './metrics.js'
import { libp2pPrometheus, serveMetrics } from './metrics-server.js'
import { NodeObserver } from './recorder.js'
import type { ControlHandler } from '../control/index.js'
import type { IdlegridNode } from '../node/index.js'

export interface ObserveSettings {
  metrics?: HttpAddress
  dashboard?: HttpAddress
  /** how often the provider's figures are sampled for the dashboard (default 10 s) */
  sampleMs?: number
}

/** The option table entries (the CLI's OptionTable shape). */
export const OBSERVE_OPTIONS = {
  metrics: { type: 'string', valueName: 'HOST:PORT', description: 'serve Prometheus metrics on http://HOST:PORT/metrics (libp2p\'s and the market\'s, jobs\', ledger\'s; default off)' },
  dashboard: { type: 'string', valueName: 'HOST:PORT', description: 'serve the dashboard on HOST:PORT (a bare PORT listens on 127.0.0.1; token in <data dir>/dashboard.token; default off)' }
} as const

/** The settings from parsed flag values; throws a readable error on a bad address. */
export function observeSettings (values: Record<string, unknown>): ObserveSettings {
  const at = (flag: string): HttpAddress | undefined => typeof values[flag] === 'string' ? parseHostPort(values[flag], flag) : undefined
  return { metrics: at('metrics'), dashboard: at('dashboard') }
}

/** Prepared before the node is built: libp2p's metrics must be given to createNode. */
export interface PreparedMetrics {
  metrics?: IdlegridMetrics
  /** for createNode's `metrics` */
  libp2p?: ReturnType<typeof libp2pPrometheus>
}

export function prepareMetrics (settings: ObserveSettings): PreparedMetrics {
  if (settings.metrics == null) return {}
  const metrics = new IdlegridMetrics()
  return { metrics, libp2p: libp2pPrometheus(metrics.registry) }
}

export interface Observability {
  readonly observer: NodeObserver
  readonly metricsUrl?: string
  readonly dashboardUrl?: string
  close(): Promise<void>
}

/** Starts the observer and the servers asked for; a failure to listen stops what was started and throws. */
export async function startObservability (
  node: IdlegridNode,
  handlers: Record<string, ControlHandler>,
  settings: ObserveSettings,
  prepared: PreparedMetrics = {}
): Promise<Observability> {
  const observer = new NodeObserver(node, { handlers, metrics: prepared.metrics, sampleMs: settings.sampleMs })
  observer.start()
  const servers: LocalHttpServer[] = []
  const close = async (): Promise<void> => {
    observer.stop()
    await Promise.all(servers.map(async s => { await s.close() }))
  }
  try {
    let metricsUrl: string | undefined
    let dashboardUrl: string | undefined
    if (settings.metrics != null && prepared.metrics != null) {
      const s = await named('metrics', settings.metrics, serveMetrics(settings.metrics, prepared.metrics, observer))
      servers.push(s)
      metricsUrl = `http://${hostText(s.address.host)}:${s.address.port}/metrics`
    }
    if (settings.dashboard != null) {
      const token = await loadDashboardToken(node.config.dataDir)
      const api = new DashboardApi(observer, { role: node.config.role, peerId: node.peerId.toString() })
      const s = await named('dashboard', settings.dashboard, serveDashboard(settings.dashboard, token, api))
      servers.push(s)
      dashboardUrl = s.url
    }
    return { observer, metricsUrl, dashboardUrl, close }
  } catch (err) {
    await close()
    throw err
  }
}

/** A server that cannot listen (port taken, address not ours) says which flag asked for it. */
async function named<T> (flag: string, at: HttpAddress, starting: Promise<T>): Promise<T> {
  try {
    return await starting
  } catch (err: any) {
    throw new Error(`--${flag} ${hostText(at.host)}:${at.port}: cannot listen (${String(err?.code ?? err?.message ?? err)})`, { cause: err })
  }
}

function hostText (host: string): string {
  return host.includes(':') ? `[${host}]` : host
}
