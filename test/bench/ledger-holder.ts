/**
 * The peer a fresh node syncs from in test/bench/ledger.bench.ts, in its own process as it
 * would be in a network: a node whose ledger is the one in DATA_DIR/ledger. Prints one JSON
 * line with its address; answers each "cpu" line on stdin with its CPU time so far (µs);
 * exits when stdin closes.
 *
 * usage: node ledger-holder.js DATA_DIR
 */
import { createInterface } from 'node:readline'
import { resolveConfig } from '../../src/config/index.js'
import { ledgerService } from '../../src/ledger/service/ledger-node.js'
import { createNode } from '../../src/node/index.js'

const [dataDir] = process.argv.slice(2)
if (dataDir == null) {
  process.stderr.write('usage: ledger-holder DATA_DIR\n')
  process.exit(2)
}
const config = resolveConfig({ role: 'bootstrap', flags: { dataDir, listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], heartbeatSeconds: 5 } })
const node = await createNode(config, { services: { ledger: ledgerService({ dataDir: config.dataDir, role: 'renter', summaryIntervalMs: 0, syncIntervalMs: 3600_000 }) } })
process.stdout.write(JSON.stringify({ addr: node.libp2p.getMultiaddrs()[0]?.toString() }) + '\n')
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'cpu') { const { user, system } = process.cpuUsage(); process.stdout.write(JSON.stringify({ cpuMicros: user + system }) + '\n') }
})
const shutdown = async (): Promise<void> => {
  await node.stop()
  process.exit(0)
}
process.stdin.on('end', () => { void shutdown() })
process.on('SIGTERM', () => { void shutdown() })
