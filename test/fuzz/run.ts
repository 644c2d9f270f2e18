/**
 * `npm run fuzz`: the full run. FUZZ_RUNS inputs in all (default 1 000 000), shared among the
 * targets by weight, each target in its own worker under a watchdog; prints one row per target
 * (inputs, inputs/s, rejections, crashes, hangs, slowest input, heap growth) and writes the
 * figures as JSON (FUZZ_OUT, default dist/fuzz-results.json). Failing inputs go to
 * test/fuzz/corpus/<target>/ (FUZZ_CORPUS). Exit code 1 when anything crashed or hung.
 *
 *   FUZZ_RUNS=1000000 FUZZ_SEED=1 FUZZ_TARGETS='^decode/' FUZZ_JOBS=1 npm run fuzz
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { saveCorpusInput, type TargetStats } from './engine.js'
import { TARGETS } from './targets/index.js'
import { repoRoot } from './vectors.js'
import type { WorkerJob } from './worker.js'

const TOTAL = Number(process.env.FUZZ_RUNS ?? 1_000_000)
const SEED = Number(process.env.FUZZ_SEED ?? 1)
const FILTER = new RegExp(process.env.FUZZ_TARGETS ?? '.')
const JOBS = Number(process.env.FUZZ_JOBS ?? 1)
const OUT = process.env.FUZZ_OUT ?? join(repoRoot(), 'dist', 'fuzz-results.json')
const CORPUS = process.env.FUZZ_CORPUS ?? join(repoRoot(), 'test', 'fuzz', 'corpus')
/** an input that returns after this long is a hang */
const HANG_MS = 5_000
/** a worker that starts no new input for this long is stuck on one: the watchdog ends it */
const WATCHDOG_MS = 60_000
const MIN_RUNS = Math.min(1_000, Math.ceil(TOTAL / 100))

/** Runs `runs` inputs of one target in workers, restarting after a hang the watchdog caught. */
async function fuzzTarget (name: string, runs: number, seed: number): Promise<TargetStats> {
  const total: TargetStats = {
    target: name,
    inputs: 0,
    accepted: 0,
    rejected: {},
    crashes: 0,
    hangs: 0,
    failures: [],
    seconds: 0,
    inputsPerSecond: 0,
    maxInputMs: 0,
    heapGrowthMiB: 0
  }
  let remaining = runs
  let attempt = 0
  while (remaining > 0) {
    const progress = new SharedArrayBuffer(8)
    const current = new SharedArrayBuffer(1024 * 1024)
    const job: WorkerJob = {
      target: name,
      runs: remaining,
      seed: seed + 1000 * attempt++,
      hangMs: HANG_MS,
      corpusDir: CORPUS,
      progress,
      current
    }
    const started = performance.now()
    const result = await new Promise<{ stats?: TargetStats, stuck?: number, error?: string }>((resolve) => {
      const worker = new Worker(new URL('./worker.js', import.meta.url), { workerData: job })
      const counter = new Int32Array(progress)
      let last = -1
      let lastChange = performance.now()
      const timer = setInterval(() => {
        const now = Atomics.load(counter, 0)
        if (now !== last) { last = now; lastChange = performance.now(); return }
        if (performance.now() - lastChange < WATCHDOG_MS) return
        clearInterval(timer)
        const length = Atomics.load(counter, 1)
        const input = new Uint8Array(current).slice(0, length)
        saveCorpusInput(CORPUS, name, input, `hang: no new input for ${WATCHDOG_MS} ms (watchdog)`)
        total.failures.push({ kind: 'hang', error: `watchdog: no new input for ${WATCHDOG_MS} ms`, hex: Buffer.from(input).toString('hex') })
        void worker.terminate().then(() => { resolve({ stuck: now }) })
      }, 1_000)
      worker.on('message', (msg: { stats: TargetStats }) => { clearInterval(timer); resolve({ stats: msg.stats }) })
      worker.on('error', (err) => { clearInterval(timer); resolve({ error: `${err.name}: ${err.message}` }) })
      worker.on('exit', () => { clearInterval(timer); resolve({ error: 'worker exited without a result' }) })
    })
    if (result.stats != null) {
      const s = result.stats
      total.inputs += s.inputs
      total.accepted += s.accepted
      for (const [k, v] of Object.entries(s.rejected)) total.rejected[k] = (total.rejected[k] ?? 0) + v
      total.crashes += s.crashes
      total.hangs += s.hangs
      total.failures.push(...s.failures)
      total.maxInputMs = Math.max(total.maxInputMs, s.maxInputMs)
      total.heapGrowthMiB = Math.max(total.heapGrowthMiB, s.heapGrowthMiB)
      total.seconds += s.seconds
      remaining = 0
    } else if (result.stuck != null) {
      total.hangs++
      total.inputs += result.stuck
      total.seconds += (performance.now() - started) / 1000
      remaining -= Math.max(1, result.stuck)
    } else {
      // the worker itself died (out of memory, a crash outside any input): a crash of the target
      total.crashes++
      total.failures.push({ kind: 'crash', error: result.error ?? 'unknown', hex: '' })
      total.seconds += (performance.now() - started) / 1000
      remaining = 0
    }
  }
  total.inputsPerSecond = Math.round(total.inputs / Math.max(total.seconds, 1e-6))
  return total
}

const pad = (s: string | number, n: number): string => String(s).padStart(n)

async function main (): Promise<void> {
  const targets = TARGETS.filter(t => FILTER.test(t.name))
  // weights come with the built target; building each here would cost a store per target, so read
  // them from a table of defaults
  const weights = await Promise.all(targets.map(async t => {
    const built = await t.build()
    const w = built.weight
    await built.close?.()
    return w
  }))
  const sum = weights.reduce((a, b) => a + b, 0)
  const plan = targets.map((t, i) => ({ name: t.name, runs: Math.max(MIN_RUNS, Math.round(TOTAL * weights[i] / sum)) }))
  console.log(`fuzzing ${plan.length} targets, ${plan.reduce((n, p) => n + p.runs, 0)} inputs in all, seed ${SEED}, ${JOBS} at a time`)
  const results: TargetStats[] = []
  const started = performance.now()
  let next = 0
  await Promise.all(Array.from({ length: JOBS }, async () => {
    while (next < plan.length) {
      const p = plan[next++]
      const stats = await fuzzTarget(p.name, p.runs, SEED)
      results.push(stats)
      const rejected = Object.values(stats.rejected).reduce((a, b) => a + b, 0)
      console.log(`${p.name.padEnd(28)} ${pad(stats.inputs, 8)} inputs ${pad(stats.inputsPerSecond, 7)}/s  accepted ${pad(stats.accepted, 7)}  rejected ${pad(rejected, 8)}  crashes ${stats.crashes}  hangs ${stats.hangs}  max ${pad(stats.maxInputMs.toFixed(1), 7)} ms  heap Δ ${stats.heapGrowthMiB} MiB`)
      for (const f of stats.failures) console.log(`  ${f.kind}: ${f.error.split('\n')[0]}  input ${f.hex.slice(0, 120)}${f.hex.length > 120 ? '…' : ''}`)
    }
  }))
  results.sort((a, b) => a.target.localeCompare(b.target))
  const summary = {
    at: new Date().toISOString(),
    seed: SEED,
    inputs: results.reduce((n, r) => n + r.inputs, 0),
    crashes: results.reduce((n, r) => n + r.crashes, 0),
    hangs: results.reduce((n, r) => n + r.hangs, 0),
    seconds: Math.round((performance.now() - started) / 100) / 10,
    targets: results
  }
  mkdirSync(dirname(OUT), { recursive: true })
  writeFileSync(OUT, JSON.stringify(summary, null, 2) + '\n')
  console.log(`\n${summary.inputs} inputs in ${summary.seconds} s: ${summary.crashes} crashes, ${summary.hangs} hangs. Figures: ${OUT}`)
  process.exitCode = summary.crashes + summary.hangs > 0 ? 1 : 0
}

await main()
