/**
 * A node stopped while its sync was waiting for an answer is let go whole. Its services abort
 * their lifetime signals with one reason made at load (SERVICE_STOPPED): a reason made by abort()
 * kept, in its stack, the stopping service; and Node keeps a composite signal (the sync request's
 * AbortSignal.any of the service's signal and a timeout) that had a listener when its source
 * aborted, so every node a process started and stopped stayed in memory with its ledger's
 * reputation evidence.
 */
import * as assert from 'node:assert/strict'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { resolveConfig } from '../../src/config/index.js'
import { ledgerService } from '../../src/ledger/service/ledger-node.js'
import { createNode, type IdlegridNode } from '../../src/node/index.js'
import { tempDir, waitFor } from '../utils/index.js'
import { idOf, newSigner } from './feeds.js'
import { summaryFeed } from './flood-fixtures.js'
import { wrapSync } from './sync-responders.js'
import type { LedgerService } from '../../src/ledger/service/ledger-service.js'
import type { Signer } from '../../src/ledger/dev.js'

describe('ledger: a node stopped during a sync', function () {
  this.timeout(60_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  let alice: Signer
  const nodes: IdlegridNode[] = []
  const ledgerOf = (node: IdlegridNode): LedgerService =>
    (node.libp2p.services as unknown as { ledger: LedgerService }).ledger

  before(async () => {
    dir = await tempDir('stopped-node-')
    alice = await newSigner()
  })
  after(async () => {
    await Promise.all(nodes.map(async n => { await n.stop() }))
    await dir.cleanup()
  })

  async function start (name: string, bootstrap: string[]): Promise<IdlegridNode> {
    const config = resolveConfig({ role: 'bootstrap', flags: { dataDir: join(dir.path, name), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap, heartbeatSeconds: 60 } })
    return await createNode(config, { services: { ledger: ledgerService({ dataDir: config.dataDir, role: 'renter', summaryIntervalMs: 0, syncIntervalMs: 3_600_000, trustedPeers: [idOf(alice)] }) } })
  }

  it('is collected once stopped, its range request still unanswered', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const holder = await start('holder', [])
    nodes.push(holder)
    const records = summaryFeed(alice, 1_100)
    await ledgerOf(holder).ingest.ingest(
      records.map(r => r.envelope),
      { range: { author: records[0].author, fromSeq: 1 } }
    )
    // the holder answers a range 5 s late: the fresh node is stopped with its request in flight
    const counts = await wrapSync(holder, { delayRangeMs: 5_000 })
    const stopped = await (async () => {
      const fresh = await start('fresh', [holder.libp2p.getMultiaddrs()[0].toString()])
      const ledger = new WeakRef(ledgerOf(fresh))
      await waitFor(() => counts.range > 0, { what: 'the fresh node to ask the holder for a range' })
      await fresh.stop()
      return ledger
    })()
    // libp2p's own timers (a ping's 10 s timeout, the address manager's) hold a stopped node a
    // little while: collected within their time, not never
    await waitFor(() => {
      gc()
      return stopped.deref() === undefined
    }, { timeoutMs: 25_000, intervalMs: 250, what: 'the stopped node\'s ledger service to be collected' })
    assert.equal(stopped.deref(), undefined)
  })
})
