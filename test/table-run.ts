/**
 * Runs the specs whose titles match a grep (mocha, on real nodes) and prints one table of the
 * rows they recorded (test/utils/tables.ts); the exit code is mocha's. Used by `npm run
 * redteam` (test/redteam.ts) and `npm run chaos` (test/chaos.ts).
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface TableRun<Row> {
  grep: string
  /** env variable the specs append rows to */
  outVar: string
  header: string[]
  cells: (row: Row) => string[]
  /** extra env for the specs (e.g. CHAOS_FULL) */
  env?: Record<string, string>
  /** what the rows are, for the count line */
  noun: string
}

export function runTable<Row> (run: TableRun<Row>): void {
  const dir = mkdtempSync(join(tmpdir(), 'idlegrid-table-'))
  const out = join(dir, 'rows.jsonl')
  try {
    const mocha = spawnSync(process.execPath, [join('node_modules', 'mocha', 'bin', 'mocha.js'), 'dist/test/**/*.spec.js', '--grep', run.grep], {
      stdio: 'inherit',
      env: { ...process.env, ...run.env, [run.outVar]: out }
    })
    const rows: Row[] = existsSync(out) ? readFileSync(out, 'utf8').trim().split('\n').filter(l => l !== '').map(l => JSON.parse(l) as Row) : []
    const widths = run.header.map((h, i) => Math.max(h.length, ...rows.map(r => run.cells(r)[i]?.length ?? 0)))
    const line = (c: string[]): string => '| ' + c.map((s, i) => s.padEnd(widths[i] ?? 0)).join(' | ') + ' |'
    console.log('\n' + line(run.header))
    console.log('|' + widths.map(w => '-'.repeat(w + 2)).join('|') + '|')
    for (const r of rows) console.log(line(run.cells(r)))
    console.log(`\n${rows.length} ${run.noun} recorded`)
    process.exitCode = mocha.status ?? 1
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
