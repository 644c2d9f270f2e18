// total time under frames named NAME, grouped by their caller chain (depth D)
import { readFileSync } from 'node:fs'
const [file, name, depth = 5] = process.argv.slice(2)
const p = JSON.parse(readFileSync(file))
const byId = new Map(p.nodes.map(x => [x.id, x])); const parent = new Map()
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const label = n => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/.*\/(node_modules|dist)\//, '')}:${n.callFrame.lineNumber}`
const out = new Map()
for (let i = 0; i < p.samples.length; i++) {
  let id = p.samples[i]; const chain = []
  let hit = false; let n = byId.get(id)
  while (n) { if (n.callFrame.functionName === name) hit = true; if (hit) chain.push(label(n)); if (chain.length > Number(depth)) break; n = byId.get(parent.get(n.id)) }
  if (hit) { const k = chain.join('\n   <- '); out.set(k, (out.get(k) ?? 0) + (p.timeDeltas[i] ?? 0)) }
}
for (const [k, v] of [...out].sort((a, b) => b[1] - a[1]).slice(0, 6)) console.log((v / 1000).toFixed(1), 'ms\n   ' + k)
