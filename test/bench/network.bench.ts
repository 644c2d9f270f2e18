/**
 * Network benchmark: 50 nodes on 127.0.0.1: a bootstrap and 9 renters in this process, and
 * 40 providers with simulated GPUs and the market's bid engine in 4 child processes of 10
 * (test/bench/provider-shard.ts), so the nodes use every core as separate machines would.
 * Figures:
 * - time until every node is connected to the network (one connected graph, every node
 *   knowing a peer subscribed to the jobs topic);
 * - gossip delivery ratio and latency of signed job requests published by the renters at
 *   10 per second for 30 s (jobs nobody serves, so the load is the gossip itself);
 * - auction median and p95 (publish → accepted award) for sequential auctions;
 * - resident memory per node (the processes' RSS / nodes).
 */
import { join } from 'node:path'
import { sleep, toHex } from '../../src/common/index.js'
import { parseJobSpec, toJobRequest } from '../../src/market/job-spec.js'
import { readJobRequest, signJobRequest } from '../../src/market/messages.js'
import { MARKET_RENTER_SERVICE, type MarketRenterService } from '../../src/market/renter-service.js'
import { marketNodeServices } from '../market/fixtures.js'
import { JOB_SHARD_TOPICS, jobShardOf } from '../../protocols/ids.js'
import { percentile } from './stats.js'
import { startInProcessNetwork, tempDir, waitFor } from '../utils/index.js'
import { startShard, stopShard, type Shard } from './shards.js'
import type { IdlegridNode } from '../../src/node/index.js'

const SHARDS = 4
const PROVIDERS_PER_SHARD = 10
const PROVIDERS = SHARDS * PROVIDERS_PER_SHARD
const RENTERS = 9
const RATE_PER_S = 10
const LOAD_SECONDS = 30
const AUCTIONS = 20
/** the shard of the load's job requests (no residency, no VRAM floor): every provider joins it */
const LOAD_SHARD = jobShardOf(undefined)

/** One connected graph over every node, and every node with a peer on the load's job shard (renters publish there by fanout). */
async function connectedToAll (local: IdlegridNode[], shards: Shard[]): Promise<{ connected: boolean, alone: number, unsubscribed: number }> {
  const views = [
    ...local.map(n => ({ peerId: n.peerId.toString(), peers: n.libp2p.getConnections().map(c => c.remotePeer.toString()), subscribed: n.libp2p.services.pubsub.getSubscribers(LOAD_SHARD).length > 0 })),
    ...(await Promise.all(shards.map(async s => (await s.ask({ type: 'status' }, 'status')).nodes))).flat()
  ]
  const edges = new Map(views.map(v => [v.peerId, v.peers]))
  const seen = new Set<string>([views[0]?.peerId as string])
  const queue = [...seen]
  while (queue.length > 0) {
    for (const peer of edges.get(queue.pop() as string) ?? []) {
      if (edges.has(peer) && !seen.has(peer)) { seen.add(peer); queue.push(peer) }
    }
  }
  const alone = views.filter(v => v.peers.length === 0).length
  const unsubscribed = views.filter(v => !v.subscribed).length
  return { connected: seen.size === views.length && views.length === PROVIDERS + RENTERS + 1 && unsubscribed === 0, alone, unsubscribed }
}

export default async (): Promise<Record<string, unknown>> => {
  const started = Date.now()
  const net = await startInProcessNetwork({ providers: 0, renters: RENTERS, heartbeatSeconds: 30, startBatch: 5, extensions: marketNodeServices })
  const local = net.all
  const dir = await tempDir('idlegrid-bench-network-')
  const shards: Shard[] = []
  try {
    const bootstrapAddr = net.bootstrap.libp2p.getMultiaddrs()[0]?.toString() as string
    // the shards join one after another, as a network grows, rather than 40 handshakes at one instant
    for (let i = 0; i < SHARDS; i++) shards.push(await startShard({ bootstrap: bootstrapAddr, first: i * PROVIDERS_PER_SHARD, count: PROVIDERS_PER_SHARD, dir: join(dir.path, `shard-${i}`) }))
    const startedMs = Date.now() - started
    // a figure, not a gate: when the bound passes, say how many nodes were still alone and go on
    let view = { connected: false, alone: 0, unsubscribed: 0 }
    const connected = await waitFor(async () => (view = await connectedToAll(local, shards)).connected, { timeoutMs: 180_000, intervalMs: 1_000, what: 'every node connected and subscribed' }).then(() => true, () => false)
    const connectedMs = connected ? Date.now() - started : null
    const rss = async (): Promise<number> => process.memoryUsage().rss + (await Promise.all(shards.map(async s => (await s.ask({ type: 'status' }, 'status')).rss))).reduce((a, b) => a + b, 0)
    const rssAfterStart = await rss()
    process.stderr.write(connected ? `  ${PROVIDERS + RENTERS + 1} nodes connected after ${String(connectedMs)} ms\n` : `  not all connected after 180 s: ${view.alone} alone, ${view.unsubscribed} without a jobs-topic peer\n`)

    // gossip load: jobs nobody can serve (no B200 anywhere), from the renters in turn
    const publishedAt = new Map<string, number>()
    const localDeliveries: Array<[string, number]> = []
    const stopListening = local.flatMap(node => JOB_SHARD_TOPICS.map(topic => node.libp2p.services.gossip.onMessage(topic, (envelope) => {
      localDeliveries.push([toHex(readJobRequest(envelope).message.jobId), Date.now()])
    })))
    const spec = parseJobSpec({ name: 'load', runtime: { image: 'ghcr.io/acme/bench:1' }, constraints: { gpuModels: ['b200'] }, auction: { bidWindowMs: 300 } })
    const total = RATE_PER_S * LOAD_SECONDS
    const loadStarted = Date.now()
    for (let i = 0; i < total; i++) {
      const due = loadStarted + (i * 1000) / RATE_PER_S
      await sleep(due - Date.now())
      const renter = net.renters[i % net.renters.length] as IdlegridNode
      const signed = signJobRequest(renter.privateKey, renter.peerId, toJobRequest(spec, { renter: renter.peerId.toMultihash().bytes }))
      publishedAt.set(toHex(signed.message.jobId), Date.now())
      await renter.libp2p.services.pubsub.publish(LOAD_SHARD, signed.envelope).catch(() => {})
    }
    const achievedRate = total / ((Date.now() - loadStarted) / 1000)
    const nodes = PROVIDERS + RENTERS + 1
    // version 2: the load's shard (no residency, no VRAM floor) reaches every provider and the bootstrap; renters do not join shards
    const expected = total * (nodes - RENTERS)
    // every delivery of a published request (a node may not count one twice)
    const collect = async (): Promise<number[]> => {
      const all = [localDeliveries, ...(await Promise.all(shards.map(async s => (await s.ask({ type: 'deliveries' }, 'deliveries')).deliveries)))].flat()
      return all.flatMap(([id, at]) => { const sent = publishedAt.get(id); return sent == null ? [] : [at - sent] })
    }
    // let the queued messages land (bounded): the auctions below are measured on a settled network
    const loadEnded = Date.now()
    let latencies: number[] = []
    await waitFor(async () => (latencies = await collect()).length >= expected, { timeoutMs: 120_000, intervalMs: 1_000, what: 'every job request delivered' }).catch(() => {})
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
    const rssEnd = await rss()
    return {
      nodes,
      providers: PROVIDERS,
      renters: RENTERS,
      processes: 1 + SHARDS,
      nodesStartedMs: startedMs,
      allConnectedMs: connectedMs,
      nodesAloneAtConnectBound: view.alone,
      nodesWithoutJobsPeerAtConnectBound: view.unsubscribed,
      jobRequestsPublished: total,
      publishRatePerS: Number(achievedRate.toFixed(2)),
      lastDeliveryAfterLoadMs: drainMs,
      gossipDeliveryRatio: Number((latencies.length / expected).toFixed(4)),
      gossipLatencyMedianMs: percentile(latencies, 0.5),
      gossipLatencyP95Ms: percentile(latencies, 0.95),
      gossipLatencyMaxMs: latencies.at(-1) ?? NaN,
      auctions: AUCTIONS,
      auctionWindowMs: 300,
      auctionsWithoutAward: noAward,
      auctionMedianMs: percentile(accepted, 0.5),
      auctionP95Ms: percentile(accepted, 0.95),
      rssPerNodeMiB: Number((rssEnd / nodes / 2 ** 20).toFixed(1)),
      rssPerNodeAfterStartMiB: Number((rssAfterStart / nodes / 2 ** 20).toFixed(1)),
      note: `${nodes} nodes in ${1 + SHARDS} processes on this machine's cores; latencies include queueing behind the other nodes of each process`
    }
  } finally {
    await Promise.all(shards.map(stopShard))
    await net.stop()
    await dir.cleanup()
  }
}
