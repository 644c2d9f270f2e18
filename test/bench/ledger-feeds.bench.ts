/**
 * Ledger benchmark of many short feeds: a fresh node syncs 2,000 one-entry feeds
 * (IDLEGRID_BENCH_LEDGER_FEEDS to change) from a holder, first asking several ranges a request
 * (`ranges`, up to 64: protocols/README.md §7 "Range size"), then from the same holder answering
 * as a node from before `ranges` requests, one range a request, paced at 40 requests a second of
 * one peer. A renter at horizon 2 lacks entries of ~9,000 feeds (docs/ledger-scale.md). Reports
 * the time until every feed is held, the requests the holder answered by kind and this process's
 * CPU (both nodes run in it). IDLEGRID_BENCH_LEDGER_FEEDS_BEFORE=0 leaves out the second run
 * (~40 s at 2,000 feeds).
 */
import { join } from 'node:path'
import { LedgerEntry } from '../../protocols/ledger.js'
import { resolveConfig } from '../../src/config/index.js'
import { sealEntry } from '../../src/ledger/entries/entry.js'
import { ledgerService } from '../../src/ledger/service/ledger-node.js'
import { createNode, type IdlegridNode } from '../../src/node/index.js'
import { tempDir, waitFor } from '../utils/index.js'
import { idOf, signers } from '../ledger/feeds.js'
import { summaryBody } from '../ledger/flood-fixtures.js'
import { wrapSync } from '../ledger/sync-responders.js'
import type { LedgerService } from '../../src/ledger/service/ledger-service.js'

const FEEDS = Number(process.env.IDLEGRID_BENCH_LEDGER_FEEDS ?? 2_000)
const WITH_BEFORE = process.env.IDLEGRID_BENCH_LEDGER_FEEDS_BEFORE !== '0'

export default async (): Promise<Record<string, unknown>> => {
  const dir = await tempDir('idlegrid-ledger-feeds-bench-')
  const nodes: IdlegridNode[] = []
  try {
    const authors = await signers(FEEDS)
    const ledgerOf = (n: IdlegridNode): LedgerService =>
      (n.libp2p.services as unknown as { ledger: LedgerService }).ledger
    const start = async (name: string, bootstrap?: IdlegridNode): Promise<IdlegridNode> => {
      const config = resolveConfig({
        role: 'bootstrap',
        flags: {
          dataDir: join(dir.path, name),
          listen: ['/ip4/127.0.0.1/tcp/0'],
          bootstrap: bootstrap == null ? [] : [bootstrap.libp2p.getMultiaddrs()[0].toString()],
          heartbeatSeconds: 60
        }
      })
      const ledger = ledgerService({ dataDir: config.dataDir, role: 'renter', summaryIntervalMs: 0, syncIntervalMs: 3_600_000, trustedPeers: authors.map(idOf) })
      const node = await createNode(config, { services: { ledger } })
      nodes.push(node)
      return node
    }
    const holder = await start('holder')
    const time = Date.now() - 60_000
    const entries = authors.map(a => sealEntry(a.key, a.peerId, {
      seq: 1,
      prevHash: new Uint8Array(0),
      time,
      kind: LedgerEntry.BodyKind.HEARTBEAT_SUMMARY,
      body: summaryBody(time - 1_000)
    }).envelope)
    for (let i = 0; i < entries.length; i += 500) {
      const outcomes = await ledgerOf(holder).ingest.ingest(entries.slice(i, i + 500))
      if (outcomes.some(o => o.status !== 'added')) throw new Error('the holder did not take every feed')
    }
    const sync = async (name: string, beforeRanges: boolean): Promise<Record<string, number>> => {
      const counts = await wrapSync(holder, { beforeRanges })
      const started = performance.now()
      const cpu = process.cpuUsage()
      const fresh = await start(name, holder)
      await waitFor(() => ledgerOf(fresh).store.allHeads().length === FEEDS, { timeoutMs: 10 * 60_000, intervalMs: 20, what: `the fresh node to hold all ${FEEDS} feeds` })
      const used = process.cpuUsage(cpu)
      const figures = {
        syncMs: Math.round(performance.now() - started),
        cpuMs: Math.round((used.user + used.system) / 1000),
        rangesRequests: counts.ranges,
        rangesInThem: counts.rangesOfRanges,
        rangeRequests: counts.range
      }
      await fresh.stop()
      nodes.splice(nodes.indexOf(fresh), 1)
      return figures
    }
    const ranges = await sync('fresh', false)
    const before = WITH_BEFORE ? await sync('fresh-before', true) : undefined
    return {
      feeds: FEEDS,
      /** several ranges a request (up to 64) */
      ranges,
      /** one range a request, as of a node from before `ranges` requests */
      oneRangeARequest: before ?? 'left out (IDLEGRID_BENCH_LEDGER_FEEDS_BEFORE=0)',
      speedup: before == null ? 'n/a' : Number((before.syncMs / ranges.syncMs).toFixed(1))
    }
  } finally {
    await Promise.all(nodes.map(async n => { await n.stop() }))
    await dir.cleanup()
  }
}
