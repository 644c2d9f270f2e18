import { join } from 'node:path'
import { buildNode, type BuildOptions } from '../compose/index.js'
import type { IdlegridNode, PeerPresence } from '../node/index.js'
import { followMarketLog } from '../market/index.js'
import { loadNodeConfig } from './load-config.js'
import { nodeHandlers, serveControl } from './node-control.js'
import { observeSettings, prepareMetrics, startObservability, TOKEN_FILE, type Observability } from '../observe/index.js'
import { UsageError } from './errors.js'
import { type Output } from './output.js'
import { shortPeerId } from '../common/index.js'
import type { NodeConfig, Role } from '../config/index.js'
import type { ParsedValues } from './options.js'
import type { PeerId } from '@libp2p/interface'

/** A clean stop must finish within this; after it the process exits non-zero. */
const STOP_TIMEOUT_MS = 10_000

/**
 * Runs a long-lived node in `role` until SIGINT/SIGTERM: prints the ready line (with
 * --json: {"peerId","addrs"}), serves the control socket, and reports peers joining and
 * leaving. Resolves with the exit code.
 */
export async function runRole (
  role: Role,
  values: ParsedValues,
  out: Output,
  prepare?: (config: NodeConfig) => Promise<BuildOptions>
): Promise<number> {
  const config = await loadNodeConfig(role, values)
  let observe
  try {
    observe = observeSettings(values)
  } catch (err: any) {
    throw new UsageError(String(err?.message ?? err))
  }
  // libp2p's metrics are given to the node when it is built (--metrics)
  const prepared = prepareMetrics(observe)
  // a role may validate and prepare more (a provider's policy and GPUs) before the node starts
  const node = await buildNode(config, { ...await prepare?.(config), metrics: prepared.libp2p })
  let control
  let observing: Observability | undefined
  try {
    control = await serveControl(node)
    if (observe.metrics != null || observe.dashboard != null) {
      observing = await startObservability(node, nodeHandlers(node), observe, prepared)
    }
  } catch (err) {
    await control?.close()
    await node.stop()
    throw err
  }
  // handlers first: a SIGTERM sent as soon as the ready line is read must stop the node cleanly,
  // and until a handler exists the OS default (exit by signal) applies
  const stopSignal = new Promise<NodeJS.Signals>(resolve => {
    process.once('SIGINT', () => { resolve('SIGINT') })
    process.once('SIGTERM', () => { resolve('SIGTERM') })
  })
  const addrs = node.libp2p.getMultiaddrs().map(a => a.toString())
  out.data({ peerId: node.peerId.toString(), addrs })
  out.info(`idlegrid ${role} ${node.peerId.toString()} is running`)
  out.info(`  data dir: ${config.dataDir}`)
  if (role === 'bootstrap') {
    out.info('  share these addresses with peers (--bootstrap or IDLEGRID_BOOTSTRAP):')
    for (const addr of addrs) out.info(`    ${addr}`)
  } else {
    for (const addr of addrs) out.info(`  listening: ${addr}`)
  }
  if (observing?.metricsUrl != null) out.info(`  metrics: ${observing.metricsUrl}`)
  // the URL holds no token: the sign-in page asks for it, and the path says where it is
  const tokenFile = join(node.config.dataDir, TOKEN_FILE)
  if (observing?.dashboardUrl != null) out.info(`  dashboard: ${observing.dashboardUrl}   (sign in with the token in ${tokenFile})`)
  if (observing != null) out.data({ event: 'observe', metrics: observing.metricsUrl ?? null, dashboard: observing.dashboardUrl ?? null, ...(observing.dashboardUrl != null ? { tokenFile } : {}) })
  if (config.bootstrap.length === 0 && role !== 'bootstrap') out.warn('warning: no bootstrap peers configured; this node will only see peers that dial it')
  const stopReporting = reportPeers(node, out)
  // a provider's bids, declines and wins, one line each
  const stopMarketLog = followMarketLog(node.libp2p.services, (text, data) => { out.info(text); out.data(data) })

  const signal = await stopSignal
  out.info(`${signal}: stopping`)
  stopReporting()
  stopMarketLog()
  const timer = setTimeout(() => {
    out.warn(`node did not stop within ${STOP_TIMEOUT_MS / 1000}s; exiting anyway`)
    process.exit(1)
  }, STOP_TIMEOUT_MS)
  timer.unref()
  await observing?.close()
  await control.close()
  await node.stop()
  clearTimeout(timer)
  return 0
}

/** Prints connections and first heartbeats as they happen; returns a function that stops it. */
function reportPeers (node: IdlegridNode, out: Output): () => void {
  const heard = new Set<string>()
  const onConnect = (evt: CustomEvent<PeerId>): void => {
    out.info(`peer connected ${shortPeerId(evt.detail.toString())}`)
    out.data({ event: 'peer:connect', peerId: evt.detail.toString() })
  }
  const onDisconnect = (evt: CustomEvent<PeerId>): void => {
    heard.delete(evt.detail.toString())
    out.info(`peer disconnected ${shortPeerId(evt.detail.toString())}`)
    out.data({ event: 'peer:disconnect', peerId: evt.detail.toString() })
  }
  const onHeartbeat = (evt: Event): void => {
    const presence = (evt as CustomEvent<PeerPresence>).detail
    if (heard.has(presence.peerId)) return
    heard.add(presence.peerId)
    out.info(`heard ${presence.role} ${shortPeerId(presence.peerId)}${presence.slotsTotal > 0 ? ` (${presence.slotsBusy}/${presence.slotsTotal} GPU slots busy)` : ''}`)
    out.data({ event: 'heartbeat', peerId: presence.peerId, role: presence.role })
  }
  node.libp2p.addEventListener('peer:connect', onConnect)
  node.libp2p.addEventListener('peer:disconnect', onDisconnect)
  node.libp2p.services.heartbeats.events.addEventListener('heartbeat', onHeartbeat)
  return () => {
    node.libp2p.removeEventListener('peer:connect', onConnect)
    node.libp2p.removeEventListener('peer:disconnect', onDisconnect)
    node.libp2p.services.heartbeats.events.removeEventListener('heartbeat', onHeartbeat)
  }
}
