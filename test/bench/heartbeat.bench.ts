/**
 * Heartbeat cost per node (issue 15 item 3): N nodes in this process (a bootstrap and N - 1
 * others, each dialling HEARTBEAT_BENCH_TARGET_PEERS peers, default 4, and keeping at most
 * HEARTBEAT_BENCH_MAX_CONNECTIONS, default 10), a heartbeat every
 * HEARTBEAT_BENCH_INTERVAL_SECONDS (5) measured over HEARTBEAT_BENCH_SECONDS (15),
 * run twice: with the legacy global topic (--heartbeat-gossip; only its gossip validations are
 * counted) and with the heartbeat stream alone (the default; its verdicts are counted). The
 * figure: heartbeats validated per node per second. On the topic it is ~(N - 1) / interval for
 * every node; on the stream it is the node's distinct peers / interval, which the connection
 * manager bounds whatever N is (a bootstrap, connected to everyone, still pays (N - 1) / interval).
 *
 *   npm run build && HEARTBEAT_BENCH_NODES=24 npx node dist/test/bench/run.js heartbeat
 */
import { join } from 'node:path'
import { loadavg } from 'node:os'
import { TOPIC } from '../../protocols/ids.js'
import { sleep } from '../../src/common/index.js'
import { resolveConfig, type Role } from '../../src/config/config.js'
import { createNode, type IdlegridNode } from '../../src/node/create-node.js'
import { percentile } from './stats.js'
import { tempDir, waitFor } from '../utils/index.js'

const NODES = Number(process.env.HEARTBEAT_BENCH_NODES ?? 24)
const TARGET_PEERS = Number(process.env.HEARTBEAT_BENCH_TARGET_PEERS ?? 4)
/**
 * connections a non-bootstrap node keeps: DHT lookups connect small networks all to all, so
 * without a cap the stream would cost as much as the topic below ~200 nodes (maxConnections'
 * default); the cap stands in for a network larger than that
 */
const MAX_CONNECTIONS = Number(process.env.HEARTBEAT_BENCH_MAX_CONNECTIONS ?? 10)
const SECONDS = Number(process.env.HEARTBEAT_BENCH_SECONDS ?? 15)
/** every node of both runs shares this process's event loop: 1 s heartbeats from 24 nodes saturate it on 2 cores */
const INTERVAL_S = Number(process.env.HEARTBEAT_BENCH_INTERVAL_SECONDS ?? 5)

type Mode = 'topic' | 'stream'

/** Heartbeats the node validated so far, on the path `mode` measures. */
function validated (node: IdlegridNode, mode: Mode): number {
  const counts = mode === 'topic' ? node.libp2p.services.gossip.stats()[TOPIC.heartbeats] ?? {} : node.libp2p.services.heartbeats.stats()
  return Object.values(counts).reduce((a, b) => a + b, 0)
}

async function measure (mode: Mode): Promise<Record<string, number>> {
  const dir = await tempDir('idlegrid-bench-heartbeat-')
  const nodes: IdlegridNode[] = []
  let names = 0
  const start = async (role: Role, bootstrap: string[]): Promise<IdlegridNode> => {
    const config = resolveConfig({ role, flags: { dataDir: join(dir.path, `${role}-${names++}`), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap, heartbeatSeconds: INTERVAL_S, targetPeers: TARGET_PEERS, heartbeatGossip: mode === 'topic', ...(role === 'bootstrap' ? {} : { maxConnections: MAX_CONNECTIONS }) } })
    const node = await createNode(config)
    nodes.push(node)
    return node
  }
  try {
    const boot = await start('bootstrap', [])
    const addr = [boot.libp2p.getMultiaddrs()[0].toString()]
    for (let i = 1; i < NODES; i += 6) await Promise.all(Array.from({ length: Math.min(6, NODES - i) }, async () => await start('provider', addr)))
    const others = nodes.slice(1)
    // settled: the connectors dial what the DHT shows them (some nodes stay below target: the
    // mean connection count is reported with the figures)
    await waitFor(() => others.every(n => n.libp2p.getConnections().length >= Math.min(TARGET_PEERS, NODES - 1)), {
      timeoutMs: 20_000
    }).catch(() => {})
    await sleep(5_000)
    const before = nodes.map(n => validated(n, mode))
    const started = Date.now()
    await sleep(SECONDS * 1000)
    const elapsedS = (Date.now() - started) / 1000
    const rates = nodes.map((n, i) => (validated(n, mode) - (before[i] as number)) / elapsedS)
    const otherRates = rates.slice(1).sort((a, b) => a - b)
    const connections = others.map(n => new Set(n.libp2p.getConnections().map(c => c.remotePeer.toString())).size)
    const round = (x: number): number => Math.round(x * 100) / 100
    return {
      nodes: NODES,
      medianMessagesPerNodePerS: round(percentile(otherRates, 0.5)),
      maxMessagesPerNodePerS: round(otherRates[otherRates.length - 1] ?? 0),
      bootstrapMessagesPerS: round(rates[0] as number),
      meanConnectionsPerNode: round(connections.reduce((a, b) => a + b, 0) / connections.length),
      bootstrapConnections: new Set(nodes[0]?.libp2p.getConnections().map(c => c.remotePeer.toString())).size,
      ...Object.fromEntries(Object.entries(nodes.map(n => n.libp2p.services.heartbeats.sends()).reduce((a, b) => ({ sent: a.sent + b.sent, failed: a.failed + b.failed, skipped: a.skipped + b.skipped }))).map(([k, v]) => [`streamSends_${k}`, v]))
    }
  } finally {
    await Promise.all(nodes.map(async n => { await n.stop() }))
    await dir.cleanup()
  }
}

export default async function (): Promise<Record<string, unknown>> {
  const topic = await measure('topic')
  const stream = await measure('stream')
  return {
    topic,
    stream,
    heartbeatSeconds: INTERVAL_S,
    targetPeers: TARGET_PEERS,
    maxConnections: MAX_CONNECTIONS,
    loadavg1m: Math.round(loadavg()[0] * 100) / 100
  }
}
