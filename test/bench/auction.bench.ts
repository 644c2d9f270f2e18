/**
 * Auction benchmark: 30 providers in one process (a child: test/bench/provider-shard.ts), and
 * the bootstrap and one renter in this one, on 127.0.0.1; 50 sequential auctions with a
 * 300 ms bid window. The renter has a process of its own as it has a machine of its own, so
 * its timings are not queued behind thirty providers' work. Figures: publish → accepted award
 * (median, p95), the overhead above the window, and gossip messages per auction (messages
 * each node validated on the jobs, bids and awards topics, summed over the nodes; and
 * messages published).
 */
import { percentile } from './stats.js'
import { marketMessagesValidated } from './provider-shard.js'
import { startShard, stopShard, type Shard } from './shards.js'
import { parseJobSpec } from '../../src/market/job-spec.js'
import { MARKET_RENTER_SERVICE, type MarketRenterService } from '../../src/market/renter-service.js'
import { marketNodeServices } from '../market/fixtures.js'
import { startInProcessNetwork, tempDir, waitFor } from '../utils/index.js'
import type { IdlegridNode } from '../../src/node/index.js'

const PROVIDERS = Number(process.env.AUCTION_BENCH_PROVIDERS ?? 30)
const AUCTIONS = 50
const WINDOW_MS = 300
const HEARTBEAT_SECONDS = 10

export default async (): Promise<Record<string, unknown>> => {
  const net = await startInProcessNetwork({ providers: 0, renters: 1, heartbeatSeconds: HEARTBEAT_SECONDS, extensions: marketNodeServices })
  const dir = await tempDir('idlegrid-bench-auction-')
  let shard: Shard | undefined
  try {
    shard = await startShard({ bootstrap: net.bootstrap.libp2p.getMultiaddrs()[0]?.toString() as string, first: 0, count: PROVIDERS, dir: dir.path, heartbeatSeconds: HEARTBEAT_SECONDS })
    const providers = shard
    const renterNode = net.renters[0] as IdlegridNode
    const renter = renterNode.libp2p.services[MARKET_RENTER_SERVICE] as unknown as MarketRenterService
    const heard = (): number => renterNode.libp2p.services.heartbeats.presence().filter(p => p.role === 'provider').length
    // gossip reaches everyone once the renter hears every provider's heartbeats
    await waitFor(() => heard() === PROVIDERS, { timeoutMs: 120_000, intervalMs: 1_000, what: 'renter to hear every provider' }).catch(() => {})
    process.stderr.write(`  network up; renter hears ${heard()} providers\n`)
    const validated = async (): Promise<number> => marketMessagesValidated(net.all) + (await providers.ask({ type: 'gossip' }, 'gossip')).validated
    const spec = parseJobSpec({ name: 'bench', runtime: { image: 'ghcr.io/acme/bench:1' }, auction: { bidWindowMs: WINDOW_MS } })
    // one warm-up auction so meshes and connections exist
    await renter.auction(spec)
    const before = await validated()
    const accepted: number[] = []
    const bids: number[] = []
    let failed = 0
    for (let i = 0; i < AUCTIONS; i++) {
      const report = await renter.auction(spec)
      if (i % 10 === 9) process.stderr.write(`  ${i + 1}/${AUCTIONS} auctions\n`)
      bids.push(report.bids.length)
      if (report.timings.publishToAcceptedMs == null) {
        failed++
        process.stderr.write(`  auction ${i + 1}: no award: ${report.noBids?.reason ?? report.noAward?.reason ?? 'unknown'} ${JSON.stringify(report.noBids?.declines ?? {})}\n`)
      } else accepted.push(report.timings.publishToAcceptedMs)
    }
    const messages = (await validated() - before) / AUCTIONS
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
    if (shard != null) await stopShard(shard)
    await net.stop()
    await dir.cleanup()
  }
}
