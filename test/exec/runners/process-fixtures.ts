/** Helpers for the process runner's isolation and red-team specs. */
import { readFileSync } from 'node:fs'

/** Alive: in /proc and not a zombie (an orphan's zombie lingers where pid 1 does not reap; it runs nothing). */
export function running (pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

/** A job script that leaves a setsid'd sleeper and a double-forked daemon behind, writing their pids to outputs/. */
export const ESCAPES = 'setsid sleep 1000 & echo $! > outputs/setsid.pid; ' +
  '(setsid sh -c \'sleep 1000 & echo $! > outputs/daemon.pid; wait\' > /dev/null 2>&1 < /dev/null &); ' +
  'while [ ! -s outputs/daemon.pid ]; do sleep 0.05; done; echo started'
