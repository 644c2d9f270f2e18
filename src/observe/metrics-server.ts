/**
 * `--metrics HOST:PORT`: Prometheus text on GET /metrics, libp2p's metrics and the node's
 * (metrics.ts) from the node's own registry. The figures the services count themselves are
 * read just before each scrape.
 */
import { prometheusMetrics } from '@libp2p/prometheus-metrics'
import { serveLocalHttp, sendText, type HttpAddress, type LocalHttpServer } from './http-bounds.js'
import type { IdlegridMetrics } from './metrics.js'
import type { NodeObserver } from './recorder.js'
import type { Registry } from 'prom-client'

/**
 * libp2p's metrics into `registry` (given to createNode as `metrics`); keeps what the registry
 * holds. @libp2p/prometheus-metrics keeps its metric objects in a module-wide map by name, so
 * in one process only the first node built this way gets libp2p's metrics in its registry
 * (the CLI runs one node per process; tests give them to one node).
 */
export function libp2pPrometheus (registry: Registry): ReturnType<typeof prometheusMetrics> {
  return prometheusMetrics({ registry, preserveExistingMetrics: true })
}

export async function serveMetrics (
  at: HttpAddress,
  metrics: IdlegridMetrics,
  observer: NodeObserver
): Promise<LocalHttpServer> {
  return await serveLocalHttp(at, async (req, url, res) => {
    if (url.pathname !== '/metrics') { sendText(res, 404, 'metrics are at /metrics'); return }
    await observer.sample()
    const text = await metrics.registry.metrics()
    res.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' })
    res.end(req.method === 'HEAD' ? undefined : text)
  })
}
