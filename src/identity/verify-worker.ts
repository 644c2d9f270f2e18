/**
 * A signature-verifying worker thread (verify-pool.ts): each message is a packed batch, each
 * reply one byte per signature (1 accepted, 0 refused) under the strict rule, noble deciding
 * every native "no" here rather than on the node's main thread.
 */
import { readlinkSync, writeFileSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'
import { parentPort } from 'node:worker_threads'
import { unpackBatch, VERIFIER_THREAD_NAME, type BatchReply, type BatchRequest } from './verify-batch.js'
import { verifyNativeSync } from './signature.js'

/**
 * how much nicer than the main thread the verifier runs: a shared core goes to the main thread
 * first (CFS weight ~1/9)
 */
export const VERIFIER_NICENESS = 10
/** the nicest a Linux thread can be */
const MAX_NICE = 19

/**
 * Linux gives each thread a nice value of its own (setpriority on a thread id). The pool has a
 * worker per core, so on a small machine the workers share cores with the main thread, whose
 * event loop (gossip, heartbeats, the ledger's own pipeline) must not wait behind a sync's
 * signatures. Elsewhere, or when refused, the worker keeps the process's priority.
 */
function lowerOwnPriority (): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    // relative to the thread's own (inherited) value: never above a process started nicer
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, Math.min(MAX_NICE, getPriority(tid) + VERIFIER_NICENESS))
  } catch {
    // not Linux, or not allowed: same priority as the main thread
  }
}

/** Names this thread (Linux: /proc/thread-self/comm); elsewhere, or when refused, it keeps its name. */
function nameOwnThread (): void {
  try {
    writeFileSync('/proc/thread-self/comm', VERIFIER_THREAD_NAME)
  } catch {
    // not Linux, or not allowed
  }
}

lowerOwnPriority()
nameOwnThread()

parentPort?.on('message', ({ id, packed }: BatchRequest) => {
  const items = unpackBatch(new Uint8Array(packed))
  const results = new Uint8Array(items.length)
  for (let i = 0; i < items.length; i++) {
    results[i] = verifyNativeSync(items[i].publicKey, items[i].message, items[i].signature) ? 1 : 0
  }
  const reply: BatchReply = { id, results }
  parentPort?.postMessage(reply, [results.buffer])
})
