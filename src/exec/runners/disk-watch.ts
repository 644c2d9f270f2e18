/**
 * The bound on what a job may write: its work dir is measured every few hundred ms while it
 * runs, and past its disk share (or past a count of files that would exhaust inodes) the job
 * is stopped. Polling lets a fast writer overshoot by what it writes in one interval; the
 * per-file size limit (`--ulimit fsize`) and the provider's disk budget bound that too.
 */
import { lstat, opendir } from 'node:fs/promises'
import { join } from 'node:path'

/** How often the work dir is measured. */
export const DISK_WATCH_INTERVAL_MS = 100
/** Most entries (files, dirs, links) a work dir may hold. */
export const MAX_WORK_DIR_ENTRIES = 100_000

export interface DiskUse {
  bytes: number
  entries: number
}

/**
 * Bytes on disk (allocated blocks, so sparse files count what they use) and entries under
 * `dir`, without following links; stops counting once past `stopAt` bytes or too many entries.
 */
export async function measureDir (dir: string, stopAt = Number.MAX_SAFE_INTEGER): Promise<DiskUse> {
  const use: DiskUse = { bytes: 0, entries: 0 }
  const pending = [dir]
  while (pending.length > 0) {
    const current = pending.pop() as string
    let handle
    try {
      handle = await opendir(current)
    } catch {
      continue // removed while we looked, or not a directory: nothing to count
    }
    for await (const entry of handle) {
      const path = join(current, entry.name)
      use.entries++
      try {
        const st = await lstat(path)
        use.bytes += st.blocks * 512
      } catch {}
      if (entry.isDirectory()) pending.push(path)
      if (use.bytes > stopAt || use.entries > MAX_WORK_DIR_ENTRIES) return use
    }
  }
  return use
}

/**
 * Measures `dir` every `intervalMs` and calls `onOver` once with the reason when it holds more
 * than `limitBytes` or MAX_WORK_DIR_ENTRIES entries. Returns the function that stops watching.
 */
export function watchDiskUse (
  dir: string,
  limitBytes: number,
  onOver: (detail: string) => void,
  intervalMs = DISK_WATCH_INTERVAL_MS
): () => void {
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  const tick = async (): Promise<void> => {
    const use = await measureDir(dir, limitBytes)
    if (stopped) return
    if (use.bytes > limitBytes) {
      stopped = true
      onOver(`the job wrote past its disk share: ${use.bytes} bytes in its work dir, at most ${limitBytes}`)
      return
    }
    if (use.entries > MAX_WORK_DIR_ENTRIES) {
      stopped = true
      onOver(`the job made more than ${MAX_WORK_DIR_ENTRIES} files in its work dir`)
      return
    }
    timer = setTimeout(() => { void tick() }, intervalMs)
  }
  timer = setTimeout(() => { void tick() }, intervalMs)
  return () => {
    stopped = true
    clearTimeout(timer)
  }
}
