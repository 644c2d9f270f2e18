/**
 * One target's run in a worker thread. Before each input the worker copies it into shared
 * memory and bumps a counter, so the watchdog in the main thread can name the input that hung
 * (an input that never returns cannot be caught in its own thread).
 */
import { parentPort, workerData } from 'node:worker_threads'
import { runTarget } from './engine.js'
import { targetByName } from './targets/index.js'

export interface WorkerJob {
  target: string
  runs: number
  seed: number
  hangMs: number
  corpusDir: string
  /** [0]: inputs started, [1]: length of the current input */
  progress: SharedArrayBuffer
  /** the current input's first bytes */
  current: SharedArrayBuffer
}

const job = workerData as WorkerJob
const progress = new Int32Array(job.progress)
const current = new Uint8Array(job.current)

const target = await targetByName(job.target).build()
try {
  const stats = await runTarget(target, {
    runs: job.runs,
    seed: job.seed,
    hangMs: job.hangMs,
    corpusDir: job.corpusDir,
    onInput: (input, count) => {
      current.set(input.subarray(0, current.length))
      Atomics.store(progress, 1, Math.min(input.length, current.length))
      Atomics.store(progress, 0, count)
    }
  })
  parentPort?.postMessage({ stats })
} finally {
  await target.close?.()
}
