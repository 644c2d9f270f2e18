/**
 * Rows for `npm run redteam`'s table: each red-team test says, after it ran, which attack it
 * played, what the attacker got and the limit that held. Under `npm run redteam` (REDTEAM_OUT
 * names a file) each row is appended as one JSON line; in a plain test run nothing is written.
 */
import { appendFileSync } from 'node:fs'

export interface AttackRow {
  /** the issue and item, e.g. "13.1" */
  issue: string
  attack: string
  /** what the attacker got, measured by the test */
  got: string
  /** the bound or rule that held */
  limit: string
}

export function recordAttack (row: AttackRow): void {
  const out = process.env.REDTEAM_OUT
  if (out == null || out === '') return
  appendFileSync(out, JSON.stringify(row) + '\n')
}
