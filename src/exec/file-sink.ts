import type { FileHandle } from 'node:fs/promises'

/** Chunks written behind the stream at most: disk and network overlap, memory stays bounded. */
const MAX_PENDING_WRITES = 4

/**
 * Writes chunks to a file without making the stream wait for each write: up to a few writes
 * are in flight, in order. A failed write surfaces at the next write or at close.
 */
export class FileSink {
  private chain: Promise<void> = Promise.resolve()
  private pending = 0

  constructor (private readonly handle: FileHandle) {}

  async write (data: Uint8Array): Promise<void> {
    this.pending++
    this.chain = this.chain.then(async () => { await this.handle.write(data) }).finally(() => { this.pending-- })
    if (this.pending >= MAX_PENDING_WRITES) await this.chain
  }

  async close (): Promise<void> {
    try {
      await this.chain
    } finally {
      await this.handle.close()
    }
  }
}
