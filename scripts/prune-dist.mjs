// Removes compiled files in dist/ whose TypeScript source is gone (a spec deleted or renamed
// would otherwise still run from dist/). With tsconfig's incremental build this replaces a full
// clean before `npm test`: tsc then re-emits only what changed.
//   node scripts/prune-dist.mjs [--dry-run]
import { readdirSync, rmSync, existsSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const dist = join(root, 'dist')
const dryRun = process.argv.includes('--dry-run')
const removed = []

function walk (dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) { walk(path); continue }
    const match = /^(.*)\.js(\.map)?$/.exec(entry.name)
    if (match == null) continue
    const source = join(root, relative(dist, dir), `${match[1]}.ts`)
    if (existsSync(source)) continue
    removed.push(relative(root, path))
    if (!dryRun) rmSync(path, { force: true })
  }
}

if (existsSync(dist)) {
  for (const top of readdirSync(dist, { withFileTypes: true })) {
    if (top.isDirectory()) walk(join(dist, top.name))
  }
}
if (removed.length > 0) console.log(`prune-dist: ${dryRun ? 'would remove' : 'removed'} ${removed.length} file(s) without a source: ${removed.slice(0, 5).join(', ')}${removed.length > 5 ? ', …' : ''}`)
