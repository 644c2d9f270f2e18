/**
 * `npm run redteam`: runs every red-team spec (mocha --grep "red team", on real nodes) and
 * prints one table: attack, what the attacker got, the limit that held. The rows come from the
 * tests themselves (test/utils/redteam.ts); the exit code is mocha's.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AttackRow } from './utils/redteam.js'

const dir = mkdtempSync(join(tmpdir(), 'idlegrid-redteam-'))
const out = join(dir, 'rows.jsonl')
try {
  const mocha = spawnSync(process.execPath, [join('node_modules', 'mocha', 'bin', 'mocha.js'), 'dist/test/**/*.spec.js', '--grep', 'red team'], {
    stdio: 'inherit',
    env: { ...process.env, REDTEAM_OUT: out }
  })
  const rows: AttackRow[] = existsSync(out) ? readFileSync(out, 'utf8').trim().split('\n').filter(l => l !== '').map(l => JSON.parse(l) as AttackRow) : []
  const cells = (r: AttackRow): string[] => [r.issue, r.attack, r.got, r.limit]
  const header = ['issue', 'attack', 'what the attacker got', 'limit that held']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map(r => cells(r)[i]?.length ?? 0)))
  const line = (c: string[]): string => '| ' + c.map((s, i) => s.padEnd(widths[i] ?? 0)).join(' | ') + ' |'
  console.log('\n' + line(header))
  console.log('|' + widths.map(w => '-'.repeat(w + 2)).join('|') + '|')
  for (const r of rows) console.log(line(cells(r)))
  console.log(`\n${rows.length} attacks recorded`)
  process.exitCode = mocha.status ?? 1
} finally {
  rmSync(dir, { recursive: true, force: true })
}
