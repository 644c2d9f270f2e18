/**
 * What one named attack is: how many nodes of its own it needs, and how it plays. An attack
 * resolves with what it measured (one JSON object, printed by attacker.ts); a long-running
 * attack plays until `signal` aborts (SIGTERM, or --duration-ms).
 */
import type { IdlegridNode } from '../../../src/node/index.js'

export interface AttackContext {
  /** the attacker's own nodes, each with its own key, joined to the network */
  nodes: IdlegridNode[]
  /** the `--name value` options given after the attack's name */
  options: Record<string, string>
  /** aborts when the attack must stop and report */
  signal: AbortSignal
  /** a progress line on stderr */
  log: (line: string) => void
  /** prints a JSON line on stdout mid-attack (the spec can wait for it) */
  report: (value: Record<string, unknown>) => void
  /** resolves when the spec says "go" (a line on stdin), or when `signal` aborts */
  go: () => Promise<void>
}

export interface Attack {
  /** nodes of its own the attack needs (default 1) */
  nodes?: number
  /** one line: what it tries */
  summary: string
  play: (ctx: AttackContext) => Promise<Record<string, unknown>>
}

/** Resolves when `signal` aborts. */
export async function untilAborted (signal: AbortSignal): Promise<void> {
  if (signal.aborted) return
  await new Promise<void>(resolve => signal.addEventListener('abort', () => { resolve() }, { once: true }))
}

/** A numeric option, or `fallback`. */
export function numberOption (options: Record<string, string>, name: string, fallback: number): number {
  const raw = options[name]
  if (raw == null) return fallback
  const value = Number(raw)
  if (!Number.isFinite(value)) throw new Error(`--${name} must be a number, got ${raw}`)
  return value
}
