#!/usr/bin/env node
// Each room of src/ (a folder with an index.ts) shows the rest of the project one face: its
// index.ts. This check fails when a face exports a name that no file outside the room imports
// through it (src/ of other rooms, test/, scripts/, examples/, bootstrap/, web/): a face that
// exports what nobody uses is no longer a map of the room. Run: npm run lint:faces
// `--skip room,room` still lists those rooms' idle names but does not fail on them (for rooms
// that are being reworked on another branch).
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import ts from 'typescript'

const ROOT = resolve(import.meta.dirname, '..')
const SRC = join(ROOT, 'src')
const skipAt = process.argv.indexOf('--skip')
const SKIPPED = new Set(skipAt < 0 ? [] : (process.argv[skipAt + 1] ?? '').split(',').filter(Boolean))
const CONSUMERS = ['src', 'test', 'scripts', 'examples', 'bootstrap', 'web'].map(d => join(ROOT, d)).filter(existsSync)

function * walk (dir) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue
    const path = join(dir, name)
    if (statSync(path).isDirectory()) yield * walk(path)
    else if (/\.(ts|mts|mjs|js)$/.test(name) && !name.endsWith('.d.ts')) yield path
  }
}

const roomOf = (path) => {
  const rel = relative(SRC, path)
  return rel.startsWith('..') ? undefined : rel.split(sep)[0]
}

/** Names a face exports: `export { a, b as c } from`, `export type {…}`, declarations. */
function exportsOf (face) {
  const source = ts.createSourceFile(face, readFileSync(face, 'utf8'), ts.ScriptTarget.Latest, true)
  const names = new Set()
  for (const st of source.statements) {
    if (ts.isExportDeclaration(st) && st.exportClause != null && ts.isNamedExports(st.exportClause)) {
      for (const el of st.exportClause.elements) names.add(el.name.text)
    } else if (ts.canHaveModifiers(st) && ts.getModifiers(st)?.some(m => m.kind === ts.SyntaxKind.ExportKeyword)) {
      if (st.name != null) names.add(st.name.text)
      if (ts.isVariableStatement(st)) {
        for (const d of st.declarationList.declarations) if (ts.isIdentifier(d.name)) names.add(d.name.text)
      }
    }
  }
  return names
}

const faces = new Map()
for (const room of readdirSync(SRC)) {
  const face = join(SRC, room, 'index.ts')
  if (existsSync(face)) faces.set(room, { face, exported: exportsOf(face), used: new Set(), whole: false })
}

for (const dir of CONSUMERS) {
  for (const file of walk(dir)) {
    const own = roomOf(file)
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
    for (const st of source.statements) {
      if (!(ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) || st.moduleSpecifier == null) continue
      const spec = st.moduleSpecifier.text
      if (!spec.startsWith('.')) continue
      const target = resolve(dirname(file), spec)
      const room = roomOf(target)
      const entry = faces.get(room)
      if (entry == null || room === own || target !== join(SRC, room, 'index.js')) continue
      const clause = ts.isImportDeclaration(st) ? st.importClause?.namedBindings : st.exportClause
      if (clause == null || ts.isNamespaceImport(clause) || ts.isNamespaceExport?.(clause)) {
        entry.whole = true
        continue
      }
      for (const el of clause.elements) entry.used.add((el.propertyName ?? el.name).text)
    }
  }
}

let unused = 0
for (const [room, { exported, used, whole }] of faces) {
  if (whole) continue
  const idle = [...exported].filter(name => !used.has(name)).sort()
  if (idle.length === 0) continue
  if (!SKIPPED.has(room)) unused += idle.length
  console.log(`src/${room}/index.ts exports ${idle.length} name(s) nothing outside the room imports${SKIPPED.has(room) ? ' (skipped)' : ''}: ${idle.join(', ')}`)
}
const total = [...faces.values()].reduce((n, f) => n + f.exported.size, 0)
const skipped = SKIPPED.size > 0 ? ` (not counting ${[...SKIPPED].join(', ')})` : ''
console.log(`${faces.size} faces, ${total} names exported, ${unused} used by nothing outside their room${skipped}`)
process.exitCode = unused === 0 ? 0 : 1
