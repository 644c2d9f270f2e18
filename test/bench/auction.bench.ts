/**
 * Auction benchmark: 30 providers and one renter in this process on 127.0.0.1, 50 sequential
 * auctions with a 300 ms bid window. Figures: publish → accepted award (median, p95), the
 * overhead above the window, and gossip messages per auction (messages each node validated
 * on the jobs, bids and awards topics, summed over the nodes; and messages published).
 */
import { percentile } from './stats.js'
import { parsePolicy, parseSimulatedGpus, providerProfile } from '../../src/capability/index.js'
import { MARKET_RENTER_SERVICE, marketExtensions, parseJobSpec, type MarketRenterService } from '../../src/market/index.js'
import { TOPIC } from '../../protocols/ids.js'
import { join } from 'node:path'
import { resolveConfig, type Role } from '../../src/config/index.js'
import { createNode, type IdlegridNode, type NodeExtensions } from '../../src/node/index.js'
import { tempDir, waitFor } from '../utils/index.js'

const PROVIDERS = Number(process.env.AUCTION_BENCH_PROVIDERS ?? 30)
const AUCTIONS = 50
const WINDOW_MS = 300
const REGIONS = ['eu-west', 'eu-central', 'us-east', 'us-west', 'ap-south']
const GPUS = ['H100:80', 'A100:40', 'RTX 4090:24', 'L40S:48']

function validated (nodes: IdlegridNode[]): number {
  let n = 0
  for (const node of nodes) {
    const stats = node.libp2p.services.gossip.stats()
    for (const topic of [TOPIC.jobs, TOPIC.bids, TOPIC.awards]) n += Object.values(stats[topic] ?? {}).reduce((a, b) => a + b, 0)
  }
  return n
}

/**
 * The network, built here rather than with test/utils so every node keeps few connections
 * (targetPeers): 32 nodes each dialing 24 others in one process on a small machine spend the
 * benchmark on handshakes. Gossip still reaches everyone through the mesh (D = 6).
 */
async function startNetwork (): Promise<{ bootstrap: IdlegridNode, providers: IdlegridNode[], renters: IdlegridNode[], all: IdlegridNode[], stop: () => Promise<void> }> {
  const dir = await tempDir('idlegrid-bench-auction-')
  const all: IdlegridNode[] = []
  const make = async (role: Role, name: string, bootstrap: string[], extensions: NodeExtensions, provider?: Record<string, unknown>): Promise<IdlegridNode> => {
    const config = resolveConfig({
      role,
      file: provider != null ? { provider } : undefined,
      flags: { dataDir: join(dir.path, name), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap, heartbeatSeconds: 10, targetPeers: 6 }
    })
    const node = await createNode(config, extensions)
    all.push(node)
    return node
  }
  try {
    const bootstrap = await make('bootstrap', 'bootstrap', [], marketExtensions({ role: 'bootstrap' }))
    const addr = [bootstrap.libp2p.getMultiaddrs()[0]?.toString() as string]
    const providers: IdlegridNode[] = []
    for (let i = 0; i < PROVIDERS; i++) {
      const profile = providerProfile(parsePolicy({ region: REGIONS[i % REGIONS.length], priceFloor: 0.5 + (i % 7) * 0.25, images: ['*'] }), parseSimulatedGpus([GPUS[i % GPUS.length] as string]))
      providers.push(await make('provider', `provider-${i}`, addr, marketExtensions({ role: 'provider', provider: { profile: () => profile } })))
    }
    const renters = [await make('renter', 'renter', addr, marketExtensions({ role: 'renter' }))]
    return { bootstrap, providers, renters, all, stop: async () => { await Promise.all(all.map(async n => { await n.stop() })); await dir.cleanup() } }
  } catch (err) {
    await Promise.all(all.map(async n => { await n.stop() }))
    await dir.cleanup()
    throw err
  }
}

export default async (): Promise<Record<string, unknown>> => {
  const net = await startNetwork()
  try {
    const renterNode = net.renters[0] as IdlegridNode
    const renter = renterNode.libp2p.services[MARKET_RENTER_SERVICE] as unknown as MarketRenterService
    const heard = (): number => renterNode.libp2p.services.heartbeats.presence().filter(p => p.role === 'provider').length
    // nodes that missed the bootstrap's first dial (libp2p throttles inbound connections per host)
    // dial it again; gossip reaches everyone once the renter hears every provider's heartbeats
    const addr = net.bootstrap.libp2p.getMultiaddrs()[0]
    await waitFor(async () => {
      const missing = net.all.filter(n => n !== net.bootstrap && n.libp2p.getConnections().length === 0)
      for (const n of missing) await n.libp2p.dial(addr as Parameters<typeof n.libp2p.dial>[0]).catch(() => {})
      return heard() === PROVIDERS
    }, { timeoutMs: 120_000, intervalMs: 1_000, what: 'renter to hear every provider' }).catch(() => {})
    process.stderr.write(`  network up; renter hears ${heard()} providers\n`)
    const spec = parseJobSpec({ name: 'bench', runtime: { image: 'ghcr.io/acme/bench:1' }, auction: { bidWindowMs: WINDOW_MS } })
    // one warm-up auction so meshes and connections exist
    await renter.auction(spec)
    const before = validated(net.all)
    const accepted: number[] = []
    const bids: number[] = []
    let failed = 0
    for (let i = 0; i < AUCTIONS; i++) {
      const report = await renter.auction(spec)
      if (i % 10 === 9) process.stderr.write(`  ${i + 1}/${AUCTIONS} auctions\n`)
      bids.push(report.bids.length)
      if (report.timings.publishToAcceptedMs == null) failed++
      else accepted.push(report.timings.publishToAcceptedMs)
    }
    const messages = (validated(net.all) - before) / AUCTIONS
    accepted.sort((a, b) => a - b)
    const median = percentile(accepted, 0.5)
    const p95 = percentile(accepted, 0.95)
    const meanBids = bids.reduce((a, b) => a + b, 0) / bids.length
    return {
      providers: PROVIDERS,
      providersHeardByRenter: heard(),
      auctions: AUCTIONS,
      bidWindowMs: WINDOW_MS,
      auctionsWithoutAward: failed,
      bidsPerAuctionMean: Number(meanBids.toFixed(1)),
      publishToAcceptedMedianMs: median,
      publishToAcceptedP95Ms: p95,
      overheadAboveWindowMedianMs: median - WINDOW_MS,
      overheadAboveWindowP95Ms: p95 - WINDOW_MS,
      gossipMessagesValidatedPerAuction: Number(messages.toFixed(1)),
      gossipMessagesPublishedPerAuction: Number((2 + meanBids).toFixed(1))
    }
  } finally {
    await net.stop()
  }
}
