import { open, readFile, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { NodeError } from './errors.js'

export const LOCK_FILE = 'node.lock'

function dataDirInUse (dataDir: string, holder: LockHolder): NodeError {
  return new NodeError('ERR_DATA_DIR_IN_USE', `data directory ${dataDir} is in use by a running idlegrid ${holder.role} node (pid ${holder.pid}); stop it, talk to it with one-shot commands, or pick another --data-dir`)
}

export interface LockHolder {
  pid: number
  role: string
  startedAt: number
}

export interface DataDirLock {
  release(): Promise<void>
}

/**
 * Takes the data directory for this process: one node per data directory, so two nodes never
 * share a key, a control socket or a LevelDB. A lock left by a process that no longer runs
 * is taken over.
 */
export async function lockDataDir (dataDir: string, role: string): Promise<DataDirLock> {
  const path = join(dataDir, LOCK_FILE)
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, 'wx', 0o600)
      await handle.writeFile(JSON.stringify({ pid: process.pid, role, startedAt: Date.now() } satisfies LockHolder))
      await handle.close()
      return {
        release: async () => {
          const holder = await readHolder(path)
          if (holder?.pid === process.pid) await unlink(path).catch(() => {})
        }
      }
    } catch (err: any) {
      if (err?.code !== 'EEXIST') throw err
    }
    const holder = await readHolder(path)
    if (holder != null && holder.pid !== process.pid && isAlive(holder.pid)) throw dataDirInUse(dataDir, holder)
    if (holder?.pid === process.pid) throw dataDirInUse(dataDir, holder)
    await unlink(path).catch(() => {})
  }
  throw new Error(`could not take the lock ${path}`)
}

async function readHolder (path: string): Promise<LockHolder | undefined> {
  try {
    const value = JSON.parse(await readFile(path, 'utf8'))
    return typeof value?.pid === 'number' ? value : undefined
  } catch {
    return undefined
  }
}

function isAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err: any) {
    return err?.code === 'EPERM'
  }
}
