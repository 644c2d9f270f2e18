/**
 * The fallback when no cgroup can be made for a job: find its processes by scanning /proc.
 * A process belongs to the job when it is in the job's session or process group (the job's
 * first process leads both), or when its environment still carries the run's marker variable
 * (inherited by every descendant, across setsid and double forks).
 *
 * Limits, documented in the README: a process that both leaves the session/group (setsid)
 * and empties its environment (env -i, execve with a fresh env) before the scan is not found;
 * environments of other users' processes are only readable by root, so a provider running as
 * itself finds only its own. Each sweep is a snapshot: a tree forking fast can outpace it,
 * which is why sweeps repeat until one finds nothing.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { sleep } from '../../common/index.js'

/** The variable every process of a run inherits; its value is random per run. */
export const RUN_MARKER = 'IDLEGRID_RUN_MARK'

/**
 * session and process group of a live `pid`, from /proc/PID/stat (after the command name's last
 * ')'); undefined for a zombie (already dead).
 */
function sessionOf (pid: number): { pgrp: number, session: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined
    return { pgrp: Number(fields[2]), session: Number(fields[3]) }
  } catch {
    return undefined
  }
}

function carriesMarker (pid: number, needle: Buffer): boolean {
  try {
    const env = readFileSync(`/proc/${pid}/environ`)
    return env.indexOf(needle) >= 0
  } catch {
    return false
  }
}

/** Whether live `pid` is in the process group led by `leader` (a signal to the group reached it). */
export function inProcessGroup (pid: number, leader: number): boolean {
  return sessionOf(pid)?.pgrp === leader
}

/** Processes of the run led by `leader` with marker value `mark`, this process excluded. */
export function runProcesses (leader: number, mark: string): number[] {
  const needle = Buffer.from(`${RUN_MARKER}=${mark}\0`)
  const found: number[] = []
  let names: string[]
  try { names = readdirSync('/proc') } catch { return found }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue
    const pid = Number(name)
    if (pid === process.pid || pid === 1) continue
    const s = sessionOf(pid)
    if (s == null) continue
    if (s.session === leader || s.pgrp === leader || carriesMarker(pid, needle)) found.push(pid)
  }
  return found
}

/** Signals every process of the run found now. */
export function signalRun (leader: number, mark: string, signal: NodeJS.Signals): number {
  const pids = runProcesses(leader, mark)
  for (const pid of pids) try { process.kill(pid, signal) } catch {}
  return pids.length
}

/** SIGKILL sweeps until one finds no process of the run (bounded); false if some outlived the wait. */
export async function reapRun (leader: number, mark: string, waitMs = 5_000): Promise<boolean> {
  const until = Date.now() + waitMs
  while (Date.now() < until) {
    if (signalRun(leader, mark, 'SIGKILL') === 0) return true
    await sleep(10)
  }
  return signalRun(leader, mark, 'SIGKILL') === 0
}
