/**
 * Providers for the network and auction benchmarks in a process of their own (as providers
 * are separate machines), so the benchmark's own nodes do not queue behind them. Started
 * with fork(); talks to the benchmark over the IPC channel: 'status' (each node's peers and
 * jobs-topic subscription, and this process's RSS), 'deliveries' (every job request each
 * node accepted, with the time), 'gossip' (messages validated on the market topics, summed
 * over the nodes), 'usage' (this process's CPU and I/O so far, gossip validations on every
 * topic, bids made and awards won, and its event-loop delay since the last 'usage'), 'stop'.
 * Provider i has GPUS[i % 4] in REGIONS[i % 5], floor 0.50 + (i % 7) × 0.25.
 *
 * usage: fork(provider-shard.js, [BOOTSTRAP_ADDR, FIRST_INDEX, COUNT, DATA_DIR, HEARTBEAT_SECONDS?, 'advertise'?]);
 * with 'advertise' each provider also advertises its capability record, as the CLI's do.
 */
import { join } from 'node:path'
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks'
import { parseSimulatedGpus } from '../../src/capability/gpu/simulated-gpus.js'
import { parsePolicy } from '../../src/capability/policy/policy.js'
import { providerProfile, type ProviderProfile } from '../../src/capability/policy/profile.js'
import { CAPABILITY_SERVICE, capabilityServices, type CapabilityAdvertiser } from '../../src/capability/index.js'
import { resolveConfig } from '../../src/config/index.js'
import { toHex } from '../../src/common/index.js'
import { readJobRequest } from '../../src/market/shared/messages.js'
import { createNode, type IdlegridNode, type NodeExtensions } from '../../src/node/index.js'
import { providerMarketServices } from '../market/fixtures.js'
import { JOB_SHARD_TOPICS, jobShardOf } from '../../protocols/ids.js'
import { MARKET_PROVIDER_SERVICE, type MarketProviderService } from '../../src/market/provider/provider-service.js'
import { usageNow, type UsageSnapshot } from './process-usage.js'

const REGIONS = ['eu-west', 'eu-central', 'us-east', 'us-west', 'ap-south']
const GPUS = ['H100:80', 'A100:40', 'RTX 4090:24', 'L40S:48']
const START_BATCH = 5

export type ShardRequest = { type: 'status' } | { type: 'deliveries' } | { type: 'gossip' } | { type: 'usage' } | { type: 'stop' }

/** A shard's counters at one instant (the benchmark subtracts two). */
export interface ShardUsage {
  nodes: number
  usage: UsageSnapshot
  /** gossip messages validated (any verdict), summed over the nodes: on the job shards, and on every topic */
  marketValidated: number
  allValidated: number
  /** bids made (each one bid stream to its renter) and awards accepted (each one accept stream), summed */
  bids: number
  wins: number
  /** event-loop delay since the previous 'usage' (ms): how far behind this process ran */
  loopDelayP50Ms: number
  loopDelayP99Ms: number
  /** garbage collection: pause time so far (ms, every kind summed), and the longest pause since the previous 'usage' */
  gcMs: number
  gcMaxPauseMs: number
  /** connections opened so far (either direction), summed: each one a TLS handshake with a fresh certificate */
  connectionsOpened: number
}
export type ShardReply =
  | { type: 'ready' }
  | { type: 'status', nodes: Array<{ peerId: string, peers: string[], subscribed: boolean, advertised: boolean, publishing: boolean }>, rss: number }
  | { type: 'deliveries', deliveries: Array<[string, number]> }
  | { type: 'gossip', validated: number }
  | { type: 'usage', shard: ShardUsage }

/** Messages validated on every gossip topic and the heartbeat stream (any verdict), summed over `nodes`. */
export function allMessagesValidated (nodes: IdlegridNode[]): number {
  let n = 0
  for (const node of nodes) {
    for (const counts of Object.values(node.libp2p.services.gossip.stats())) {
      n += Object.values(counts).reduce((a, b) => a + b, 0)
    }
    // heartbeats arrive on their own stream since issue 15 item 3 (each one judged like a gossip message)
    n += Object.values(node.libp2p.services.heartbeats.stats()).reduce((a, b) => a + b, 0)
  }
  return n
}

/**
 * Messages validated on the market's gossip topics, the job shards (any verdict), summed over
 * `nodes`; bids and awards go on streams in version 2.
 */
export function marketMessagesValidated (nodes: IdlegridNode[]): number {
  let n = 0
  for (const node of nodes) {
    const stats = node.libp2p.services.gossip.stats()
    for (const topic of JOB_SHARD_TOPICS) n += Object.values(stats[topic] ?? {}).reduce((a, b) => a + b, 0)
  }
  return n
}

/** A provider as the CLI composes one: its market services, and its capability record advertised in the DHT. */
function advertisingProvider (profile: ProviderProfile): NodeExtensions {
  const market = providerMarketServices(profile, { advertised: true })
  const capability = capabilityServices({ profile })
  return {
    services: { ...capability.services, ...market.services },
    dhtValidators: { ...capability.dhtValidators, ...market.dhtValidators },
    dhtSelectors: { ...capability.dhtSelectors, ...market.dhtSelectors }
  }
}

async function main (): Promise<void> {
  const [bootstrap, firstArg, countArg, dir, heartbeatArg, advertiseArg] = process.argv.slice(2)
  const advertise = advertiseArg === 'advertise'
  const heartbeatSeconds = Number(heartbeatArg ?? 30)
  const first = Number(firstArg)
  const count = Number(countArg)
  if (
    bootstrap == null ||
    dir == null ||
    !Number.isInteger(first) ||
    !Number.isInteger(count) ||
    !(heartbeatSeconds > 0) ||
    process.send == null
  ) {
    process.stderr.write('provider-shard: start with fork(script, [BOOTSTRAP_ADDR, FIRST_INDEX, COUNT, DATA_DIR, HEARTBEAT_SECONDS?])\n')
    process.exit(2)
  }
  const send = (reply: ShardReply): void => { process.send?.(reply) }
  const nodes: IdlegridNode[] = []
  const deliveries: Array<[string, number]> = []
  const loopDelay = monitorEventLoopDelay({ resolution: 10 })
  loopDelay.enable()
  // GC pauses: thirty nodes share one heap here, and a long pause stalls every one of them at once
  let gcMs = 0
  let gcMaxPauseMs = 0
  new PerformanceObserver(list => {
    for (const entry of list.getEntries()) {
      gcMs += entry.duration
      gcMaxPauseMs = Math.max(gcMaxPauseMs, entry.duration)
    }
  }).observe({ entryTypes: ['gc'] })
  let connectionsOpened = 0
  const advertiser = (n: IdlegridNode): CapabilityAdvertiser | undefined =>
    (n.libp2p.services as Record<string, unknown>)[CAPABILITY_SERVICE] as CapabilityAdvertiser | undefined
  const market = (n: IdlegridNode): MarketProviderService =>
    n.libp2p.services[MARKET_PROVIDER_SERVICE] as unknown as MarketProviderService
  const start = async (i: number): Promise<IdlegridNode> => {
    const profile = providerProfile(parsePolicy({ region: REGIONS[i % REGIONS.length], priceFloor: 0.5 + (i % 7) * 0.25, images: ['*'] }), parseSimulatedGpus([GPUS[i % GPUS.length] as string]))
    const config = resolveConfig({ role: 'provider', flags: { dataDir: join(dir, `provider-${i}`), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [bootstrap], heartbeatSeconds } })
    const node = await createNode(config, advertise ? advertisingProvider(profile) : providerMarketServices(profile))
    node.libp2p.addEventListener('connection:open', () => { connectionsOpened++ })
    for (const topic of JOB_SHARD_TOPICS) {
      node.libp2p.services.gossip.onMessage(topic, (envelope) => {
        deliveries.push([toHex(readJobRequest(envelope).message.jobId), Date.now()])
      })
    }
    return node
  }
  for (let from = 0; from < count; from += START_BATCH) {
    nodes.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(START_BATCH, count - from) }, async (_, k) => await start(first + from + k))
      ))
    )
  }
  process.on('message', (msg: ShardRequest) => {
    if (msg.type === 'status') {
      send({
        type: 'status',
        rss: process.memoryUsage().rss,
        nodes: nodes.map(n => ({
          peerId: n.peerId.toString(),
          peers: n.libp2p.getConnections().map(c => c.remotePeer.toString()),
          subscribed: n.libp2p.services.pubsub.getSubscribers(jobShardOf(undefined)).length > 0,
          advertised: advertiser(n)?.lastPublished() != null,
          publishing: advertiser(n)?.publishing() ?? false
        }))
      })
    } else if (msg.type === 'deliveries') {
      send({ type: 'deliveries', deliveries })
    } else if (msg.type === 'gossip') {
      send({ type: 'gossip', validated: marketMessagesValidated(nodes) })
    } else if (msg.type === 'usage') {
      // under --cpu-prof: the profile's clock (monotonic µs), to cut the profile at the benchmark's phases
      if (process.execArgv.some(a => a.startsWith('--cpu-prof'))) process.stderr.write(`  provider-shard: usage asked at ${process.hrtime.bigint() / 1000n} µs (monotonic)\n`)
      const stats = nodes.map(n => market(n).stats())
      send({
        type: 'usage',
        shard: {
          nodes: nodes.length,
          usage: usageNow(),
          marketValidated: marketMessagesValidated(nodes),
          allValidated: allMessagesValidated(nodes),
          bids: stats.reduce((a, s) => a + s.bids, 0),
          wins: stats.reduce((a, s) => a + s.wins, 0),
          loopDelayP50Ms: loopDelay.percentile(50) / 1e6,
          loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
          gcMs,
          gcMaxPauseMs,
          connectionsOpened
        }
      })
      loopDelay.reset()
      gcMaxPauseMs = 0
    } else if (msg.type === 'stop') {
      void Promise.all(nodes.map(async n => { await n.stop() })).finally(() => process.exit(0))
    }
  })
  // the benchmark going away ends this process too
  process.on('disconnect', () => { void Promise.all(nodes.map(async n => { await n.stop() })).finally(() => process.exit(0)) })
  send({ type: 'ready' })
}

if (process.send != null) await main()
