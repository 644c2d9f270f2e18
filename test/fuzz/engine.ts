/**
 * Runs one fuzz target: `runs` inputs from fast-check with a fixed seed, each timed, each
 * result classified (accepted, rejected with a typed error, crash, hang). A failing input is
 * shrunk by fast-check, recorded (and written to the corpus when asked), and the run goes on
 * with the next seed until every input has been tried. Heap growth over the run is measured
 * after forced collections.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import fc from 'fast-check'
import { isTyped, type FuzzTarget } from './target.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

export interface Failure {
  kind: 'crash' | 'hang'
  error: string
  /** the shrunk input, hex */
  hex: string
}

export interface TargetStats {
  target: string
  inputs: number
  accepted: number
  /** rejections by typed error name (shrinking runs included) */
  rejected: Record<string, number>
  crashes: number
  hangs: number
  failures: Failure[]
  seconds: number
  inputsPerSecond: number
  /** slowest single input, ms */
  maxInputMs: number
  /** heap + array buffers retained after the run minus before, MiB (after forced GC) */
  heapGrowthMiB: number
}

export interface RunOptions {
  runs: number
  seed: number
  /** an input taking longer than this is a hang (it did return, but far too late) */
  hangMs: number
  /** where to keep failing inputs: <corpusDir>/<target>/<hash>.hex */
  corpusDir?: string
  /** told before each input (the worker copies it where the watchdog can read it) */
  onInput?: (input: Uint8Array, count: number) => void
  /** at most this many failures are shrunk and kept; the rest are counted */
  maxFailures?: number
}

class HangError extends Error {
  constructor (ms: number) {
    super(`one input took ${Math.round(ms)} ms`)
    this.name = 'HangError'
  }
}

function retainedBytes (): number {
  gc()
  const m = process.memoryUsage()
  return m.heapUsed + m.arrayBuffers
}

/** A failing input as kept in the corpus: <target with / as __>/<sha256 prefix>.hex */
export function saveCorpusInput (corpusDir: string, target: string, input: Uint8Array, note: string): string {
  const dir = join(corpusDir, target.replace(/\//g, '__'))
  mkdirSync(dir, { recursive: true })
  const name = createHash('sha256').update(input).digest('hex').slice(0, 16)
  const file = join(dir, `${name}.hex`)
  writeFileSync(file, Buffer.from(input).toString('hex') + '\n')
  writeFileSync(join(dir, `${name}.txt`), note.slice(0, 2000) + '\n')
  return file
}

export async function runTarget (target: FuzzTarget, opts: RunOptions): Promise<TargetStats> {
  const stats: TargetStats = {
    target: target.name,
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
  const before = retainedBytes()
  const started = performance.now()
  let count = 0

  const classify = (err: unknown): void => {
    if (err === undefined) { stats.accepted++; return }
    if (isTyped(err, target.typed)) {
      const name = (err as Error).name
      stats.rejected[name] = (stats.rejected[name] ?? 0) + 1
      return
    }
    throw err
  }
  const timed = (t0: number): void => {
    const ms = performance.now() - t0
    if (ms > stats.maxInputMs) stats.maxInputMs = ms
    if (ms > opts.hangMs) throw new HangError(ms)
  }
  const syncProp = fc.property(target.arbitrary, (input) => {
    opts.onInput?.(input, ++count)
    const t0 = performance.now()
    let caught: unknown
    try {
      const returned = target.run(input)
      if (returned != null) throw new Error(`${target.name} is not async but its run returned a promise`)
    } catch (err) { caught = err }
    timed(t0)
    classify(caught)
  })
  const asyncProp = fc.asyncProperty(target.arbitrary, async (input) => {
    opts.onInput?.(input, ++count)
    const t0 = performance.now()
    let caught: unknown
    try { await target.run(input) } catch (err) { caught = err }
    timed(t0)
    classify(caught)
  })

  let remaining = opts.runs
  let seed = opts.seed
  while (remaining > 0) {
    const details = target.async
      ? await fc.check(asyncProp, { numRuns: remaining, seed })
      : fc.check(syncProp, { numRuns: remaining, seed })
    const ran = Math.max(1, details.numRuns)
    stats.inputs += Math.min(ran, remaining)
    remaining -= ran
    seed++
    if (!details.failed || details.counterexample == null) continue
    const input = details.counterexample[0]
    const err = details.errorInstance
    const kind = err instanceof HangError ? 'hang' : 'crash'
    if (kind === 'hang') stats.hangs++
    else stats.crashes++
    if (stats.failures.length < (opts.maxFailures ?? 20)) {
      const error = err instanceof Error ? `${err.name}: ${err.message}\n${err.stack?.split('\n').slice(1, 6).join('\n') ?? ''}` : String(err)
      stats.failures.push({ kind, error, hex: Buffer.from(input).toString('hex') })
      if (opts.corpusDir != null) saveCorpusInput(opts.corpusDir, target.name, input, `${kind} (seed ${seed - 1}): ${error}`)
    }
  }
  stats.seconds = (performance.now() - started) / 1000
  stats.inputsPerSecond = Math.round(stats.inputs / Math.max(stats.seconds, 1e-6))
  stats.heapGrowthMiB = Math.round((retainedBytes() - before) / 1024 / 1024 * 10) / 10
  return stats
}

/** Replays one kept input: throws when it still breaks the target (not a typed error, or too slow). */
export async function replayInput (target: FuzzTarget, input: Uint8Array, hangMs: number): Promise<'accepted' | 'rejected'> {
  const t0 = performance.now()
  let caught: unknown
  try { await target.run(input) } catch (err) { caught = err }
  const ms = performance.now() - t0
  if (ms > hangMs) throw new HangError(ms)
  if (caught === undefined) return 'accepted'
  if (isTyped(caught, target.typed)) return 'rejected'
  throw caught
}
