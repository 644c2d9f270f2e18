/**
 * Rows for `npm run redteam`'s table: each red-team test says, after it ran, which attack it
 * played, what the attacker got and the limit that held (REDTEAM_OUT names the rows file).
 */
import { appendRow } from './tables.js'

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
  appendRow('REDTEAM_OUT', row)
}
