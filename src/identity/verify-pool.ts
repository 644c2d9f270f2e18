/**
 * Signatures verified in batches by worker threads, off the node's main thread (ledger sync
 * verifies tens of thousands, and the main thread has the decoding, chain checks and storage
 * to do meanwhile). Requests made in one turn of the event loop are flushed together: a
 * handful is verified at once on the main thread (a worker's round trip would cost more), a
 * batch goes to the workers in chunks. Nothing is lost to a worker that dies: its chunks are
 * verified on the main thread, and a new worker is started for the next batch.
 */
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { packBatch, type BatchReply, type BatchRequest } from './verify-batch.js'
import type { SignedBytes } from './signature.js'

export interface VerifyPoolOptions {
  /**
   * worker threads (default: one per core, between 1 and 4, at a lower priority than the main
   * thread; 0 verifies everything inline)
   */
  threads?: number
  /** fewer requests than this in a flush are verified inline (default 16) */
  minBatch?: number
  /** signatures per chunk sent to a worker (default 128) */
  chunk?: number
  /** the strict verification, synchronous: inline, and for the chunks of a worker that died */
  verifyInline: (item: SignedBytes) => boolean
}

interface Request { item: SignedBytes, resolve: (ok: boolean) => void }

interface Slot {
  worker: Worker
  /** chunks sent and not answered, by id */
  pending: Map<number, Request[]>
  answered: boolean
  /** stopped by close() or resize(): its end is not a failure to start */
  closing: boolean
  /** over resize()'s bound: stops once its chunks are answered, and is sent none */
  retired: boolean
  /** its end was handled (its 'error' and 'exit' both come) */
  ended: boolean
}

/** Workers that may die in a row before answering anything, before the pool verifies inline for good. */
const MAX_START_FAILURES = 3

/** A worker per core, between 1 and 4: the default bound. */
export function defaultVerifierThreads (): number {
  return Math.max(1, Math.min(4, availableParallelism()))
}

/** The most worker threads a pool may be given (resize, the `ledger.verifierThreads` config). */
export const MAX_VERIFIER_THREADS = 16

export class VerifyPool {
  /** worker threads at most */
  private maxThreads: number
  private readonly minBatch: number
  private readonly chunk: number
  private readonly verifyInline: (item: SignedBytes) => boolean
  private readonly slots: Slot[] = []
  private queue: Request[] = []
  private flushScheduled = false
  private nextId = 1
  private startFailures = 0

  constructor (opts: VerifyPoolOptions) {
    // a worker per core: they run only while there are signatures to check, and below the
    // main thread's priority (verify-worker.ts), so a sync takes every core the node has idle
    this.maxThreads = opts.threads ?? defaultVerifierThreads()
    this.minBatch = opts.minBatch ?? 16
    this.chunk = opts.chunk ?? 128
    this.verifyInline = opts.verifyInline
  }

  /**
   * `item`'s verdict under verifyInline's rule, from a worker or inline. Not an async function:
   * sync calls it twice per entry, and the extra promise and tick each was garbage.
   */
  verify (item: SignedBytes): Promise<boolean> {
    return new Promise<boolean>(resolve => {
      this.queue.push({ item, resolve })
      if (!this.flushScheduled) {
        this.flushScheduled = true
        setImmediate(() => { this.flush() })
      }
    })
  }

  /** Worker threads at most. */
  get threads (): number {
    return this.maxThreads
  }

  /**
   * Sets the most worker threads (0: everything inline). Workers over the new bound stop once
   * their chunks are answered; what they hold is never lost (stopped workers' chunks are
   * verified inline).
   */
  resize (threads: number): void {
    if (!Number.isInteger(threads) || threads < 0 || threads > MAX_VERIFIER_THREADS) {
      throw new RangeError(`verifier threads must be an integer from 0 to ${MAX_VERIFIER_THREADS}, not ${threads}`)
    }
    this.maxThreads = threads
    for (const slot of this.slots.splice(threads)) {
      slot.closing = true
      slot.retired = true
      if (slot.pending.size === 0) void slot.worker.terminate()
    }
  }

  /** Worker threads running now. */
  get running (): number {
    return this.slots.length
  }

  /** Stops the workers; their unanswered chunks are verified inline. Later requests start new ones. */
  async close (): Promise<void> {
    await Promise.all(this.slots.map(async slot => {
      slot.closing = true
      await slot.worker.terminate()
    }))
  }

  private flush (): void {
    this.flushScheduled = false
    const requests = this.queue
    this.queue = []
    if (requests.length < this.minBatch || this.maxThreads === 0 || !this.ensureWorkers()) {
      for (const request of requests) request.resolve(this.verifyInline(request.item))
      return
    }
    for (let i = 0; i < requests.length; i += this.chunk) this.send(requests.slice(i, i + this.chunk))
  }

  /** Whether workers are running (started now if need be). */
  private ensureWorkers (): boolean {
    while (this.slots.length < this.maxThreads && this.startFailures < MAX_START_FAILURES) {
      try {
        this.slots.push(this.start())
      } catch {
        this.startFailures++
      }
    }
    return this.slots.length > 0
  }

  private start (): Slot {
    const worker = new Worker(new URL('./verify-worker.js', import.meta.url))
    const slot: Slot = { worker, pending: new Map(), answered: false, closing: false, retired: false, ended: false }
    worker.on('message', ({ id, results }: BatchReply) => {
      const requests = slot.pending.get(id)
      if (requests == null) return
      slot.pending.delete(id)
      slot.answered = true
      this.startFailures = 0
      if (slot.pending.size === 0) worker.unref()
      requests.forEach((request, i) => { request.resolve(results[i] === 1) })
      if (slot.retired && slot.pending.size === 0) void worker.terminate()
    })
    const lost = (): void => {
      if (slot.ended) return // 'error' comes before 'exit': handled once
      slot.ended = true
      const at = this.slots.indexOf(slot)
      if (at >= 0) this.slots.splice(at, 1)
      if (!slot.answered && !slot.closing) this.startFailures++
      for (const requests of slot.pending.values()) {
        for (const request of requests) request.resolve(this.verifyInline(request.item))
      }
      slot.pending.clear()
    }
    worker.on('error', lost)
    worker.on('exit', lost)
    // an idle worker must not keep the process alive; a busy one must, or an awaited verdict is
    // lost. After the listeners: Node refs a worker's port again when a 'message' listener is
    // added, so a worker that never got a chunk kept its process from exiting
    worker.unref()
    return slot
  }

  private send (requests: Request[]): void {
    let slot = this.slots[0] as Slot
    for (const other of this.slots) if (other.pending.size < slot.pending.size) slot = other
    const id = this.nextId++
    const message: BatchRequest = { id, packed: packBatch(requests.map(r => r.item)) }
    slot.pending.set(id, requests)
    slot.worker.ref()
    slot.worker.postMessage(message, [message.packed])
  }
}
