/**
 * `npm run redteam`: runs every red-team spec (mocha --grep "red team", on real nodes) and
 * prints one table: attack, what the attacker got, the limit that held.
 */
import { runTable } from './table-run.js'
import type { AttackRow } from './utils/redteam.js'

runTable<AttackRow>({
  grep: 'red team',
  outVar: 'REDTEAM_OUT',
  header: ['issue', 'attack', 'what the attacker got', 'limit that held'],
  cells: r => [r.issue, r.attack, r.got, r.limit],
  noun: 'attacks'
})
