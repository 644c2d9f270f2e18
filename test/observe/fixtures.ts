/**
 * For the observe specs: a small in-process network as the CLI composes it (a bootstrap, one
 * provider on the process runner with a simulated H100, one renter), each with --metrics and
 * --dashboard on 127.0.0.1:0, and a job run through the renter's submit service.
 */
import { chmod, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { loadProviderSetup } from '../../src/capability/index.js'
import { roleExtensions } from '../../src/compose/index.js'
import { nodeHandlers } from '../../src/cli/node-control.js'
import { prepareMetrics, startObservability, type Observability, type PreparedMetrics } from '../../src/observe/index.js'
import { SUBMIT_SERVICE } from '../../src/submit/index.js'
import { startInProcessNetwork, tempDir, type InProcessNetwork } from '../utils/index.js'
import { waitForMarketMesh } from '../market/fixtures.js'
import type { IdlegridNode } from '../../src/node/index.js'
import type { SubmitService } from '../../src/submit/service.js'
import type { JobSummary } from '../../src/submit/summary.js'

const LOCAL = { host: '127.0.0.1', port: 0 }

/** A log line with markup that would run script if a page took it as HTML. */
export const HOSTILE_LOG_LINE = '<img id="pwned" src="x" onerror="document.body.dataset.pwned=1"><b id="pwned-b">bold</b>'

export interface CockpitNetwork {
  net: InProcessNetwork
  dir: string
  provider: IdlegridNode
  renter: IdlegridNode
  renterView: Observability
  providerView: Observability
  /** calls one of a node's control methods, as `idlegrid` would */
  control: (node: IdlegridNode, method: string, params?: Record<string, unknown>) => Promise<any>
  /** runs a job (an input file, a log line, an output) through the renter's submit service */
  runJob: (name: string) => Promise<JobSummary>
  stop: () => Promise<void>
}

export async function startCockpitNetwork (): Promise<CockpitNetwork> {
  const tmp = await tempDir('idlegrid-observe-')
  // process jobs may run as another user when we are root: the temp dir must let them through
  await chmod(tmp.path, 0o711)
  const { profile } = await loadProviderSetup({ raw: {}, flags: { region: 'eu-west', 'price-floor': '1.00' }, simulateGpu: ['H100:80'] })
  const prepared = new Map<string, PreparedMetrics>()
  const net = await startInProcessNetwork({
    providers: 1,
    renters: 1,
    extensions: (role, i, config) => {
      const metrics = prepareMetrics({ metrics: LOCAL })
      prepared.set(`${role}-${i}`, metrics)
      // libp2p's prometheus-metrics keeps one module-wide set of metrics: only one node per process
      // has them (the renter here)
      return roleExtensions(config, { ...(role === 'provider' ? { provider: { profile, runner: 'process' } } : {}), metrics: role === 'renter' ? metrics.libp2p : undefined })
    }
  })
  const provider = net.providers[0] as IdlegridNode
  const renter = net.renters[0] as IdlegridNode
  const views: Observability[] = []
  try {
    await renter.libp2p.dial(provider.libp2p.getMultiaddrs()[0])
    await waitForMarketMesh(net)
    const observe = async (node: IdlegridNode, key: string): Promise<Observability> => {
      const view = await startObservability(
        node,
        nodeHandlers(node),
        { metrics: LOCAL, dashboard: LOCAL, sampleMs: 200 },
        prepared.get(key)
      )
      views.push(view)
      return view
    }
    const renterView = await observe(renter, 'renter-0')
    const providerView = await observe(provider, 'provider-0')
    const input = join(tmp.path, 'words.txt')
    await writeFile(input, 'hello cockpit\n')
    return {
      net,
      dir: tmp.path,
      provider,
      renter,
      renterView,
      providerView,
      control: async (node, method, params = {}) =>
        await nodeHandlers(node)[method]?.(params, () => {}, AbortSignal.timeout(10_000)),
      runJob: async (name) => {
        const submit = (renter.libp2p.services as Record<string, unknown>)[SUBMIT_SERVICE] as SubmitService
        return await submit.submit({
          spec: {
            name,
            tier: 'silver',
            workload: 'evaluation',
            // the log carries markup, as a hostile provider's log could: the dashboard must show it as text
            runtime: { command: ['/bin/sh', '-c', `tr a-z A-Z < inputs/words.txt > outputs/upper.txt && echo '${HOSTILE_LOG_LINE}' && echo job says done`] },
            inputs: [input],
            estimatedMinutes: 1,
            auction: { bidWindowMs: 700, acceptTimeoutMs: 3_000 }
          },
          baseDir: join(tmp.path, 'out')
        })
      },
      stop: async () => {
        await Promise.all(views.map(async v => { await v.close() }))
        await net.stop()
        await tmp.cleanup()
      }
    }
  } catch (err) {
    await Promise.all(views.map(async v => { await v.close() }))
    await net.stop()
    await tmp.cleanup()
    throw err
  }
}

/** Prometheus text → { 'name{labels}': value } (labels as printed). */
export function parseMetrics (text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    out.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return out
}
