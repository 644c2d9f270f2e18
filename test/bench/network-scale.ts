/**
 * `npm run bench:network-scale [-- 10 20 40]`: the network benchmark (network.bench.ts) at each
 * provider count in turn, a table comparing them (issue 15's goal: the 40-provider cost per
 * node per job within 1.5× of the 10-provider one, delivery p95 ≤ 500 ms, nothing lost), and
 * the projection to 10,000 providers from the largest run's measured costs (projection.ts).
 * Writes bench-results/network-scale.json. Env NETWORK_BENCH_SECONDS / _IDLE_SECONDS / _AUCTIONS shorten runs.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { runNetworkBench } from './network.bench.js'
import { measuredCosts, printProjection } from './projection.js'

const sizes = process.argv.slice(2).map(Number)
const counts = sizes.length > 0 ? sizes : [10, 20, 40]
if (counts.some(n => !Number.isInteger(n) || n < 1 || n > 200)) {
  process.stderr.write('usage: network-scale.js [PROVIDERS…] (each 1..200)\n')
  process.exit(2)
}

const COLUMNS: Array<[string, string]> = [
  ['providers', 'providers'],
  ['gossipDeliveryRatio', 'delivered'],
  ['jobRequestsLost', 'lost'],
  ['gossipLatencyP95Ms', 'delivery p95 ms'],
  ['lastDeliveryAfterLoadMs', 'drain ms'],
  ['perProviderPerJobMessages', 'msgs/job'],
  ['perProviderPerJobReadBytesAboveIdle', 'read B/job'],
  ['perProviderPerJobCpuMs', 'CPU ms/job'],
  ['perProviderPerJobCpuMsAboveIdle', 'CPU ms/job above idle'],
  ['perProviderIdleCpuMsPerS', 'idle CPU ms/s'],
  ['perProviderPerAuctionCpuMs', 'CPU ms/auction'],
  ['auctionP95Ms', 'auction p95 ms'],
  ['auctionsWithoutAward', 'no award'],
  ['loadAverage1mAtEnd', 'load avg']
]

const runs: Array<Record<string, any>> = []
for (const providers of counts) {
  process.stderr.write(`\n== network, ${providers} providers (load average ${(loadavg()[0] as number).toFixed(1)}) ==\n`)
  runs.push(await runNetworkBench({
    providers,
    loadSeconds: Number(process.env.NETWORK_BENCH_SECONDS ?? 30),
    idleSeconds: Number(process.env.NETWORK_BENCH_IDLE_SECONDS ?? 10),
    auctions: Number(process.env.NETWORK_BENCH_AUCTIONS ?? 20)
  }))
}
const table = [
  `| ${COLUMNS.map(c => c[1]).join(' | ')} |`,
  `| ${COLUMNS.map(() => '---').join(' | ')} |`,
  ...runs.map(r => `| ${COLUMNS.map(([key]) => String(r[key])).join(' | ')} |`)
].join('\n')
const first = runs[0] as Record<string, any>
const largest = runs[runs.length - 1] as Record<string, any>
const ratio = (key: string): number => Number((Number(largest[key]) / Number(first[key])).toFixed(2))
const flatness = { cpuMsPerJob: ratio('perProviderPerJobCpuMs'), cpuMsPerJobAboveIdle: ratio('perProviderPerJobCpuMsAboveIdle'), messagesPerJob: ratio('perProviderPerJobMessages'), readBytesPerJob: ratio('perProviderPerJobReadBytesAboveIdle') }
const projection = printProjection(measuredCosts(largest))
process.stdout.write(`\n${table}\n\n${largest.providers as number} vs ${first.providers as number} providers, per provider per job: ${JSON.stringify(flatness)} (goal ≤ 1.5)\n\n${projection}\n`)
const outDir = join(process.cwd(), 'bench-results')
await mkdir(outDir, { recursive: true })
await writeFile(join(outDir, 'network-scale.json'), JSON.stringify({ benchmark: 'network-scale', date: new Date().toISOString(), node: process.version, figures: { runs, flatness, largest, table, projection } }, null, 2) + '\n')
process.stdout.write('  → bench-results/network-scale.json\n')
process.exit(0)
