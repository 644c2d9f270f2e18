/**
 * Debug preload for the idle benchmark's child process (`--import .../idle-timers.js`):
 * wraps the global setTimeout/setInterval/setImmediate so that every timer callback is
 * counted and timed by the place that armed it (the first stack frame outside this file and
 * outside node: internals). Answers an IPC `{ type: 'timers' }` with the table since the last
 * ask, busiest first. Costs a stack capture per timer armed: for a count, not for a CPU figure.
 */
import { relative } from 'node:path'

export interface TimerSite { site: string, kind: 'timeout' | 'interval' | 'immediate', fired: number, cpuMs: number }
export interface TimersReply { type: 'timers', sites: TimerSite[], windowMs: number }

const table = new Map<string, TimerSite>()
let since = Date.now()
const cwd = process.cwd()

function siteOf (skip: number): string {
  const frames = (new Error().stack ?? '').split('\n').slice(skip + 1)
  for (const f of frames) {
    if (f.includes('idle-timers.js') || f.includes('node:') || !f.includes('/')) continue
    const m = /\(?(?:file:\/\/)?(\/[^)]+):(\d+):\d+\)?$/.exec(f.trim())
    if (m == null) continue
    const fn = /at (?:async )?([^ (]+) \(/.exec(f.trim())?.[1] ?? '<anonymous>'
    return `${fn} ${relative(cwd, m[1] as string).replace(/^node_modules\//, '~/')}:${m[2] as string}`
  }
  return '<unknown>'
}

function wrap (kind: TimerSite['kind'], callback: (...a: unknown[]) => unknown): (...a: unknown[]) => unknown {
  const key = `${kind} ${siteOf(3)}`
  let entry = table.get(key)
  if (entry == null) { entry = { site: key.slice(kind.length + 1), kind, fired: 0, cpuMs: 0 }; table.set(key, entry) }
  const e = entry
  return function (this: unknown, ...args: unknown[]) {
    const t0 = process.cpuUsage()
    try { return callback.apply(this, args) } finally {
      const d = process.cpuUsage(t0)
      e.fired++
      e.cpuMs += (d.user + d.system) / 1000
    }
  }
}

const realTimeout = globalThis.setTimeout
const realInterval = globalThis.setInterval
const realImmediate = globalThis.setImmediate
globalThis.setTimeout = function (cb: unknown, ...rest: unknown[]) {
  return typeof cb === 'function' ? realTimeout(wrap('timeout', cb as never), ...rest as [number]) : realTimeout(cb as never, ...rest as [number])
} as typeof setTimeout
globalThis.setInterval = function (cb: unknown, ...rest: unknown[]) {
  return typeof cb === 'function' ? realInterval(wrap('interval', cb as never), ...rest as [number]) : realInterval(cb as never, ...rest as [number])
} as typeof setInterval
globalThis.setImmediate = function (cb: unknown, ...rest: unknown[]) {
  return typeof cb === 'function' ? realImmediate(wrap('immediate', cb as never), ...rest) : realImmediate(cb as never, ...rest)
} as typeof setImmediate

process.on('message', (msg: { type?: string }) => {
  if (msg?.type !== 'timers') return
  const sites = [...table.values()]
    .filter(s => s.fired > 0)
    .sort((a, b) => b.fired - a.fired)
    .map(s => ({ ...s, cpuMs: Number(s.cpuMs.toFixed(1)) }))
  const reply: TimersReply = { type: 'timers', sites, windowMs: Date.now() - since }
  process.send?.(reply)
  for (const s of table.values()) { s.fired = 0; s.cpuMs = 0 }
  since = Date.now()
})
