// live bytes by allocating function (self) and by stack suffix, from a sampling heap profile
import { readFileSync } from 'node:fs'
const p = JSON.parse(readFileSync(process.argv[2]))
const self = new Map(); const stacks = new Map(); let total = 0
const walk = (node, path) => {
  const f = node.callFrame; const name = `${f.functionName || '(anon)'} ${f.url.replace(/.*\/(node_modules|dist)\//, '')}:${f.lineNumber}`
  const here = [...path, name]
  const bytes = node.selfSize; total += bytes
  if (bytes > 0) { self.set(name, (self.get(name) ?? 0) + bytes); const k = here.slice(-6).join(' < ').replace(/ < /g, '\n      <- '); stacks.set(here.slice(-7).reverse().join('\n      <- '), (stacks.get(here.slice(-7).reverse().join('\n      <- ')) ?? 0) + bytes) }
  for (const c of node.children) walk(c, here)
}
walk(p.head, [])
console.log('total live MB', (total / 1e6).toFixed(1))
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log((v / 1e6).toFixed(2).padStart(7), k)
console.log('--- stacks')
for (const [k, v] of [...stacks].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[3] ?? 8))) console.log((v / 1e6).toFixed(2).padStart(7), k)
