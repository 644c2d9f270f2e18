/**
 * Top frames of V8 CPU profiles (`node --cpu-prof`): `node dist/test/bench/idle-profile.js
 * [--inclusive] DIR|FILE… [TOP]`. Self time (or, with --inclusive, time with everything the frame
 * called: which caller the busy leaves belong to) is summed by function and source line over every
 * profile given, and printed as a share of the busy time, busiest first; "(idle)" and "(program)"
 * are V8's own buckets.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

interface ProfileNode {
  id: number
  callFrame: { functionName: string, url: string, lineNumber: number }
  children?: number[]
}
interface Profile { nodes: ProfileNode[], samples: number[], timeDeltas: number[] }

const inclusive = process.argv.includes('--inclusive')
const args = process.argv.slice(2).filter(a => a !== '--inclusive')
const top = /^\d+$/.test(args.at(-1) ?? '') ? Number(args.pop()) : 30
const files = args.flatMap(p => statSync(p).isDirectory() ? readdirSync(p).filter(f => f.endsWith('.cpuprofile')).map(f => join(p, f)) : [p])
if (files.length === 0) { process.stderr.write('usage: idle-profile.js DIR|FILE… [TOP]\n'); process.exit(2) }
const selfUs = new Map<string, number>()
let totalUs = 0
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
  const byId = new Map(profile.nodes.map(n => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const keyOf = (f: ProfileNode['callFrame']): string => `${f.functionName === '' ? '(anonymous)' : f.functionName} ${relative(process.cwd(), f.url.replace(/^file:\/\//, '')).replace(/^node_modules\//, '~/')}:${f.lineNumber + 1}`
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0
    totalUs += dt
    const keys = new Set<string>()
    for (let at: number | undefined = id; at != null; at = inclusive ? parent.get(at) : undefined) {
      const f = byId.get(at)?.callFrame
      if (f != null && f.functionName !== '(root)') keys.add(keyOf(f))
    }
    for (const key of keys) selfUs.set(key, (selfUs.get(key) ?? 0) + dt)
  })
}
const busy = totalUs - (selfUs.get('(idle) :0') ?? 0)
process.stdout.write(`${files.length} profile(s), ${(totalUs / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(2)} s not idle\n`)
for (const [key, us] of [...selfUs].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  process.stdout.write(`${(us / 1000).toFixed(0).padStart(7)} ms ${(100 * us / busy).toFixed(1).padStart(5)} % of busy  ${key}\n`)
}
