/**
 * Idle benchmark: what a provider node spends doing nothing. A bootstrap in this process and
 * N providers in a child (test/bench/idle-shard.ts), on 127.0.0.1; once they have settled,
 * the child's CPU over a quiet window, per provider node per second (the floor of every
 * per-node cost in the network benchmark, and what makes a process of thirty providers lag
 * in the auction benchmark). No jobs, no renters.
 * Env: IDLE_BENCH_PROVIDERS (10), IDLE_BENCH_SECONDS (30, the measured window),
 * IDLE_BENCH_SETTLE_SECONDS (20, after every provider has a connection and has published its
 * capability record, with no round in the last 10 s), IDLE_BENCH_MODE
 * (full: providers built as the CLI builds them; market: as the auction benchmark's),
 * IDLE_BENCH_HEARTBEAT_SECONDS (10, the default), IDLE_BENCH_TIMERS=1 (count timer callbacks
 * by the place that armed them, test/bench/idle-timers.ts; the count costs CPU itself, so the
 * CPU figure of such a run is not the one to quote), IDLE_BENCH_PROFILE=FILE (a V8 CPU profile of
 * the child over the measured window only; then `node dist/test/bench/idle-profile.js [--inclusive] FILE`),
 * IDLE_BENCH_NODE_ARGS (more node flags for the child).
 */
import { fork } from 'node:child_process'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { roleExtensions } from '../../src/compose/index.js'
import { sleep } from '../../src/common/index.js'
import { startInProcessNetwork, tempDir, waitFor } from '../utils/index.js'
import { usageNow, usageSince } from './process-usage.js'
import type { IdleReply, IdleRequest } from './idle-shard.js'
import type { TimersReply } from './idle-timers.js'

const PROVIDERS = Number(process.env.IDLE_BENCH_PROVIDERS ?? 10)
const SECONDS = Number(process.env.IDLE_BENCH_SECONDS ?? 30)
const SETTLE_SECONDS = Number(process.env.IDLE_BENCH_SETTLE_SECONDS ?? 20)
const MODE = process.env.IDLE_BENCH_MODE ?? 'full'
const HEARTBEAT_SECONDS = Number(process.env.IDLE_BENCH_HEARTBEAT_SECONDS ?? 10)
const COUNT_TIMERS = process.env.IDLE_BENCH_TIMERS === '1'
const PROFILE = process.env.IDLE_BENCH_PROFILE
const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url))

export default async (): Promise<Record<string, unknown>> => {
  const loadAtStart = loadavg()[0] as number
  const net = await startInProcessNetwork({
    providers: 0,
    renters: 0,
    heartbeatSeconds: HEARTBEAT_SECONDS,
    extensions: (_role, _i, config) => roleExtensions(config)
  })
  const dir = await tempDir('idlegrid-bench-idle-')
  const execArgv = [
    ...process.execArgv,
    ...(COUNT_TIMERS ? ['--import', here('./idle-timers.js')] : []),
    ...(process.env.IDLE_BENCH_NODE_ARGS ?? '').split(' ').filter(a => a !== '')
  ]
  const child = fork(here('./idle-shard.js'), [net.bootstrap.libp2p.getMultiaddrs()[0]?.toString() as string, String(PROVIDERS), dir.path, MODE, String(HEARTBEAT_SECONDS)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv })
  const ask = async <T extends IdleReply | TimersReply>(request: IdleRequest | { type: 'ready' }, type: T['type'], timeoutMs = 60_000): Promise<T> => await new Promise((resolve, reject) => {
    const timer = setTimeout(() => { done(); reject(new Error(`idle shard: no ${type} reply within ${timeoutMs} ms`)) }, timeoutMs)
    const onMessage = (msg: IdleReply | TimersReply): void => { if (msg.type === type) { done(); resolve(msg as T) } }
    const onExit = (code: number | null): void => { done(); reject(new Error(`idle shard exited with ${String(code)}`)) }
    function done (): void { clearTimeout(timer); child.off('message', onMessage); child.off('exit', onExit) }
    child.on('message', onMessage)
    child.once('exit', onExit)
    if (request.type !== 'ready') child.send(request)
  })
  try {
    await ask({ type: 'ready' }, 'ready', 180_000)
    const status = async (): Promise<Extract<IdleReply, { type: 'status' }>> => await ask({ type: 'status' }, 'status')
    const connections = async (): Promise<number[]> => (await status()).connections
    await waitFor(async () => (await connections()).every(c => c > 0), { timeoutMs: 120_000, intervalMs: 1_000, what: 'every provider to have a connection' })
    // start-up work is not idle: every capability record published (the first rounds of ten
    // nodes at once take tens of seconds on a loaded machine), and nothing published for 10 s
    const startedPublishing = Date.now()
    await waitFor(async () => (await status()).publishedAt.every(at => at != null && Date.now() - at > 10_000), { timeoutMs: 180_000, intervalMs: 1_000, what: 'every provider to have published its capability record' })
    const publishSeconds = (Date.now() - startedPublishing) / 1000
    process.stderr.write(`  ${PROVIDERS} providers (${MODE}) up and published (${publishSeconds.toFixed(0)} s); settling ${SETTLE_SECONDS} s\n`)
    await sleep(SETTLE_SECONDS * 1000)
    if (COUNT_TIMERS) await ask({ type: 'timers' }, 'timers')
    if (PROFILE != null) await ask({ type: 'profile' }, 'profile')
    const before = await ask<Extract<IdleReply, { type: 'usage' }>>({ type: 'usage' }, 'usage')
    const bootstrapBefore = usageNow()
    const startedAt = Date.now()
    await sleep(SECONDS * 1000)
    const after = await ask<Extract<IdleReply, { type: 'usage' }>>({ type: 'usage' }, 'usage')
    const seconds = (Date.now() - startedAt) / 1000
    if (PROFILE != null) await ask({ type: 'profile', file: PROFILE }, 'profile')
    const bootstrap = usageSince(bootstrapBefore)
    const timers = COUNT_TIMERS ? await ask<TimersReply>({ type: 'timers' }, 'timers') : undefined
    const conns = await connections()
    const cpuMs = after.usage.cpuMs - before.usage.cpuMs
    return {
      mode: MODE,
      providers: PROVIDERS,
      heartbeatSeconds: HEARTBEAT_SECONDS,
      windowSeconds: Number(seconds.toFixed(1)),
      startupPublishedAfterSeconds: Number(publishSeconds.toFixed(0)),
      providerCpuMsPerSecondPerNode: Number((cpuMs / seconds / PROVIDERS).toFixed(2)),
      providerProcessCpuPercent: Number((cpuMs / seconds / 10).toFixed(1)),
      providerReadBytesPerSecondPerNode: Math.round(
        (after.usage.readBytes - before.usage.readBytes) / seconds / PROVIDERS
      ),
      providerWrittenBytesPerSecondPerNode: Math.round(
        (after.usage.writtenBytes - before.usage.writtenBytes) / seconds / PROVIDERS
      ),
      providerLoopDelayP99Ms: Number(after.loopDelayP99Ms.toFixed(1)),
      bootstrapCpuMsPerSecond: Number((bootstrap.cpuMs / seconds).toFixed(2)),
      connectionsOpenedInWindowPerProvider: Number(
        ((after.connectionsOpened - before.connectionsOpened) / PROVIDERS).toFixed(1)
      ),
      connectionsClosedInWindowPerProvider: Number(
        ((after.connectionsClosed - before.connectionsClosed) / PROVIDERS).toFixed(1)
      ),
      peerGuardInWindow: Object.fromEntries(
        Object.entries(after.guard).map(([k, v]) => [k, v - (before.guard[k] ?? 0)])
      ),
      connectionsPerProviderMean: Number((conns.reduce((a, b) => a + b, 0) / conns.length).toFixed(1)),
      ...(timers != null
        ? {
            timerCallbacksPerSecondPerNode: Number(
              (timers.sites.reduce((a, s) => a + s.fired, 0) / (timers.windowMs / 1000) / PROVIDERS).toFixed(2)
            ),
            // the 20 busiest timer sites: callbacks per second per node, and their own synchronous CPU
            topTimers: timers.sites.slice(0, 20).map(s => `${(s.fired / (timers.windowMs / 1000) / PROVIDERS).toFixed(2)}/s ${s.cpuMs} ms ${s.kind} ${s.site}`)
          }
        : {}),
      loadAverage1mAtStart: Number(loadAtStart.toFixed(2)),
      loadAverage1mAtEnd: Number((loadavg()[0] as number).toFixed(2))
    }
  } finally {
    const exited = new Promise(resolve => child.once('exit', resolve))
    if (child.connected) child.send({ type: 'stop' } satisfies IdleRequest)
    await Promise.race([exited, sleep(15_000)])
    child.kill('SIGKILL')
    await net.stop()
    await dir.cleanup()
  }
}
