/**
 * Where process jobs run: a work root of its own, never under the data dir (the node key and
 * control socket live there), and per job a fresh dir that only the job's user can enter.
 */
import { createHash } from 'node:crypto'
import { chmodSync, lchownSync, lstatSync, readdirSync } from 'node:fs'
import { chmod, lstat, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { ExecError } from '../errors.js'

/** The default work root of a node: `<tmpdir>/idlegrid-jobs-<12 hex of its data dir's path>`. */
export function defaultWorkRoot (dataDir: string): string {
  return join(tmpdir(), `idlegrid-jobs-${createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 12)}`)
}

/** Throws when `workRoot` is the data dir or inside it (a job could then walk to the key). */
export function checkWorkRootOutside (workRoot: string, dataDir: string): void {
  const rel = relative(resolve(dataDir), resolve(workRoot))
  if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) {
    throw new ExecError('ERR_RUNNER', `work root ${workRoot} is inside the data dir ${dataDir}: jobs could reach the node key; choose a work root elsewhere (--work-root)`)
  }
}

/**
 * Makes the work root (or checks an existing one): a real directory owned by us, 0711 when jobs
 * run as another user (they can enter their own dir, not list the others), else 0700. When jobs
 * run as another user every ancestor must let them through (o+x).
 */
export async function prepareWorkRoot (root: string, jobsAsOtherUser: boolean): Promise<void> {
  if (!isAbsolute(root)) throw new ExecError('ERR_RUNNER', `work root ${root} must be an absolute path`)
  await mkdir(root, { recursive: true, mode: 0o700 })
  const info = await lstat(root)
  if (!info.isDirectory()) throw new ExecError('ERR_RUNNER', `work root ${root} is not a directory (a symlink or file is refused)`)
  const me = process.getuid?.()
  if (me != null && info.uid !== me) throw new ExecError('ERR_RUNNER', `work root ${root} is owned by uid ${info.uid}, not this provider (uid ${me}); remove it or choose another (--work-root)`)
  await chmod(root, jobsAsOtherUser ? 0o711 : 0o700)
  if (!jobsAsOtherUser) return
  for (let dir = dirname(root); ; dir = dirname(dir)) {
    const mode = (await lstat(dir)).mode
    if ((mode & 0o001) === 0) throw new ExecError('ERR_RUNNER', `work root ${root}: its ancestor ${dir} (mode ${(mode & 0o777).toString(8)}) does not let the job user through; choose a work root the job user can reach (--work-root)`)
    if (dir === dirname(dir)) break
  }
}

/**
 * Gives the job's dir and everything in it (the inputs the provider wrote) to the job's user,
 * the dir itself 0700, except inputs shared with the input cache (read-only for everyone). Symlinks
 * are changed, never followed (the provider wrote none; a planted one must not redirect the chown).
 */
export function handOverWorkDir (dir: string, uid: number, gid: number): void {
  const visit = (path: string): void => {
    const st = lstatSync(path)
    // a file with other links is an input the provider's cache shares (0444, world-readable):
    // it stays the provider's, so the job cannot make it writable and change the cache's bytes
    if (st.isFile() && st.nlink > 1) return
    lchownSync(path, uid, gid)
    if (!st.isDirectory()) return
    for (const name of readdirSync(path)) visit(join(path, name))
  }
  visit(dir)
  chmodSync(dir, 0o700)
}
