/**
 * The idle benchmark's providers, in a process of their own (test/bench/idle.bench.ts forks
 * it). Mode "full" builds each provider as the CLI does (src/compose/build-node.ts: capability
 * advertiser, market, exec, ledger, serve); mode "market" as the auction benchmark's
 * provider-shard.ts does (market services over a slot scheduler). IPC: 'status' (each node's
 * connection count and when its capability record was last published), 'usage' (this process's CPU
 * so far and its event-loop delay since the last ask), 'profile' (start, then stop and write a CPU
 * profile), 'stop'; with idle-timers.js preloaded it also answers 'timers'.
 *
 * usage: fork(idle-shard.js, [BOOTSTRAP_ADDR, COUNT, DATA_DIR, MODE, HEARTBEAT_SECONDS])
 */
import { writeFile } from 'node:fs/promises'
import { Session } from 'node:inspector/promises'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { parseSimulatedGpus } from '../../src/capability/gpu/simulated-gpus.js'
import { parsePolicy } from '../../src/capability/policy/policy.js'
import { providerProfile } from '../../src/capability/policy/profile.js'
import { resolveConfig } from '../../src/config/index.js'
import { buildNode } from '../../src/compose/index.js'
import { CAPABILITY_SERVICE, type CapabilityAdvertiser } from '../../src/capability/index.js'
import { createNode, type IdlegridNode } from '../../src/node/index.js'
import { providerMarketServices } from '../market/fixtures.js'
import { usageNow, type UsageSnapshot } from './process-usage.js'

const REGIONS = ['eu-west', 'eu-central', 'us-east', 'us-west', 'ap-south']
const GPUS = ['H100:80', 'A100:40', 'RTX 4090:24', 'L40S:48']
const START_BATCH = 5

export type IdleMode = 'full' | 'market'
export type IdleRequest = { type: 'status' } | { type: 'usage' } | { type: 'timers' } | { type: 'profile', file?: string } | { type: 'stop' }
export type IdleReply =
  | { type: 'ready' }
  | { type: 'status', connections: number[], publishedAt: Array<number | null> }
  | { type: 'usage', usage: UsageSnapshot, loopDelayP50Ms: number, loopDelayP99Ms: number, connectionsOpened: number, connectionsClosed: number, guard: Record<string, number> }
  | { type: 'profile' }

/** 'profile' without a file starts V8's CPU profiler, with one stops it and writes the profile there (.cpuprofile). */
async function profile (session: Session, file: string | undefined): Promise<void> {
  if (file == null) {
    session.connect()
    await session.post('Profiler.enable')
    await session.post('Profiler.start')
  } else {
    const { profile } = await session.post('Profiler.stop')
    await writeFile(file, JSON.stringify(profile))
    session.disconnect()
  }
}

async function main (): Promise<void> {
  const [bootstrap, countArg, dir, modeArg, heartbeatArg] = process.argv.slice(2)
  const count = Number(countArg)
  const mode = modeArg as IdleMode
  const heartbeatSeconds = Number(heartbeatArg)
  if (bootstrap == null || dir == null || !Number.isInteger(count) || !['full', 'market'].includes(mode) || !(heartbeatSeconds > 0) || process.send == null) {
    process.stderr.write('idle-shard: start with fork(script, [BOOTSTRAP_ADDR, COUNT, DATA_DIR, full|market, HEARTBEAT_SECONDS])\n')
    process.exit(2)
  }
  const send = (reply: IdleReply): void => { process.send?.(reply) }
  const loopDelay = monitorEventLoopDelay({ resolution: 10 })
  loopDelay.enable()
  const start = async (i: number): Promise<IdlegridNode> => {
    const profile = providerProfile(parsePolicy({ region: REGIONS[i % REGIONS.length], priceFloor: 0.5 + (i % 7) * 0.25, images: ['*'] }), parseSimulatedGpus([GPUS[i % GPUS.length] as string]))
    const config = resolveConfig({ role: 'provider', flags: { dataDir: join(dir, `provider-${i}`), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [bootstrap], heartbeatSeconds } })
    return mode === 'full'
      ? await buildNode(config, { provider: { profile, runner: 'process' } }) as unknown as IdlegridNode
      : await createNode(config, providerMarketServices(profile))
  }
  const nodes: IdlegridNode[] = []
  // connection churn (summed over the nodes): an idle network should open and close none
  let opened = 0
  let closed = 0
  for (let from = 0; from < count; from += START_BATCH) {
    nodes.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(START_BATCH, count - from) }, async (_, k) => await start(from + k))
      ))
    )
  }
  for (const n of nodes) {
    n.libp2p.addEventListener('connection:open', () => { opened++ })
    n.libp2p.addEventListener('connection:close', () => { closed++ })
  }
  const session = new Session()
  // the peer guards' counters summed (a denial disconnects a peer: churn that is not idle)
  const guardCounters = (): Record<string, number> => {
    const sum: Record<string, number> = {}
    for (const n of nodes) {
      for (const [k, v] of Object.entries(n.libp2p.services.peerGuard.snapshot().counters)) sum[k] = (sum[k] ?? 0) + v
    }
    return sum
  }
  const stopAll = (): void => {
    void Promise.all(
      nodes.map(async n => {
        await n.stop()
      })
    ).finally(() => process.exit(0))
  }
  process.on('message', (msg: IdleRequest) => {
    if (msg.type === 'status') {
      // when each node's capability advertiser last published (market mode has none: 0)
      const publishedAt = nodes.map(n => {
        const advertiser = (n.libp2p.services as Record<string, unknown>)[CAPABILITY_SERVICE] as
          CapabilityAdvertiser | undefined
        return advertiser == null ? 0 : advertiser.lastPublished()?.at ?? null
      })
      send({ type: 'status', connections: nodes.map(n => n.libp2p.getConnections().length), publishedAt })
    } else if (msg.type === 'usage') {
      send({ type: 'usage', usage: usageNow(), loopDelayP50Ms: loopDelay.percentile(50) / 1e6, loopDelayP99Ms: loopDelay.percentile(99) / 1e6, connectionsOpened: opened, connectionsClosed: closed, guard: guardCounters() })
      loopDelay.reset()
    } else if (msg.type === 'profile') {
      void profile(session, msg.file).then(() => { send({ type: 'profile' }) }, (err) => { process.stderr.write(`idle-shard: profile: ${String(err)}\n`) })
    } else if (msg.type === 'stop') stopAll()
  })
  process.on('disconnect', stopAll)
  send({ type: 'ready' })
}

if (process.send != null) await main()
