// self time by function and by url, from a cpuprofile: node topself.mjs file [n]
import { readFileSync } from 'node:fs'
const p = JSON.parse(readFileSync(process.argv[2]))
const n = Number(process.argv[3] ?? 40)
const byId = new Map(p.nodes.map(x => [x.id, x]))
const self = new Map()
const dt = p.timeDeltas; let total = 0
for (let i = 0; i < p.samples.length; i++) { const node = byId.get(p.samples[i]); const d = dt[i] ?? 0; total += d; const f = node.callFrame; const k = `${f.functionName || '(anon)'} ${f.url.replace(/.*\/(node_modules|dist)\//, '')}:${f.lineNumber}`; self.set(k, (self.get(k) ?? 0) + d) }
const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, n)
for (const [k, v] of rows) console.log((v / 1000).toFixed(1).padStart(8), 'ms', (100 * v / total).toFixed(1).padStart(5) + '%', k)
console.log('total', (total / 1000).toFixed(0), 'ms')
const byUrl = new Map()
for (let i = 0; i < p.samples.length; i++) { const f = byId.get(p.samples[i]).callFrame; const k = f.url.replace(/.*\/(node_modules|dist)\//, '').split('/').slice(0, 3).join('/') || f.functionName; byUrl.set(k, (byUrl.get(k) ?? 0) + (dt[i] ?? 0)) }
console.log('--- by url'); for (const [k, v] of [...byUrl].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log((v / 1000).toFixed(1).padStart(8), k)
