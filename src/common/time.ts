import { CodedError } from './errors.js'

/**
 * A bounded wait ran out; `what` names what was awaited. The common room's one error: its
 * name is the one `AbortSignal.timeout` and libp2p give theirs, so `err.name === 'TimeoutError'`
 * catches all three.
 */
export class TimeoutError extends CodedError<'ERR_TIMEOUT'> {
  constructor (readonly what: string, readonly timeoutMs: number, cause?: unknown) {
    super('ERR_TIMEOUT', `timed out after ${timeoutMs} ms waiting for ${what}${cause != null ? ` (last error: ${cause instanceof Error ? cause.message : String(cause)})` : ''}`)
    this.name = 'TimeoutError'
  }
}

/**
 * Waits `ms`, or less if `signal` aborts. By default an abort just ends the wait early
 * (callers check the signal); with `rejectOnAbort` it rejects with the signal's reason.
 */
export async function sleep (ms: number, signal?: AbortSignal, opts: { rejectOnAbort?: boolean } = {}): Promise<void> {
  if (signal?.aborted === true) {
    if (opts.rejectOnAbort === true) throw signal.reason
    return
  }
  if (ms <= 0) return
  await new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer)
      if (opts.rejectOnAbort === true) reject(signal?.reason)
      else resolve()
    }
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve() }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

export interface WaitOptions {
  /** give up after this long (required: every wait is bounded) */
  timeoutMs: number
  /** pause between checks (default 100 ms) */
  intervalMs?: number
  /** what is awaited, for the error message */
  what?: string
  signal?: AbortSignal
}

/**
 * Polls `check` until it returns a value other than undefined, null or false, and returns
 * it; a TimeoutError after `timeoutMs`. Errors thrown by `check` count as "not yet" and the
 * last one is named in the timeout.
 */
export async function waitUntil<T> (
  check: () => T | Promise<T>,
  opts: WaitOptions
): Promise<NonNullable<Exclude<T, false>>> {
  const deadline = Date.now() + opts.timeoutMs
  let last: unknown
  while (true) {
    try {
      const value = await check()
      if (value != null && value !== false) return value as NonNullable<Exclude<T, false>>
    } catch (err) {
      last = err
    }
    if (opts.signal?.aborted === true) throw opts.signal.reason
    const left = deadline - Date.now()
    if (left <= 0) throw new TimeoutError(opts.what ?? 'a condition', opts.timeoutMs, last)
    await sleep(Math.min(opts.intervalMs ?? 100, left), opts.signal)
  }
}
