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
export async function waitFor<T> (check: () => T | Promise<T>, opts: { timeoutMs?: number, intervalMs?: number, what?: string } = {}): Promise<NonNullable<Exclude<T, false>>> {
  return await waitUntil(check, { timeoutMs: opts.timeoutMs ?? 15_000, intervalMs: opts.intervalMs, what: opts.what ?? 'condition' })
}
