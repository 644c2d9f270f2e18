/**
 * Network benchmark: 50 in-process nodes on 127.0.0.1 (a bootstrap, 40 providers with
 * simulated GPUs and the market's bid engine, 9 renters). Figures:
 * - time until every node is connected to the network (one connected graph, every node
 *   knowing a peer subscribed to the jobs topic);
 * - gossip delivery ratio and latency of signed job requests published by the renters at
 *   10 per second for 30 s (jobs nobody serves, so the load is the gossip itself);
 * - auction median and p95 (publish → accepted award) for sequential auctions;
 * - resident memory per node (process RSS / nodes).
 */
import { parsePolicy, parseSimulatedGpus, providerProfile } from '../../src/capability/index.js'
import { MARKET_RENTER_SERVICE, marketExtensions, parseJobSpec, signJobRequest, toJobRequest, toHex, readJobRequest, type MarketRenterService } from '../../src/market/index.js'
import { TOPIC } from '../../protocols/ids.js'
import { percentile } from './stats.js'
import { startInProcessNetwork, waitFor } from '../utils/index.js'
import type { IdlegridNode } from '../../src/node/index.js'

const PROVIDERS = 40
const RENTERS = 9
const RATE_PER_S = 10
const LOAD_SECONDS = 30
const AUCTIONS = 20
const REGIONS = ['eu-west', 'eu-central', 'us-east', 'us-west', 'ap-south']
const GPUS = ['H100:80', 'A100:40', 'RTX 4090:24', 'L40S:48']

function connectedToAll (nodes: IdlegridNode[]): boolean {
  const index = new Map(nodes.map((n, i) => [n.peerId.toString(), i]))
  const seen = new Set<number>([0])
  const queue = [0]
  while (queue.length > 0) {
    const i = queue.pop() as number
    for (const conn of nodes[i].libp2p.getConnections()) {
      const j = index.get(conn.remotePeer.toString())
      if (j != null && !seen.has(j)) { seen.add(j); queue.push(j) }
    }
  }
  const subscribed = nodes.every(n => n.libp2p.services.pubsub.getSubscribers(TOPIC.jobs).length > 0)
  return seen.size === nodes.length && subscribed
}

export default async (): Promise<Record<string, unknown>> => {
  const started = Date.now()
  const net = await startInProcessNetwork({
    providers: PROVIDERS,
    renters: RENTERS,
    heartbeatSeconds: 30,
    // nodes join ten at a time, as a network grows, rather than 49 handshakes at one instant
    startBatch: 10,
    extensions: (role, i) => {
      if (role !== 'provider') return marketExtensions({ role })
      const profile = providerProfile(parsePolicy({ region: REGIONS[i % REGIONS.length], priceFloor: 0.5 + (i % 7) * 0.25, images: ['*'] }), parseSimulatedGpus([GPUS[i % GPUS.length] as string]))
      return marketExtensions({ role, provider: { profile: () => profile } })
    }
  })
  const nodes = net.all
  try {
    const startedMs = Date.now() - started
    // a figure, not a gate: when the bound passes, say how many nodes were still alone and go on
    const connected = await waitFor(() => connectedToAll(nodes), { timeoutMs: 180_000, intervalMs: 250, what: 'every node connected and subscribed' }).then(() => true, () => false)
    const alone = nodes.filter(n => n.libp2p.getConnections().length === 0).length
    const unsubscribed = nodes.filter(n => n.libp2p.services.pubsub.getSubscribers(TOPIC.jobs).length === 0).length
    const connectedMs = connected ? Date.now() - started : null
    const rssAfterStart = process.memoryUsage().rss
    process.stderr.write(connected ? `  ${nodes.length} nodes connected after ${String(connectedMs)} ms\n` : `  not all connected after 180 s: ${alone} alone, ${unsubscribed} without a jobs-topic peer\n`)

    // gossip load: jobs nobody can serve (no B200 anywhere), from the renters in turn
    const publishedAt = new Map<string, number>()
    const latencies: number[] = []
    let deliveries = 0
    const stopListening = nodes.map(node => node.libp2p.services.gossip.onMessage(TOPIC.jobs, (envelope) => {
      const id = toHex(readJobRequest(envelope).message.jobId)
      const at = publishedAt.get(id)
      if (at == null) return
      deliveries++
      latencies.push(Date.now() - at)
    }))
    const spec = parseJobSpec({ name: 'load', runtime: { image: 'ghcr.io/acme/bench:1' }, constraints: { gpuModels: ['b200'] }, auction: { bidWindowMs: 300 } })
    const total = RATE_PER_S * LOAD_SECONDS
    const loadStarted = Date.now()
    for (let i = 0; i < total; i++) {
      const due = loadStarted + (i * 1000) / RATE_PER_S
      if (due > Date.now()) await new Promise(resolve => setTimeout(resolve, due - Date.now()))
      const renter = net.renters[i % net.renters.length] as IdlegridNode
      const signed = signJobRequest(renter.privateKey, renter.peerId, toJobRequest(spec, { renter: renter.peerId.toMultihash().bytes }))
      publishedAt.set(toHex(signed.message.jobId), Date.now())
      await renter.libp2p.services.pubsub.publish(TOPIC.jobs, signed.envelope).catch(() => {})
    }
    const achievedRate = total / ((Date.now() - loadStarted) / 1000)
    const expected = total * (nodes.length - 1)
    // let the queued messages land (bounded): the auctions below are measured on a settled network
    const loadEnded = Date.now()
    await waitFor(() => deliveries >= expected, { timeoutMs: 120_000, intervalMs: 250, what: 'every job request delivered' }).catch(() => {})
    const drainMs = Date.now() - loadEnded
    for (const stop of stopListening) stop()
    latencies.sort((a, b) => a - b)

    // auctions on a servable job from one renter
    const renter = net.renters[0] as IdlegridNode
    const market = renter.libp2p.services[MARKET_RENTER_SERVICE] as unknown as MarketRenterService
    const auctionSpec = parseJobSpec({ name: 'bench', runtime: { image: 'ghcr.io/acme/bench:1' }, auction: { bidWindowMs: 300 } })
    await market.auction(auctionSpec)
    const accepted: number[] = []
    let noAward = 0
    for (let i = 0; i < AUCTIONS; i++) {
      const report = await market.auction(auctionSpec)
      if (report.timings.publishToAcceptedMs == null) noAward++
      else accepted.push(report.timings.publishToAcceptedMs)
    }
    accepted.sort((a, b) => a - b)
    const rss = process.memoryUsage().rss
    const meshless = nodes.filter(n => (n.libp2p.services.pubsub as unknown as { getMeshPeers(t: string): string[] }).getMeshPeers(TOPIC.jobs).length === 0).length
    return {
      nodes: nodes.length,
      providers: PROVIDERS,
      renters: RENTERS,
      nodesStartedMs: startedMs,
      allConnectedMs: connectedMs,
      nodesAloneAtConnectBound: alone,
      nodesWithoutJobsPeerAtConnectBound: unsubscribed,
      jobRequestsPublished: total,
      publishRatePerS: Number(achievedRate.toFixed(2)),
      lastDeliveryAfterLoadMs: drainMs,
      gossipDeliveryRatio: Number((deliveries / expected).toFixed(4)),
      gossipLatencyMedianMs: percentile(latencies, 0.5),
      gossipLatencyP95Ms: percentile(latencies, 0.95),
      gossipLatencyMaxMs: latencies.at(-1) ?? NaN,
      auctions: AUCTIONS,
      auctionWindowMs: 300,
      auctionsWithoutAward: noAward,
      auctionMedianMs: percentile(accepted, 0.5),
      auctionP95Ms: percentile(accepted, 0.95),
      nodesWithoutJobsMeshPeerAtEnd: meshless,
      rssPerNodeMiB: Number((rss / nodes.length / 2 ** 20).toFixed(1)),
      rssPerNodeAfterStartMiB: Number((rssAfterStart / nodes.length / 2 ** 20).toFixed(1)),
      note: 'all nodes share one Node.js process and event loop on this 2-core machine: latencies include queueing behind the other 49 nodes'
    }
  } finally {
    await net.stop()
  }
}
