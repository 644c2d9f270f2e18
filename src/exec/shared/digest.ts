/**
 * File sets: safe relative paths, per-file sha256, the one walk of a job's output directory,
 * and the file-set digest of protocols/README.md §4 (entries sorted by UTF-8 path; sha256 over path || 0x00 ||
 * size as 8-byte big-endian || file sha256).
 */
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { lstat, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { ExecError } from '../errors.js'
import type { FileEntry } from '../../../protocols/job.js'

/** Longest relative path accepted from the network. */
export const MAX_PATH_CHARS = 1024
/** Deepest directory nesting walked when listing outputs. */
const MAX_DEPTH = 32

/**
 * Checks a relative POSIX path from an untrusted peer: no empty, "." or ".." segment, no
 * leading "/", no backslash or NUL, bounded length. Returns it unchanged or throws.
 */
export function checkRelativePath (path: string): string {
  if (typeof path !== 'string' || path === '' || path.length > MAX_PATH_CHARS) throw new ExecError('ERR_UNSAFE_PATH', `path must be 1-${MAX_PATH_CHARS} characters`)
  if (path.startsWith('/') || path.includes('\\') || path.includes('\0')) throw new ExecError('ERR_UNSAFE_PATH', `path "${path.slice(0, 80)}" is not a relative POSIX path`)
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') throw new ExecError('ERR_UNSAFE_PATH', `path "${path.slice(0, 80)}" has an empty, "." or ".." segment`)
  }
  return path
}

/** Orders by the UTF-8 bytes of the path, as the digest requires (not UTF-16 code units). */
function comparePaths (a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
}

export function sortEntries<T extends { path: string }> (entries: readonly T[]): T[] {
  return [...entries].sort((a, b) => comparePaths(a.path, b.path))
}

/** The file-set digest (protocols/README.md §4); the empty set hashes to sha256(""). */
export function fileSetDigest (entries: readonly FileEntry[]): Uint8Array {
  const hash = createHash('sha256')
  const size = Buffer.alloc(8)
  for (const entry of sortEntries(entries)) {
    hash.update(Buffer.from(entry.path, 'utf8'))
    hash.update(Uint8Array.of(0))
    size.writeBigUInt64BE(entry.size)
    hash.update(size)
    hash.update(entry.sha256)
  }
  return new Uint8Array(hash.digest())
}

export async function hashFile (path: string): Promise<{ size: bigint, sha256: Uint8Array }> {
  const hash = createHash('sha256')
  let size = 0
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) {
    hash.update(chunk as Buffer)
    size += (chunk as Buffer).length
  }
  return { size: BigInt(size), sha256: new Uint8Array(hash.digest()) }
}

export interface ListLimits {
  /** most files */
  maxFiles: number
  /** most bytes in all */
  maxBytes: number
}

/**
 * The regular files under `dir` with their sizes, sorted for the digest: the one walk of a
 * job's output directory. Symbolic links and special files are skipped (a job must not point
 * its outputs at the provider's files), so are paths too long or with a backslash, and
 * directories nested deeper than MAX_DEPTH; a directory that cannot be read holds nothing.
 * Throws ExecError ERR_OUTPUT_LIMIT past either limit.
 */
export async function listRegularFiles (
  dir: string,
  limits: ListLimits
): Promise<Array<{ path: string, size: number }>> {
  const found: Array<{ path: string, size: number }> = []
  let total = 0
  const walk = async (abs: string, rel: string, depth: number): Promise<void> => {
    if (depth > MAX_DEPTH) return
    const names = (await readdir(abs).catch(() => [] as string[])).sort()
    for (const name of names) {
      const childRel = rel === '' ? name : `${rel}/${name}`
      const stat = await lstat(join(abs, name))
      if (stat.isDirectory()) {
        await walk(join(abs, name), childRel, depth + 1)
      } else if (stat.isFile() && childRel.length <= MAX_PATH_CHARS && !name.includes('\\')) {
        found.push({ path: childRel, size: stat.size })
        total += stat.size
        if (found.length > limits.maxFiles) throw new ExecError('ERR_OUTPUT_LIMIT', `the job wrote more than ${limits.maxFiles} output files`)
        if (total > limits.maxBytes) throw new ExecError('ERR_OUTPUT_LIMIT', `the job wrote more than ${limits.maxBytes} bytes of outputs`)
      }
    }
  }
  await walk(dir, '', 0)
  return sortEntries(found)
}
