/**
 * A fresh node in a process of its own, as a new user's is (test/bench/ledger.bench.ts): it syncs
 * from the holder at ADDR until it holds ENTRIES entries, prints one JSON line of its figures and
 * exits. The authors its operator trusts (their feeds have standing) are read from AUTHORS_JSON.
 * Times are from this process's start (performance.now()).
 *
 * usage: node ledger-fresh.js DATA_DIR ADDR ENTRIES AUTHORS_JSON
 */
import { readFile } from 'node:fs/promises'
import { resolveConfig } from '../../src/config/index.js'
import { ledgerService } from '../../src/ledger/service/ledger-node.js'
import type { LedgerService } from '../../src/ledger/service/ledger-service.js'
import { createNode } from '../../src/node/index.js'

const loadedMs = performance.now()
const [dataDir, addr, entriesArg, authorsPath] = process.argv.slice(2)
const entries = Number(entriesArg)
if (dataDir == null || addr == null || authorsPath == null || !Number.isSafeInteger(entries) || entries <= 0) {
  process.stderr.write('usage: ledger-fresh DATA_DIR ADDR ENTRIES AUTHORS_JSON\n')
  process.exit(2)
}
const trustedPeers = JSON.parse(await readFile(authorsPath, 'utf8')) as string[]
const config = resolveConfig({ role: 'bootstrap', flags: { dataDir, listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [addr], heartbeatSeconds: 5 } })
const node = await createNode(config, { services: { ledger: ledgerService({ dataDir: config.dataDir, role: 'renter', summaryIntervalMs: 0, syncIntervalMs: 3600_000, trustedPeers }) } })
const startedMs = performance.now()
const ledger = (node.libp2p.services as unknown as { ledger: LedgerService }).ledger
const held = (): number => ledger.store.allHeads().reduce((sum, h) => sum + h.seq, 0)
let firstEntryMs: number | undefined
// bounded: the bench's own timeout for a sync, 2 ms an entry and at least 2 minutes
const deadline = performance.now() + Math.max(120_000, entries * 2)
for (let now = held(); now < entries; now = held()) {
  if (performance.now() > deadline) {
    process.stderr.write(`ledger-fresh: held ${now} of ${entries} entries at the deadline\n`)
    process.exit(1)
  }
  if (firstEntryMs == null && now > 0) firstEntryMs = performance.now()
  await new Promise(resolve => setTimeout(resolve, 5))
}
const syncedMs = performance.now()
const { user, system } = process.cpuUsage()
process.stdout.write(JSON.stringify({ loadedMs, startedMs, firstEntryMs, syncedMs, cpuMs: (user + system) / 1000 }) + '\n')
await node.stop()
process.exit(0)
