/**
 * A share of test/bench/network.bench.ts's providers in their own process, so the 50 nodes
 * use every core rather than one event loop. Started with fork(); talks to the benchmark over
 * the IPC channel: 'status' (each node's peers and jobs-topic subscription, and this
 * process's RSS), 'deliveries' (every job request each node accepted, with the time), 'stop'.
 *
 * usage: fork(network-shard.js, [BOOTSTRAP_ADDR, FIRST_INDEX, COUNT, DATA_DIR])
 */
import { join } from 'node:path'
import { parsePolicy, parseSimulatedGpus, providerProfile } from '../../src/capability/index.js'
import { resolveConfig } from '../../src/config/index.js'
import { marketExtensions, readJobRequest, toHex } from '../../src/market/index.js'
import { createNode, type IdlegridNode } from '../../src/node/index.js'
import { TOPIC } from '../../protocols/ids.js'

const REGIONS = ['eu-west', 'eu-central', 'us-east', 'us-west', 'ap-south']
const GPUS = ['H100:80', 'A100:40', 'RTX 4090:24', 'L40S:48']
const START_BATCH = 5

export type ShardRequest = { type: 'status' } | { type: 'deliveries' } | { type: 'stop' }
export type ShardReply =
  | { type: 'ready' }
  | { type: 'status', nodes: Array<{ peerId: string, peers: string[], subscribed: boolean }>, rss: number }
  | { type: 'deliveries', deliveries: Array<[string, number]> }

async function main (): Promise<void> {
  const [bootstrap, firstArg, countArg, dir] = process.argv.slice(2)
  const first = Number(firstArg)
  const count = Number(countArg)
  if (bootstrap == null || dir == null || !Number.isInteger(first) || !Number.isInteger(count) || process.send == null) {
    process.stderr.write('network-shard: start with fork(script, [BOOTSTRAP_ADDR, FIRST_INDEX, COUNT, DATA_DIR])\n')
    process.exit(2)
  }
  const send = (reply: ShardReply): void => { process.send?.(reply) }
  const nodes: IdlegridNode[] = []
  const deliveries: Array<[string, number]> = []
  const start = async (i: number): Promise<IdlegridNode> => {
    const profile = providerProfile(parsePolicy({ region: REGIONS[i % REGIONS.length], priceFloor: 0.5 + (i % 7) * 0.25, images: ['*'] }), parseSimulatedGpus([GPUS[i % GPUS.length] as string]))
    const config = resolveConfig({ role: 'provider', flags: { dataDir: join(dir, `provider-${i}`), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [bootstrap], heartbeatSeconds: 30 } })
    const node = await createNode(config, marketExtensions({ role: 'provider', provider: { profile: () => profile } }))
    node.libp2p.services.gossip.onMessage(TOPIC.jobs, (envelope) => {
      deliveries.push([toHex(readJobRequest(envelope).message.jobId), Date.now()])
    })
    return node
  }
  for (let from = 0; from < count; from += START_BATCH) {
    nodes.push(...await Promise.all(Array.from({ length: Math.min(START_BATCH, count - from) }, async (_, k) => await start(first + from + k))))
  }
  process.on('message', (msg: ShardRequest) => {
    if (msg.type === 'status') {
      send({
        type: 'status',
        rss: process.memoryUsage().rss,
        nodes: nodes.map(n => ({
          peerId: n.peerId.toString(),
          peers: n.libp2p.getConnections().map(c => c.remotePeer.toString()),
          subscribed: n.libp2p.services.pubsub.getSubscribers(TOPIC.jobs).length > 0
        }))
      })
    } else if (msg.type === 'deliveries') {
      send({ type: 'deliveries', deliveries })
    } else if (msg.type === 'stop') {
      void Promise.all(nodes.map(async n => { await n.stop() })).finally(() => process.exit(0))
    }
  })
  // the benchmark going away ends this process too
  process.on('disconnect', () => { void Promise.all(nodes.map(async n => { await n.stop() })).finally(() => process.exit(0)) })
  send({ type: 'ready' })
}

if (process.send != null) await main()
