/**
 * Ranges of up to 1,024 entries (protocols/README.md §7 "Range size"), asked of a real holder
 * node over /idlegrid/ledger/sync: a responder never sends more than asked, `limit` 0 means 256,
 * so a node from before (which asks for 256 and decodes no more) never gets a range it refuses;
 * a fresh node pulls a long feed in ranges of 1,024.
 */
import * as assert from 'node:assert/strict'
import { join } from 'node:path'
import { decodeBounded, MAX_BYTES } from '../../protocols/codec.js'
import { SyncResponse } from '../../protocols/ledger.js'
import { resolveConfig } from '../../src/config/index.js'
import { ledgerService } from '../../src/ledger/service/ledger-node.js'
import type { LedgerService } from '../../src/ledger/service/ledger-service.js'
import { DEFAULT_RANGE_ENTRIES, MAX_RANGE_ENTRIES, syncRequest } from '../../src/ledger/sync/protocol.js'
import { createNode, type IdlegridNode } from '../../src/node/index.js'
import { tempDir, waitFor } from '../utils/index.js'
import { idOf, newSigner } from './feeds.js'
import { summaryFeed } from './flood-fixtures.js'
import type { Signer } from '../../src/ledger/dev.js'
import type { PeerId } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'

const FEED = 1_100

describe('ledger: ranges of up to 1,024 entries, never more than asked', function () {
  this.timeout(60_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  let alice: Signer
  let holder: IdlegridNode
  let asker: IdlegridNode
  const nodes: IdlegridNode[] = []
  const ledgerOf = (node: IdlegridNode): LedgerService =>
    (node.libp2p.services as unknown as { ledger: LedgerService }).ledger

  async function start (name: string, trusted: string[], bootstrap?: IdlegridNode): Promise<IdlegridNode> {
    const config = resolveConfig({ role: 'bootstrap', flags: { dataDir: join(dir.path, name), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: bootstrap == null ? [] : [bootstrap.libp2p.getMultiaddrs()[0].toString()], heartbeatSeconds: 60 } })
    const node = await createNode(config, { services: { ledger: ledgerService({ dataDir: config.dataDir, role: 'renter', summaryIntervalMs: 0, syncIntervalMs: 3_600_000, trustedPeers: trusted }) } })
    nodes.push(node)
    return node
  }

  /** The holder's answer to a range request of alice's feed from seq 1 with `limit`. */
  async function askRange (limit: number): Promise<SyncResponse.Entries> {
    const dialer = {
      openConnection: async (peer: PeerId, opts: { signal?: AbortSignal }) => await asker.libp2p.dial(peer, opts)
    } as unknown as ConnectionManager
    const response = await syncRequest(
      dialer,
      holder.peerId,
      { range: { author: alice.peerId.toMultihash().bytes, fromSeq: 1n, limit } },
      AbortSignal.timeout(10_000)
    )
    assert.ok(response.entries != null, 'a range is answered with entries')
    return response.entries
  }

  before(async () => {
    dir = await tempDir('idlegrid-range-size-')
    alice = await newSigner()
    holder = await start('holder', [idOf(alice)])
    const records = summaryFeed(alice, FEED)
    const outcomes = await ledgerOf(holder).ingest.ingest(
      records.map(r => r.envelope),
      { range: { author: alice.peerId.toMultihash().bytes, fromSeq: 1 } }
    )
    assert.deepEqual([...new Set(outcomes.map(o => o.status))], ['added'])
    // a node that holds nothing and syncs with nobody on its own (its sync runs once an hour)
    asker = await start('asker', [idOf(alice)])
    await asker.libp2p.dial(holder.libp2p.getMultiaddrs()[0])
  })
  after(async () => {
    await Promise.all(nodes.map(async n => { await n.stop() }))
    await dir.cleanup()
  })

  it('limit 0 is 256 and 256 is 256: what a node from before asks gets no more than its decoder takes', async () => {
    for (const limit of [0, DEFAULT_RANGE_ENTRIES]) {
      const range = await askRange(limit)
      assert.equal(range.entries.length, DEFAULT_RANGE_ENTRIES, `limit ${limit}`)
      assert.equal(range.more, true)
      // the answer decodes under the bound nodes from before ranges of 1,024 keep
      const before = decodeBounded(SyncResponse, SyncResponse.encode({ entries: range }), 'sync response', MAX_BYTES.syncResponse, { entries: { entries: 256 } })
      assert.equal(before.entries?.entries.length, 256)
    }
  })

  it('up to 1,024 when asked, capped at 1,024 when more is asked, and never more than asked', async () => {
    assert.equal(MAX_RANGE_ENTRIES, 1024)
    assert.equal((await askRange(1024)).entries.length, 1024)
    const capped = await askRange(5_000)
    assert.equal(capped.entries.length, 1024)
    assert.equal(capped.more, true)
    assert.equal((await askRange(300)).entries.length, 300)
    assert.equal((await askRange(1)).entries.length, 1)
  })

  it('a fresh node pulls a feed of 1,100 in two ranges, and holds it all', async () => {
    // what the holder's store reads for each range it serves (a spy on the real store)
    const served: number[] = []
    const store = ledgerOf(holder).store
    const range = store.range.bind(store)
    store.range = async (...args: Parameters<typeof store.range>) => {
      const read = await range(...args)
      served.push(read.entries.length)
      return read
    }
    const fresh = await start('fresh', [idOf(alice)], holder)
    await waitFor(() => ledgerOf(fresh).store.head(idOf(alice))?.seq === FEED, { timeoutMs: 30_000, what: 'the fresh node to hold alice\'s whole feed' })
    // the asker, connected since the first spec, may pull the feed too (its sync on connect): every
    // pull is one range of 1,024 and the rest
    assert.ok(served.length >= 2 && served.length % 2 === 0, `ranges served: ${served.join(', ')}`)
    assert.deepEqual([...new Set(served)].sort((a, b) => a - b), [FEED - 1024, 1024])
  })
})
