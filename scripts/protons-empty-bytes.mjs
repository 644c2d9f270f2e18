// Rewrites the decoders protons generates (protocols/*.ts) so that an absent bytes field
// starts as one shared empty array (protocols/empty-bytes.ts) instead of
// `uint8arrays/alloc(0)`: that call built a Buffer and a view of it, and even a fresh
// `new Uint8Array(0)` is an object, for every bytes field of every message decoded, most of
// them overwritten at once by the field read (a ledger sync decodes six messages an entry).
// A zero-length array has no element to write, so sharing it is safe. It also builds each
// enum's codec once. Run by `npm run generate`.
//   node scripts/protons-empty-bytes.mjs FILE…
import { readFileSync, writeFileSync } from 'node:fs'

const ALLOC_IMPORT = "import { alloc as uint8ArrayAlloc } from 'uint8arrays/alloc'\n"
const RUNTIME_IMPORT = 'import { decodeMessage, encodeMessage'
const ENUM_CODEC = /^( *)export const codec = \(\): Codec<(\w+)> => \{\n *return enumeration<\w+>\(__\w+Values\)\n *\}/gm
const EMPTY_IMPORT = "import { EMPTY_BYTES } from './empty-bytes.js'\n"

for (const file of process.argv.slice(2)) {
  const source = readFileSync(file, 'utf8')
  // only what protons wrote: its runtime import is the first line after the lint header
  if (!source.includes(RUNTIME_IMPORT)) continue
  let out = source.replaceAll('uint8ArrayAlloc(0)', 'EMPTY_BYTES').replaceAll('new Uint8Array(0)', 'EMPTY_BYTES')
  // the import goes once nothing else uses it
  if (out.split('uint8ArrayAlloc').length === 2) out = out.replace(ALLOC_IMPORT, '')
  if (out.includes('EMPTY_BYTES') && !out.includes(EMPTY_IMPORT)) {
    const at = out.indexOf(RUNTIME_IMPORT)
    out = out.slice(0, at) + EMPTY_IMPORT + out.slice(at)
  }
  // an enum's codec, built once: protons builds it anew (two closures and an object) for
  // every enum field it decodes
  out = out.replace(ENUM_CODEC, (_, indent, type) =>
    `${indent}let _codec: Codec<${type}> | undefined\n${indent}export const codec = (): Codec<${type}> => {\n` +
    `${indent}  return (_codec ??= enumeration<${type}>(__${type}Values))\n${indent}}`)
  if (out !== source) writeFileSync(file, out)
}
