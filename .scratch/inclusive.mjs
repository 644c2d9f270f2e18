// inclusive time by function (each sample counted once per function on its stack)
import { readFileSync } from 'node:fs'
const p = JSON.parse(readFileSync(process.argv[2]))
const byId = new Map(p.nodes.map(x => [x.id, x])); const parent = new Map()
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const label = n => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/.*\/(node_modules|dist)\//, '')}:${n.callFrame.lineNumber}`
const incl = new Map(); let total = 0
for (let i = 0; i < p.samples.length; i++) {
  const d = p.timeDeltas[i] ?? 0; total += d; const seen = new Set()
  for (let n = byId.get(p.samples[i]); n; n = byId.get(parent.get(n.id))) { const k = label(n); if (!seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) ?? 0) + d) } }
}
const re = new RegExp(process.argv[3] ?? '.')
for (const [k, v] of [...incl].filter(([k]) => re.test(k)).sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[4] ?? 40))) console.log((v / 1000).toFixed(1).padStart(8), k)
