/**
 * The unprivileged user a container job runs as, and the work dir made writable for it: the
 * job's root is read-only, so its work dir (bound at /job) is the one place it writes.
 */
import { chmodSync, lstatSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { ExecError } from '../errors.js'
import { handOverWorkDir } from './work-dirs.js'

/** `nobody:nogroup` on Debian and most images: owns nothing on the provider. */
export const DEFAULT_CONTAINER_USER = '65534:65534'
const USER_SPEC = /^(\d{1,10}):(\d{1,10})$/

export interface ContainerUser { uid: number, gid: number }

/** Parses `uid:gid` (numbers only: a name would be looked up in the image); uid 0 is refused. */
export function parseContainerUser (spec: string): ContainerUser {
  const m = USER_SPEC.exec(spec)
  if (m == null) throw new ExecError('ERR_RUNNER', `docker user "${spec.slice(0, 40)}" must be numeric uid:gid, e.g. ${DEFAULT_CONTAINER_USER}`)
  const uid = Number(m[1])
  const gid = Number(m[2])
  if (uid === 0) throw new ExecError('ERR_RUNNER', 'docker jobs never run as root (uid 0): choose an unprivileged uid:gid')
  if (uid > 0x7fffffff || gid > 0x7fffffff) throw new ExecError('ERR_RUNNER', `docker user ${spec} is out of range`)
  return { uid, gid }
}

/** Most entries changed in one work dir (inputs are at most 4,096 files on the wire). */
const MAX_ENTRIES = 20_000

/**
 * Hands the work dir to the container user before the run. As root (the usual provider on a
 * Docker host) the whole tree is chowned to it: the job owns its inputs and outputs and
 * nothing else. Otherwise (rootless engine, where container uids map to subordinate ids) the
 * work dir and outputs/ become world-writable and inputs world-readable, which is all the
 * container user can be given without root.
 */
export function prepareWorkDir (workDir: string, user: ContainerUser): void {
  if (process.getuid?.() === 0) {
    handOverWorkDir(workDir, user.uid, user.gid)
    return
  }
  let seen = 0
  const visit = (path: string, top: boolean): void => {
    if (++seen > MAX_ENTRIES) throw new ExecError('ERR_RUNNER', `the work dir holds more than ${MAX_ENTRIES} entries`)
    const st = lstatSync(path)
    // an input shared with the input cache is already 0444: changing its mode would change its
    // ctime (the cache re-hashes it)
    if (st.isSymbolicLink() || (st.isFile() && st.nlink > 1)) return
    chmodSync(path, st.isDirectory() ? (top ? 0o777 : (st.mode & 0o777) | 0o755) : (st.mode & 0o777) | 0o644)
    if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name), top && name === 'outputs' && path === workDir)
  }
  visit(workDir, true)
}
