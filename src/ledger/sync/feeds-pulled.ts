/**
 * The feeds being pulled now, by author id, each counted as often as pulls of it run: a
 * session's and a head hint's (client.ts). A relayed head of a feed counted here starts no
 * second pull of it, and a session comes to such a feed only once those pulls are over: either
 * way the same entries were fetched twice.
 */
export class FeedsPulled {
  private readonly running = new Map<string, number>()
  /** callers of idle(), by author id, woken when the last pull of that feed ends */
  private readonly waiters = new Map<string, Set<() => void>>()

  has (authorId: string): boolean {
    return this.running.has(authorId)
  }

  begin (authorId: string): void {
    this.running.set(authorId, (this.running.get(authorId) ?? 0) + 1)
  }

  end (authorId: string): void {
    const left = (this.running.get(authorId) ?? 1) - 1
    if (left > 0) {
      this.running.set(authorId, left)
      return
    }
    this.running.delete(authorId)
    const waiting = this.waiters.get(authorId)
    this.waiters.delete(authorId)
    for (const wake of waiting ?? []) wake()
  }

  /** `pull`, counted as a pull of the feed of `authorId` (or of each of several) while it runs. */
  async during<T> (authorId: string | readonly string[], pull: () => Promise<T>): Promise<T> {
    const ids = typeof authorId === 'string' ? [authorId] : authorId
    for (const id of ids) this.begin(id)
    try {
      return await pull()
    } finally {
      for (const id of ids) this.end(id)
    }
  }

  /** Resolves once no pull of `authorId`'s feed runs, or when `signal` aborts. */
  async idle (authorId: string, signal: AbortSignal): Promise<void> {
    if (!this.running.has(authorId) || signal.aborted) return
    await new Promise<void>(resolve => {
      let waiting = this.waiters.get(authorId)
      if (waiting == null) this.waiters.set(authorId, waiting = new Set())
      const wake = (): void => {
        waiting.delete(wake)
        signal.removeEventListener('abort', wake)
        resolve()
      }
      waiting.add(wake)
      signal.addEventListener('abort', wake, { once: true })
    })
  }
}
