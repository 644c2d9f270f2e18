// allocation bytes under frames named NAME grouped by caller chain
import { readFileSync } from 'node:fs'
const [file, name, depth = 4] = process.argv.slice(2)
const p = JSON.parse(readFileSync(file)); const out = new Map()
const label = f => `${f.functionName || '(anon)'} ${f.url.replace(/.*\/(node_modules|dist)\//, '')}:${f.lineNumber}`
const walk = (node, path) => {
  const here = [...path, label(node.callFrame)]
  if (node.callFrame.functionName === name && node.selfSize > 0) { const k = here.slice(-1 - depth).reverse().join(' <- '); out.set(k, (out.get(k) ?? 0) + node.selfSize) }
  for (const c of node.children) walk(c, here)
}
walk(p.head, [])
for (const [k, v] of [...out].sort((a, b) => b[1] - a[1]).slice(0, 14)) console.log((v / 1e6).toFixed(2).padStart(6), k)
