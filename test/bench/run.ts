/**
 * `npm run bench [NAME…]`: runs every benchmark in test/bench/*.bench.ts (or the named
 * ones), prints its figures and writes them to bench-results/<name>.json. A benchmark module
 * default-exports `async () => Record<string, unknown>` (figures with units in their names).
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = fileURLToPath(new URL('.', import.meta.url))
const wanted = process.argv.slice(2)
const files = (await readdir(here)).filter(f => f.endsWith('.bench.js')).sort()
const names = files.map(f => f.replace(/\.bench\.js$/, '')).filter(n => wanted.length === 0 || wanted.includes(n))
const unknown = wanted.filter(w => !names.includes(w))
if (unknown.length > 0) {
  process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')} (have: ${files.map(f => f.replace(/\.bench\.js$/, '')).join(', ')})\n`)
  process.exit(2)
}
const outDir = join(process.cwd(), 'bench-results')
await mkdir(outDir, { recursive: true })
let failed = false
for (const name of names) {
  process.stdout.write(`\n== ${name} ==\n`)
  try {
    const mod = await import(join(here, `${name}.bench.js`))
    const started = Date.now()
    const figures = await mod.default()
    const result = {
      benchmark: name,
      date: new Date().toISOString(),
      node: process.version,
      durationMs: Date.now() - started,
      figures
    }
    for (const [key, value] of Object.entries(figures as Record<string, unknown>)) process.stdout.write(`  ${key}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}\n`)
    await writeFile(join(outDir, `${name}.json`), JSON.stringify(result, null, 2) + '\n')
    process.stdout.write(`  → bench-results/${name}.json\n`)
  } catch (err: any) {
    failed = true
    process.stderr.write(`  ${name} failed: ${String(err?.stack ?? err)}\n`)
  }
}
process.exit(failed ? 1 : 0)
