/**
 * What a benchmark process spent, read in the process itself: CPU time (process.cpuUsage)
 * and bytes through read/write system calls (/proc/self/io rchar/wchar: sockets, and the odd
 * disk or IPC read, an upper bound on network bytes; zero where /proc is missing). A
 * benchmark takes a snapshot before and after a phase and divides the difference by the
 * nodes the process runs.
 */
import { readFileSync } from 'node:fs'

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
  return { cpuMs: after.cpuMs - before.cpuMs, readBytes: after.readBytes - before.readBytes, writtenBytes: after.writtenBytes - before.writtenBytes }
}

export function addUsage (a: UsageSnapshot, b: UsageSnapshot): UsageSnapshot {
  return { cpuMs: a.cpuMs + b.cpuMs, readBytes: a.readBytes + b.readBytes, writtenBytes: a.writtenBytes + b.writtenBytes }
}
