/**
 * The input cache's index on disk: one JSON file next to the entries, written whole to a
 * temporary name and renamed (a crash leaves the old index or the new one, never half of
 * one). Read back with bounds: it is our own file, but a damaged one must not stop a provider.
 */
import { readFile, rename, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

export const INDEX_FILE = 'index.json'
const INDEX_VERSION = 1
/** An index larger than this is damaged (10 000 entries of 32 owners fit well within it). */
const MAX_INDEX_BYTES = 64 * 1024 * 1024

export interface CacheEntry {
  /** sha256 of the file, lower-case hex; also its file name in the cache dir */
  sha256: string
  size: number
  /** renters (peer id strings) whose inputs these bytes were, oldest first */
  owners: string[]
  /** a renter marked the file public: reused for any renter that names its digest */
  public: boolean
  /** last use (put or hold), unix ms: the LRU order */
  lastUsed: number
  /** the file's identity when its bytes were last hashed: inode, size and mtime in ns */
  fingerprint: string
}

const HEX64 = /^[0-9a-f]{64}$/

/** The entries of `dir`'s index; none when it is missing or unreadable (the cache then starts empty). */
export async function readIndex (dir: string, maxEntries: number, maxOwners: number): Promise<CacheEntry[]> {
  let text: string
  try {
    // sized before it is read: a damaged (huge) index is not read into memory
    if ((await stat(join(dir, INDEX_FILE))).size > MAX_INDEX_BYTES) return []
    text = await readFile(join(dir, INDEX_FILE), 'utf8')
  } catch {
    return []
  }
  let parsed: unknown
  try { parsed = JSON.parse(text) } catch { return [] }
  const entries = (parsed as { version?: unknown, entries?: unknown })?.entries
  if ((parsed as { version?: unknown }).version !== INDEX_VERSION || !Array.isArray(entries)) return []
  const out: CacheEntry[] = []
  for (const e of entries.slice(0, maxEntries)) {
    if (!isEntry(e)) continue
    out.push({ ...e, owners: e.owners.slice(-maxOwners) })
  }
  return out
}

function isEntry (e: any): e is CacheEntry {
  return e != null && typeof e.sha256 === 'string' && HEX64.test(e.sha256) &&
    Number.isSafeInteger(e.size) && e.size > 0 &&
    Array.isArray(e.owners) && e.owners.every((o: unknown) => typeof o === 'string' && o.length > 0 && o.length <= 128) &&
    typeof e.public === 'boolean' && Number.isFinite(e.lastUsed) && typeof e.fingerprint === 'string' && e.fingerprint.length < 256
}

/** Writes the index whole (temporary file, then rename). */
export async function writeIndex (dir: string, entries: Iterable<CacheEntry>): Promise<void> {
  const tmp = join(dir, `${INDEX_FILE}.tmp`)
  await writeFile(tmp, JSON.stringify({ version: INDEX_VERSION, entries: [...entries] }), { mode: 0o600 })
  await rename(tmp, join(dir, INDEX_FILE))
}
