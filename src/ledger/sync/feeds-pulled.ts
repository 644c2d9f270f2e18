/**
 * The feeds being pulled now, by author id, each counted as often as pulls of it run: a
 * session's and a head hint's (client.ts). A relayed head of a feed counted here starts no
 * second pull of it, which fetched the same entries twice.
 */
export class FeedsPulled {
  private readonly running = new Map<string, number>()

  has (authorId: string): boolean {
    return this.running.has(authorId)
  }

  begin (authorId: string): void {
    this.running.set(authorId, (this.running.get(authorId) ?? 0) + 1)
  }

  end (authorId: string): void {
    const left = (this.running.get(authorId) ?? 1) - 1
    if (left > 0) this.running.set(authorId, left)
    else this.running.delete(authorId)
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
}
