/**
 * Rows for `npm run chaos`'s table: each fault spec (title containing "chaos") says, after it
 * ran, which fault it injected, what it checked, the result and its figure (CHAOS_OUT names
 * the rows file). CHAOS_FULL=1 asks specs for their full size (more kills, longer runs); the
 * plain suite runs the short variant.
 */
import { appendRow } from './tables.js'

export interface FaultRow {
  /** e.g. "partition", "kill", "clock", "spam" */
  fault: string
  /** what was checked */
  checked: string
  /** 'ok' or what went wrong */
  result: string
  /** the measured figure, e.g. "0 of 20 jobs lost; heal to equal ledgers 3.2 s" */
  figure: string
}

export function recordFault (row: FaultRow): void {
  appendRow('CHAOS_OUT', row)
}

/** Whether `npm run chaos` asked for the full-size run. */
export function chaosFull (): boolean {
  return process.env.CHAOS_FULL === '1'
}
