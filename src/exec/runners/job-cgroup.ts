/**
 * A control group per process job, where the kernel lets this provider make one: every
 * process the job starts is in it (setsid and double forks included), so the whole tree can
 * be signalled and killed, and its process count and memory bounded. cgroup v2 (`cgroup.kill`)
 * is preferred; cgroup v1's pids hierarchy (no forks once pids.max is 0, then SIGKILL to every
 * member) kills where v2 is absent, and v1's pids/memory hierarchies bound what v2's lack.
 * Where no hierarchy is writable (not root, no delegation) there is no cgroup: the caller falls
 * back to scanning /proc (proc-scan.ts).
 */
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { sleep } from '../../common/index.js'

type HierarchyKind = 'v2' | 'pids' | 'memory'

interface Hierarchy {
  kind: HierarchyKind
  /** our own cgroup in this hierarchy: jobs' cgroups are made under it */
  parent: string
}

/** The cgroup hierarchies this process is in, from /proc/self/mounts and /proc/self/cgroup. */
export function cgroupHierarchies (): Hierarchy[] {
  let mounts: string
  let mine: string
  try {
    mounts = readFileSync('/proc/self/mounts', 'utf8')
    mine = readFileSync('/proc/self/cgroup', 'utf8')
  } catch {
    return []
  }
  const own = new Map<string, string>()
  for (const line of mine.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line)
    if (m == null) continue
    if (m[1] === '') own.set('v2', m[2] as string)
    for (const c of (m[1] as string).split(',')) own.set(c, m[2] as string)
  }
  const found: Hierarchy[] = []
  for (const line of mounts.split('\n')) {
    const [, point, type, options] = line.split(' ')
    if (point == null || options == null) continue
    const dir = point.replace(/\\040/g, ' ')
    if (type === 'cgroup2' && own.has('v2')) found.push({ kind: 'v2', parent: join(dir, own.get('v2') as string) })
    if (type === 'cgroup') {
      for (const kind of ['pids', 'memory'] as const) {
        if (options.split(',').includes(kind) && own.has(kind)) found.push({ kind, parent: join(dir, own.get(kind) as string) })
      }
    }
  }
  return found
}

function tryWrite (path: string, value: string): boolean {
  try { writeFileSync(path, value); return true } catch { return false }
}

function members (dir: string): number[] {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(s => s !== '').map(Number)
  } catch {
    return []
  }
}

export interface CgroupLimits {
  /** most processes (and threads) at once */
  processes?: number
  /** memory, bytes */
  memoryBytes?: number
}

/** One job's cgroup, made under each hierarchy that lets us. */
export class JobCgroup {
  private constructor (private readonly dirs: Map<HierarchyKind, string>) {}

  /** Makes the job's cgroup (`name` must be unique), or returns undefined where no hierarchy is writable. */
  static create (name: string, limits: CgroupLimits, hierarchies = cgroupHierarchies()): JobCgroup | undefined {
    const dirs = new Map<HierarchyKind, string>()
    for (const h of hierarchies) {
      if (dirs.has(h.kind)) continue
      const dir = join(h.parent, name)
      try { mkdirSync(dir) } catch { continue }
      dirs.set(h.kind, dir)
    }
    // without v2's cgroup.kill, only a v1 pids cgroup can stop the tree
    const killer = dirs.get('v2') ?? dirs.get('pids')
    if (killer == null) {
      for (const dir of dirs.values()) try { rmdirSync(dir) } catch {}
      return undefined
    }
    const cg = new JobCgroup(dirs)
    cg.bound(limits)
    return cg
  }

  /** Which hierarchies hold the job and which limits took, for logs and tests. */
  get describe (): string {
    return [...this.dirs.keys()].join('+')
  }

  /** Whether the kernel bounds the job's memory (then no address-space rlimit is needed). */
  memoryBounded = false
  /** Whether the kernel bounds the job's process count. */
  processesBounded = false

  private bound (limits: CgroupLimits): void {
    const v2 = this.dirs.get('v2')
    if (limits.processes != null) {
      this.processesBounded = (v2 != null && tryWrite(join(v2, 'pids.max'), String(limits.processes))) ||
        (this.dirs.has('pids') && tryWrite(join(this.dirs.get('pids') as string, 'pids.max'), String(limits.processes)))
    }
    if (limits.memoryBytes != null) {
      const bytes = String(Math.floor(limits.memoryBytes))
      this.memoryBounded = (v2 != null && tryWrite(join(v2, 'memory.max'), bytes) && tryWrite(join(v2, 'memory.swap.max'), '0')) ||
        (this.dirs.has('memory') && tryWrite(join(this.dirs.get('memory') as string, 'memory.limit_in_bytes'), bytes))
    }
  }

  /** Puts `pid` (the job's first process, before it runs the command) into every hierarchy; throws when one refuses. */
  join (pid: number): void {
    for (const dir of this.dirs.values()) writeFileSync(join(dir, 'cgroup.procs'), String(pid))
  }

  /** Every process in the job's cgroup now. */
  pids (): number[] {
    const all = new Set<number>()
    for (const dir of this.dirs.values()) for (const pid of members(dir)) all.add(pid)
    return [...all]
  }

  /** Sends `signal` to every process of the job (SIGTERM for a preemption notice). */
  signal (signal: NodeJS.Signals): void {
    for (const pid of this.pids()) try { process.kill(pid, signal) } catch {}
  }

  /** SIGKILL to the whole tree, with no fork able to slip out in between. */
  kill (): void {
    const v2 = this.dirs.get('v2')
    if (v2 != null && tryWrite(join(v2, 'cgroup.kill'), '1')) return
    const pids = this.dirs.get('pids')
    if (pids != null) tryWrite(join(pids, 'pids.max'), '0')
    this.signal('SIGKILL')
  }

  /** Kills until the cgroup is empty (bounded wait), then removes it. Resolves false if a process outlived the wait. */
  async reap (waitMs = 5_000): Promise<boolean> {
    const until = Date.now() + waitMs
    let empty = false
    while (!(empty = this.pids().length === 0) && Date.now() < until) {
      this.kill()
      await sleep(10)
    }
    for (const dir of this.dirs.values()) try { rmdirSync(dir) } catch {}
    return empty
  }
}
