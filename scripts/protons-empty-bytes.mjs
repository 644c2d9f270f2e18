// Rewrites the decoders protons generates (protocols/*.ts) so that an absent bytes field
// starts as `new Uint8Array(0)` instead of `uint8arrays/alloc(0)`: that call builds a Buffer
// and a view of it, about four times the cost, for every bytes field of every message decoded
// (a tenth of the main thread's time in a ledger sync). Run by `npm run generate`.
//   node scripts/protons-empty-bytes.mjs FILE…
import { readFileSync, writeFileSync } from 'node:fs'

const IMPORT = "import { alloc as uint8ArrayAlloc } from 'uint8arrays/alloc'\n"

for (const file of process.argv.slice(2)) {
  const source = readFileSync(file, 'utf8')
  let out = source.replaceAll('uint8ArrayAlloc(0)', 'new Uint8Array(0)')
  // the import goes once nothing else uses it
  if (out.split('uint8ArrayAlloc').length === 2) out = out.replace(IMPORT, '')
  if (out !== source) writeFileSync(file, out)
}
