/**
 * Which user the process runner's jobs run as. A provider running as root hands jobs to an
 * unprivileged uid, so the node key, the data dir and the control socket (all 0600/0700, owned
 * by root) are out of the job's reach. By default each running job gets a uid of its own from
 * DEFAULT_JOB_UIDS, so concurrent jobs cannot read each other's files or /proc entries either;
 * `--job-user nobody` (one uid shared by all jobs) gives that up. A provider that is not root
 * can only run jobs as itself.
 */
import { readFileSync } from 'node:fs'
import { ExecError } from '../errors.js'

export interface JobUserPlan {
  /** uids handed out, one per running job (one entry: shared by concurrent jobs) */
  uids: number[]
  /** the gid every job runs with (a range: each job's gid equals its uid) */
  gid: number | 'same-as-uid'
  /** false: jobs run as the provider's own user (nothing is isolated from the job) */
  dedicated: boolean
  /** for logs and help: what was chosen */
  describe: string
}

/**
 * The default job uids of a root provider: systemd's range for dynamic users, which no
 * account in /etc/passwd normally holds (those that do are left out), 256 of them.
 */
export const DEFAULT_JOB_UIDS = { first: 61184, last: 61439 }
/** Highest uid accepted: below the 32-bit "no uid" (-1) and overflow uids. */
const MAX_UID = 4_294_967_294
const MAX_RANGE = 4096

function passwdEntry (name: string): { uid: number, gid: number } | undefined {
  let text = ''
  try { text = readFileSync('/etc/passwd', 'utf8') } catch { return undefined }
  for (const line of text.split('\n')) {
    const f = line.split(':')
    if (f[0] === name && f.length >= 4) return { uid: Number(f[2]), gid: Number(f[3]) }
  }
  return undefined
}

function passwdUids (): Set<number> {
  let text = ''
  try { text = readFileSync('/etc/passwd', 'utf8') } catch { return new Set() }
  return new Set(text.split('\n').map(line => Number(line.split(':')[2])).filter(Number.isSafeInteger))
}

function groupId (name: string): number | undefined {
  let text = ''
  try { text = readFileSync('/etc/group', 'utf8') } catch { return undefined }
  for (const line of text.split('\n')) {
    const f = line.split(':')
    if (f[0] === name && f.length >= 3) return Number(f[2])
  }
  return undefined
}

function asId (text: string, what: string, lookup: (name: string) => number | undefined): number {
  const n = /^\d{1,10}$/.test(text) ? Number(text) : lookup(text)
  if (n == null || !Number.isSafeInteger(n)) throw new ExecError('ERR_RUNNER', `job user: no ${what} "${text.slice(0, 64)}" on this machine`)
  if (n === 0) throw new ExecError('ERR_RUNNER', `job user: ${what} 0 is root; jobs run as root would own the provider`)
  if (n > MAX_UID) throw new ExecError('ERR_RUNNER', `job user: ${what} ${n} is out of range`)
  return n
}

/**
 * Parses `--job-user`: `NAME`, `UID`, `NAME|UID:GROUP|GID`, or `FIRST-LAST` (numeric uids, at
 * most 4096; each running job gets the first free one and the gid of the same number).
 * Undefined: DEFAULT_JOB_UIDS when the provider is root, else the provider's own user.
 */
export function planJobUser (spec: string | undefined, myUid: number = process.getuid?.() ?? -1): JobUserPlan {
  const root = myUid === 0
  if (spec == null || spec === '') {
    if (!root) return { uids: [myUid], gid: process.getgid?.() ?? myUid, dedicated: false, describe: `this provider's own user (uid ${myUid})` }
    const taken = passwdUids()
    const uids = Array.from(
      { length: DEFAULT_JOB_UIDS.last - DEFAULT_JOB_UIDS.first + 1 },
      (_, i) => DEFAULT_JOB_UIDS.first + i
    ).filter(u => !taken.has(u))
    if (uids.length === 0) throw new ExecError('ERR_RUNNER', `job user: every uid of ${DEFAULT_JOB_UIDS.first}-${DEFAULT_JOB_UIDS.last} has an account here; name the job user with --job-user`)
    return { uids, gid: 'same-as-uid', dedicated: true, describe: `uids ${DEFAULT_JOB_UIDS.first}-${DEFAULT_JOB_UIDS.last}, one per running job` }
  }
  if (spec.length > 200) throw new ExecError('ERR_RUNNER', 'job user: too long')
  const range = /^(\d{1,10})-(\d{1,10})$/.exec(spec)
  let plan: JobUserPlan
  if (range != null) {
    const first = asId(range[1] as string, 'uid', () => undefined)
    const last = asId(range[2] as string, 'uid', () => undefined)
    if (last < first || last - first + 1 > MAX_RANGE) throw new ExecError('ERR_RUNNER', `job user: a range is FIRST-LAST with at most ${MAX_RANGE} uids`)
    plan = { uids: Array.from({ length: last - first + 1 }, (_, i) => first + i), gid: 'same-as-uid', dedicated: true, describe: `uids ${first}-${last}, one per running job` }
  } else {
    const [user, group] = spec.split(':', 2) as [string, string | undefined]
    const entry = /^\d+$/.test(user) ? undefined : passwdEntry(user)
    const uid = asId(user, 'user', name => passwdEntry(name)?.uid)
    const gid = group != null ? asId(group, 'group', groupId) : (entry?.gid ?? uid)
    plan = { uids: [uid], gid, dedicated: true, describe: `${user} (uid ${uid}, gid ${gid}, shared by concurrent jobs)` }
  }
  if (!root && !(plan.uids.length === 1 && plan.uids[0] === myUid)) {
    throw new ExecError('ERR_RUNNER', `job user: only a provider running as root can run jobs as another user (this one is uid ${myUid})`)
  }
  if (plan.uids.includes(myUid)) plan.dedicated = false
  return plan
}

/** Hands out the plan's uids, one per running job; a single uid is shared by all. */
export class JobUserPool {
  private readonly busy = new Set<number>()

  constructor (readonly plan: JobUserPlan) {}

  /** A uid and gid for a job; undefined when every uid of a range is taken. */
  take (): { uid: number, gid: number } | undefined {
    const { uids, gid } = this.plan
    const uid = uids.length === 1 ? uids[0] : uids.find(u => !this.busy.has(u))
    if (uid == null) return undefined
    if (uids.length > 1) this.busy.add(uid)
    return { uid, gid: gid === 'same-as-uid' ? uid : gid }
  }

  give (uid: number): void {
    this.busy.delete(uid)
  }
}
