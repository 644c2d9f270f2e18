/**
 * `npm run chaos`: runs every fault spec at full size (mocha --grep "chaos", CHAOS_FULL=1, on
 * real nodes and processes) and prints one table: fault, what was checked, result, figure.
 */
import { runTable } from './table-run.js'
import type { FaultRow } from './utils/chaos.js'

runTable<FaultRow>({
  grep: 'chaos',
  outVar: 'CHAOS_OUT',
  env: { CHAOS_FULL: '1' },
  header: ['fault', 'what was checked', 'result', 'figure'],
  cells: r => [r.fault, r.checked, r.result, r.figure],
  noun: 'faults'
})
