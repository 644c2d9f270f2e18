/**
 * What a benchmark process spent, read in the process itself: CPU time (process.cpuUsage)
 * and bytes through read/write system calls (/proc/self/io rchar/wchar: sockets, and the odd
 * disk or IPC read, an upper bound on network bytes; zero where /proc is missing). A
 * benchmark takes a snapshot before and after a phase and divides the difference by the
 * nodes the process runs.
 */
import { readdirSync, readFileSync } from 'node:fs'

export interface UsageSnapshot {
  /** user + system CPU, ms */
  cpuMs: number
  /** bytes read / written through system calls */
  readBytes: number
  writtenBytes: number
}

function ioCounters (): { rchar: number, wchar: number } {
  try {
    const text = readFileSync('/proc/self/io', 'utf8')
    const field = (name: string): number => Number(new RegExp(`^${name}:\\s*(\\d+)`, 'm').exec(text)?.[1] ?? 0)
    return { rchar: field('rchar'), wchar: field('wchar') }
  } catch {
    return { rchar: 0, wchar: 0 }
  }
}

export function usageNow (): UsageSnapshot {
  const cpu = process.cpuUsage()
  const io = ioCounters()
  return { cpuMs: (cpu.user + cpu.system) / 1000, readBytes: io.rchar, writtenBytes: io.wchar }
}

export function usageSince (before: UsageSnapshot, after: UsageSnapshot = usageNow()): UsageSnapshot {
  return {
    cpuMs: after.cpuMs - before.cpuMs,
    readBytes: after.readBytes - before.readBytes,
    writtenBytes: after.writtenBytes - before.writtenBytes
  }
}

export function addUsage (a: UsageSnapshot, b: UsageSnapshot): UsageSnapshot {
  return {
    cpuMs: a.cpuMs + b.cpuMs,
    readBytes: a.readBytes + b.readBytes,
    writtenBytes: a.writtenBytes + b.writtenBytes
  }
}

/**
 * `read(file's text)` of /proc/PID/task/TID/`file` for each thread of process `pid`, by thread id;
 * empty where /proc is missing.
 */
function perThread<T> (pid: number, file: string, read: (text: string) => T): Map<number, T> {
  const out = new Map<number, T>()
  let tids: string[]
  try {
    tids = readdirSync(`/proc/${pid}/task`)
  } catch {
    return out
  }
  for (const tid of tids) {
    try {
      out.set(Number(tid), read(readFileSync(`/proc/${pid}/task/${tid}/${file}`, 'utf8')))
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out
}

/**
 * CPU time of each thread of process `pid` so far (/proc/PID/task/TID/stat utime + stime), ms by
 * thread id; empty where /proc is missing.
 */
export function threadCpuMs (pid: number = process.pid): Map<number, number> {
  return perThread(pid, 'stat', stat => {
    // the fields after the command name, which may hold spaces: utime and stime are the 12th and 13th
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 1000 / CLOCK_TICKS_PER_SECOND
  })
}

/** Linux's USER_HZ, the unit of /proc's CPU times, on every platform Node runs on Linux. */
const CLOCK_TICKS_PER_SECOND = 100

/** The name of each thread of process `pid` (/proc/PID/task/TID/comm), by thread id; empty where /proc is missing. */
export function threadNames (pid: number = process.pid): Map<number, string> {
  return perThread(pid, 'comm', comm => comm.trim())
}

export interface ThreadSplit {
  /** the main thread (its id is the process's) */
  mainMs: number
  /** the busiest other thread: in the ledger benchmark, the signature verifier's worker */
  busiestOtherMs: number
  /** every other thread together: V8's GC helpers, libuv's pool */
  restMs: number
  /** the threads named `named` (see threadSplit), together; 0 when none was asked or found */
  namedMs: number
}

/**
 * How the CPU a process spent between two threadCpuMs() readings splits over its threads;
 * undefined where /proc gave none. With `named` (a thread name and the names read by
 * threadNames()), the threads of that name are counted in namedMs and left out of the others.
 */
export function threadSplit (
  before: Map<number, number>,
  after: Map<number, number>,
  pid: number = process.pid,
  named?: { name: string, names: Map<number, string> }
): ThreadSplit | undefined {
  if (after.size === 0) return undefined
  let mainMs = 0
  let namedMs = 0
  const others: number[] = []
  for (const [tid, ms] of after) {
    const spent = ms - (before.get(tid) ?? 0)
    if (tid === pid) mainMs = spent
    else if (named != null && named.names.get(tid) === named.name) namedMs += spent
    else others.push(spent)
  }
  others.sort((a, b) => b - a)
  const busiestOtherMs = others[0] ?? 0
  return { mainMs, busiestOtherMs, restMs: others.slice(1).reduce((a, b) => a + b, 0), namedMs }
}
