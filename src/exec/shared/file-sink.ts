import { pieces, type ChunkData } from './chunk-frame.js'
import type { FileHandle } from 'node:fs/promises'

/**
 * Chunks written behind the stream at most: disk and network overlap, memory stays bounded (16 MiB
 * of 1 MiB chunks).
 */
const MAX_PENDING_WRITES = 16

/**
 * Writes chunks to a file without making the stream wait for each write: up to
 * MAX_PENDING_WRITES writes are queued, in order, and a writer that reaches the bound waits
 * only for the oldest one (waiting for all of them stalled the stream at every bound).
 * A chunk in pieces (as received, chunk-frame.ts) is written with one writev, not copied.
 * A failed write surfaces at the next write or at close.
 */
export class FileSink {
  private chain: Promise<void> = Promise.resolve()
  private readonly pending: Array<Promise<void>> = []
  private failure: unknown

  constructor (private readonly handle: FileHandle) {}

  async write (data: ChunkData): Promise<void> {
    if (this.failure != null) throw this.failure
    const done = this.chain.then(async () => { if (this.failure == null) await writeAll(this.handle, data) })
    this.chain = done.catch((err) => { this.failure ??= err })
    this.pending.push(done)
    void done.finally(() => { void this.pending.splice(this.pending.indexOf(done), 1) }).catch(() => {})
    const oldest = this.pending[0]
    if (this.pending.length >= MAX_PENDING_WRITES && oldest != null) await oldest
  }

  async close (): Promise<void> {
    try {
      await this.chain
      if (this.failure != null) throw this.failure
    } finally {
      await this.handle.close()
    }
  }
}

/** Writes every byte of `data` at the file position, however many calls a short write takes. */
async function writeAll (handle: FileHandle, data: ChunkData): Promise<void> {
  let bufs = [...pieces(data)].filter(b => b.byteLength > 0)
  while (bufs.length > 0) {
    const { bytesWritten } = bufs.length === 1 ? await handle.write(bufs[0] as Uint8Array) : await handle.writev(bufs)
    if (bytesWritten <= 0) throw new Error('file write made no progress')
    let skip = bytesWritten
    while (skip > 0 && bufs.length > 0) {
      const first = bufs[0] as Uint8Array
      if (first.byteLength <= skip) {
        skip -= first.byteLength
        bufs = bufs.slice(1)
      } else {
        bufs[0] = first.subarray(skip)
        skip = 0
      }
    }
  }
}
