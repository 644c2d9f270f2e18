/**
 * A provider's input cache: job input files kept by their sha256 after the job, so the same
 * renter's next job (or anyone's, for files marked public) need not send them again.
 *
 * - Bounded: a byte budget (the provider's policy, inside its disk budget) and an entry count,
 *   least recently used first out; entries a job is about to use are pinned.
 * - Private by default: an entry serves the renters who sent its bytes (their keys), and any
 *   renter once one of them marked the file public.
 * - Checked: an entry's bytes are hashed when they arrive; before each use its file's identity
 *   (inode, size, mtime) is compared with the one recorded then, and a file that changed is
 *   hashed again: bytes that no longer match their digest are dropped, and the renter sends
 *   them again.
 * - Shared with the job by a hard link, read-only (0444) and the provider's: a job running as
 *   another user (the process runner's job user, a container's) cannot make it writable. A job
 *   running as the provider's own user (the process runner without a job user, which isolates
 *   nothing) could rewrite it and set its mtime back: that mode is for development.
 */
import { createHash, randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { chmod, copyFile, constants as fsConstants, link, mkdir, readdir, rename, stat, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { INDEX_FILE, readIndex, writeIndex, type CacheEntry } from './cache-index.js'

export interface InputCacheInit {
  /** the cache's own directory (created 0700) */
  dir: string
  /** bytes the entries may hold together */
  budgetBytes: number
  /** most entries (default 10 000) */
  maxEntries?: number
  /** most renters remembered per entry, the oldest forgotten first (default 32) */
  maxOwners?: number
  /** where drops and failures are told */
  log?: (text: string) => void
}

/** One manifest file the cache holds for a job: pinned until `release()`. */
export interface Holding {
  /** lower-case sha256 hex of every file held */
  digests: Set<string>
  /** their bytes (each digest once) */
  bytes: number
  release: () => void
}

export interface InputCacheStats {
  entries: number
  usedBytes: number
  budgetBytes: number
  /** files found and usable at a job's start, and those not */
  hits: number
  misses: number
  /** entries whose bytes no longer matched their digest */
  dropped: number
}

const SAVE_DELAY_MS = 1_000
const HEX64 = /^[0-9a-f]{64}$/

export class InputCache {
  private readonly entries = new Map<string, CacheEntry>()
  private readonly pins = new Map<string, number>()
  private readonly listeners = new Set<() => void>()
  private readonly putting = new Map<string, Promise<boolean>>()
  private used = 0
  private hits = 0
  private misses = 0
  private dropped = 0
  private saveTimer?: ReturnType<typeof setTimeout>
  private readonly maxEntries: number
  private readonly maxOwners: number

  constructor (private readonly init: InputCacheInit) {
    this.maxEntries = init.maxEntries ?? 10_000
    this.maxOwners = init.maxOwners ?? 32
  }

  /**
   * Opens (or creates) the cache in `init.dir`: entries whose file is gone are forgotten, files
   * no entry names are removed. Until it has run the cache is empty (it holds nothing).
   */
  async load (): Promise<void> {
    const { dir, budgetBytes } = this.init
    await mkdir(dir, { recursive: true, mode: 0o700 })
    await chmod(dir, 0o700)
    const known = await readIndex(dir, this.maxEntries, this.maxOwners)
    known.sort((a, b) => a.lastUsed - b.lastUsed)
    for (const e of known) {
      const st = await stat(this.pathOf(e.sha256)).catch(() => undefined)
      if (st?.isFile() !== true || st.size !== e.size || this.entries.has(e.sha256)) continue
      this.entries.set(e.sha256, e)
      this.used += e.size
    }
    for (const name of await readdir(dir)) {
      if (name === INDEX_FILE || this.entries.has(name)) continue
      await unlink(join(dir, name)).catch(() => {})
    }
    // a budget lowered since the last run applies at once
    this.reclaim(this.used - budgetBytes)
  }

  get budgetBytes (): number {
    return this.init.budgetBytes
  }

  usedBytes (): number {
    return this.used
  }

  stats (): InputCacheStats {
    return {
      entries: this.entries.size,
      usedBytes: this.used,
      budgetBytes: this.init.budgetBytes,
      hits: this.hits,
      misses: this.misses,
      dropped: this.dropped
    }
  }

  /** Called when the set of public entries changes (the capability record names them). */
  onPublicChange (listener: () => void): () => void {
    this.listeners.add(listener)
    return () => { this.listeners.delete(listener) }
  }

  /** The digests of public entries, largest first (what a provider advertises). */
  publicDigests (limit: number): Uint8Array[] {
    return [...this.entries.values()].filter(e => e.public).sort((a, b) => b.size - a.size).slice(0, limit).map(e => Uint8Array.from(Buffer.from(e.sha256, 'hex')))
  }

  /**
   * How many of `digests` (each once) this renter may reuse, and their bytes: the claim a bid
   * makes, without hashing.
   */
  held (renter: string, digests: Iterable<Uint8Array>): { count: number, bytes: number } {
    let count = 0
    let bytes = 0
    for (const hex of new Set([...digests].map(d => Buffer.from(d).toString('hex')))) {
      const e = this.entries.get(hex)
      if (e == null || !usableBy(e, renter)) continue
      count++
      bytes += e.size
    }
    return { count, bytes }
  }

  /**
   * The manifest files this renter may reuse, checked: a file whose identity changed since it
   * was hashed is hashed again, and dropped if its bytes no longer match. Pinned (not evicted)
   * until `release()`.
   */
  async hold (renter: string, manifest: ReadonlyArray<{ size: bigint, sha256: Uint8Array }>): Promise<Holding> {
    const digests = new Set<string>()
    let bytes = 0
    const wanted = new Map<string, bigint>()
    for (const f of manifest) if (f.size > 0n) wanted.set(Buffer.from(f.sha256).toString('hex'), f.size)
    for (const [hex, size] of wanted) {
      const e = this.entries.get(hex)
      if (e == null || !usableBy(e, renter) || BigInt(e.size) !== size) { this.misses++; continue }
      this.pin(hex)
      if (!await this.intact(e)) { this.unpin(hex); this.misses++; continue }
      this.touch(e)
      digests.add(hex)
      bytes += e.size
      this.hits++
    }
    let released = false
    return {
      digests,
      bytes,
      release: () => {
        if (released) return
        released = true
        for (const hex of digests) this.unpin(hex)
      }
    }
  }

  /** Puts the held file `sha256` (hex) at `dest`: a hard link, or a copy where a link cannot be made. */
  async materialize (sha256: string, dest: string): Promise<void> {
    if (this.pins.get(sha256) == null) throw new Error(`input ${sha256} is not held`)
    await mkdir(dirname(dest), { recursive: true })
    try {
      await link(this.pathOf(sha256), dest)
    } catch (err: any) {
      if (err?.code !== 'EXDEV' && err?.code !== 'EPERM' && err?.code !== 'EMLINK') throw err
      await copyFile(this.pathOf(sha256), dest, fsConstants.COPYFILE_FICLONE)
    }
  }

  /**
   * Keeps `file` (a job's input, its bytes already checked against `entry`) for `renter`: a new
   * entry (a hard link to the file, made read-only), or the renter added to an entry's owners.
   * Files larger than the budget, or that find no room, are not kept.
   */
  async put (
    renter: string,
    file: string,
    entry: { size: bigint, sha256: Uint8Array, public?: boolean }
  ): Promise<boolean> {
    const hex = Buffer.from(entry.sha256).toString('hex')
    // two jobs bringing the same file at once: the second waits and joins the first's entry
    const inFlight = this.putting.get(hex)
    if (inFlight != null) await inFlight
    const pub = entry.public === true
    const known = this.entries.get(hex)
    if (known != null) {
      known.owners = [...known.owners.filter(o => o !== renter), renter].slice(-this.maxOwners)
      const madePublic = pub && !known.public
      known.public ||= pub
      this.touch(known)
      if (madePublic) this.publicChanged()
      return true
    }
    const adding = this.add({ renter, file, hex, size: Number(entry.size), pub })
    this.putting.set(hex, adding)
    try {
      return await adding
    } finally {
      this.putting.delete(hex)
    }
  }

  /** Links (or copies) `file` in as the entry `hex` of `size` bytes, owned by `renter`, public when `pub`. */
  private async add ({
    renter,
    file,
    hex,
    size,
    pub
  }: {
    renter: string
    file: string
    hex: string
    size: number
    pub: boolean
  }): Promise<boolean> {
    if (size <= 0 || size > this.init.budgetBytes) return false
    this.reclaim(this.used + size - this.init.budgetBytes)
    if (this.used + size > this.init.budgetBytes) return false
    if (this.entries.size >= this.maxEntries) this.reclaim(1, true)
    if (this.entries.size >= this.maxEntries) return false
    const tmp = join(this.init.dir, `${hex}.${randomBytes(6).toString('hex')}.tmp`)
    try {
      await unlink(tmp).catch(() => {})
      await link(file, tmp).catch(async (err: any) => {
        if (err?.code !== 'EXDEV' && err?.code !== 'EPERM' && err?.code !== 'EMLINK') throw err
        await copyFile(file, tmp)
      })
      await chmod(tmp, 0o444)
      await rename(tmp, this.pathOf(hex))
      const e: CacheEntry = {
        sha256: hex,
        size,
        owners: [renter],
        public: pub,
        lastUsed: Date.now(),
        fingerprint: await this.fingerprintOf(hex)
      }
      this.entries.set(hex, e)
      this.used += size
      this.save()
      if (pub) this.publicChanged()
      return true
    } catch (err) {
      await unlink(tmp).catch(() => {})
      this.init.log?.(`input ${hex} not kept in the cache: ${(err as Error).message}`)
      return false
    }
  }

  /**
   * Evicts least recently used, unpinned entries until `bytes` are free (counting from now),
   * or `count` entries when `byCount`; accounting is immediate, files go in the background.
   * Returns the bytes freed.
   */
  reclaim (bytes: number, byCount = false): number {
    let freed = 0
    let gone = 0
    for (const e of [...this.entries.values()]) {
      if ((byCount ? gone : freed) >= bytes) break
      if (this.pins.has(e.sha256)) continue
      this.forget(e)
      freed += e.size
      gone++
    }
    return freed
  }

  /** Writes the index now (the provider stops). */
  async close (): Promise<void> {
    clearTimeout(this.saveTimer)
    this.saveTimer = undefined
    await writeIndex(this.init.dir, this.entries.values()).catch(err => { this.init.log?.(`input cache index not written: ${(err as Error).message}`) })
  }

  private pathOf (hex: string): string {
    if (!HEX64.test(hex)) throw new Error('not a sha256 digest')
    return join(this.init.dir, hex)
  }

  private async fingerprintOf (hex: string): Promise<string> {
    const st = await stat(this.pathOf(hex), { bigint: true })
    // not ctime: linking the file into a job and unlinking it again change it on every use
    return `${st.ino}:${st.size}:${st.mtimeNs}`
  }

  /** Whether the entry's file still holds its bytes: unchanged since hashed, or hashed again now and equal. */
  private async intact (e: CacheEntry): Promise<boolean> {
    try {
      const now = await this.fingerprintOf(e.sha256)
      if (now === e.fingerprint) return true
      const hash = createHash('sha256')
      let size = 0
      for await (const chunk of createReadStream(this.pathOf(e.sha256))) {
        hash.update(chunk as Buffer)
        size += (chunk as Buffer).byteLength
      }
      if (size === e.size && hash.digest('hex') === e.sha256) {
        e.fingerprint = await this.fingerprintOf(e.sha256)
        return true
      }
      this.init.log?.(`cached input ${e.sha256} no longer matches its digest: dropped`)
    } catch (err) {
      this.init.log?.(`cached input ${e.sha256} unreadable (${(err as Error).message}): dropped`)
    }
    this.dropped++
    this.forget(e)
    return false
  }

  private forget (e: CacheEntry): void {
    if (this.entries.get(e.sha256) !== e) return
    this.entries.delete(e.sha256)
    this.used -= e.size
    unlink(this.pathOf(e.sha256)).catch(() => {})
    this.save()
    if (e.public) this.publicChanged()
  }

  private touch (e: CacheEntry): void {
    e.lastUsed = Date.now()
    // Map order is the LRU order: the most recently used last
    this.entries.delete(e.sha256)
    this.entries.set(e.sha256, e)
    this.save()
  }

  private pin (hex: string): void {
    this.pins.set(hex, (this.pins.get(hex) ?? 0) + 1)
  }

  private unpin (hex: string): void {
    const n = (this.pins.get(hex) ?? 1) - 1
    if (n <= 0) this.pins.delete(hex)
    else this.pins.set(hex, n)
  }

  private save (): void {
    if (this.saveTimer != null) return
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined
      writeIndex(this.init.dir, this.entries.values()).catch(err => { this.init.log?.(`input cache index not written: ${(err as Error).message}`) })
    }, SAVE_DELAY_MS)
    this.saveTimer.unref?.()
  }

  private publicChanged (): void {
    for (const l of this.listeners) { try { l() } catch {} }
  }
}

function usableBy (e: CacheEntry, renter: string): boolean {
  return e.public || e.owners.includes(renter)
}
