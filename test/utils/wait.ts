import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { waitUntil } from '../../src/common/index.js'

/** A fresh temporary directory; remove it with the returned cleanup. */
export async function tempDir (prefix = 'idlegrid-test-'): Promise<{ path: string, cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix))
  return { path, cleanup: async () => { await rm(path, { recursive: true, force: true }) } }
}

/**
 * Polls `check` until it returns a truthy value, or throws after `timeoutMs` (default 15 s)
 * naming `what`: the one way a spec waits for something (never a fixed sleep).
 */
export async function waitFor<T> (
  check: () => T | Promise<T>,
  opts: { timeoutMs?: number, intervalMs?: number, what?: string } = {}
): Promise<NonNullable<Exclude<T, false>>> {
  return await waitUntil(check, { timeoutMs: opts.timeoutMs ?? 15_000, intervalMs: opts.intervalMs, what: opts.what ?? 'condition' })
}

/**
 * Whether process `pid` still runs. A zombie does not: it was killed and only waits for its
 * parent to collect its status (an orphan's new parent, init in a container, may take its time).
 */
export function processAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    // /proc/<pid>/stat: "pid (comm) state …", comm may hold spaces and parentheses
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return true // no procfs (not Linux): signal 0 answered, so it exists
  }
}
