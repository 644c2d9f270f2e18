/**
 * The benchmark side of test/bench/provider-shard.ts: fork a shard of providers, ask it
 * questions over IPC, stop it.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { sleep } from '../../src/common/index.js'
import type { ShardReply, ShardRequest, ShardUsage } from './provider-shard.js'

const SHARD_SCRIPT = fileURLToPath(new URL('./provider-shard.js', import.meta.url))

export interface Shard { child: ChildProcess, ask: <T extends ShardReply['type']>(request: ShardRequest, reply: T) => Promise<Extract<ShardReply, { type: T }>> }

export interface ShardOptions {
  /** the bootstrap node's multiaddr */
  bootstrap: string
  /** index of the shard's first provider (profiles depend on it) */
  first: number
  count: number
  /** data directory for the shard's nodes */
  dir: string
  heartbeatSeconds?: number
  /** the providers advertise capability records in the DHT, as the CLI's do (renters find them by discovery) */
  advertise?: boolean
}

/** Forks a provider shard and waits (bounded) until its nodes are up. */
export async function startShard ({
  bootstrap,
  first,
  count,
  dir,
  heartbeatSeconds = 30,
  advertise = false
}: ShardOptions): Promise<Shard> {
  // BENCH_SHARD_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the providers' processes
  const execArgv = [...process.execArgv, ...(process.env.BENCH_SHARD_NODE_ARGS ?? '').split(' ').filter(a => a !== '')]
  const child = fork(SHARD_SCRIPT, [bootstrap, String(first), String(count), dir, String(heartbeatSeconds), advertise ? 'advertise' : ''], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv })
  const next = async <T extends ShardReply['type']>(type: T, timeoutMs = 60_000): Promise<Extract<ShardReply, { type: T }>> => await new Promise((resolve, reject) => {
    const timer = setTimeout(() => { done(); reject(new Error(`shard ${first}: no ${type} reply within ${timeoutMs} ms`)) }, timeoutMs)
    const onMessage = (msg: ShardReply): void => {
      if (msg.type === type) {
        done()
        resolve(msg as Extract<ShardReply, { type: T }>)
      }
    }
    const onExit = (code: number | null): void => { done(); reject(new Error(`shard ${first} exited with ${String(code)}`)) }
    function done (): void { clearTimeout(timer); child.off('message', onMessage); child.off('exit', onExit) }
    child.on('message', onMessage)
    child.once('exit', onExit)
  })
  await next('ready', 180_000)
  return {
    child,
    ask: async (request, reply) => {
      const answer = next(reply)
      child.send(request)
      return await answer
    }
  }
}

/** Asks the shard to stop its nodes; kills it after 15 s. */
export async function stopShard (shard: Shard): Promise<void> {
  const exited = new Promise(resolve => shard.child.once('exit', resolve))
  if (shard.child.connected) shard.child.send({ type: 'stop' } satisfies ShardRequest)
  await Promise.race([exited, sleep(15_000)])
  shard.child.kill('SIGKILL')
}

/**
 * The children's counters summed (CPU, bytes, validations, bids, wins), and their worst event-loop
 * delay and GC pause.
 */
export async function usageOf (shards: Shard[]): Promise<ShardUsage> {
  const all = await Promise.all(shards.map(async s => (await s.ask({ type: 'usage' }, 'usage')).shard))
  return all.reduce((a, b) => ({
    nodes: a.nodes + b.nodes,
    usage: {
      cpuMs: a.usage.cpuMs + b.usage.cpuMs,
      readBytes: a.usage.readBytes + b.usage.readBytes,
      writtenBytes: a.usage.writtenBytes + b.usage.writtenBytes
    },
    marketValidated: a.marketValidated + b.marketValidated,
    allValidated: a.allValidated + b.allValidated,
    bids: a.bids + b.bids,
    wins: a.wins + b.wins,
    loopDelayP50Ms: Math.max(a.loopDelayP50Ms, b.loopDelayP50Ms),
    loopDelayP99Ms: Math.max(a.loopDelayP99Ms, b.loopDelayP99Ms),
    gcMs: a.gcMs + b.gcMs,
    gcMaxPauseMs: Math.max(a.gcMaxPauseMs, b.gcMaxPauseMs),
    connectionsOpened: a.connectionsOpened + b.connectionsOpened
  }))
}
