/**
 * A node paces the sync requests it opens to one peer (sync/requests.ts SYNC_PACE): each is a
 * stream, and the peer's guard refuses inbound streams past its rate, a strike each. Real
 * nodes: a holder of many one-entry feeds whose guard allows 20 streams a second (bursts of
 * 60), answering as a node from before `ranges` requests, so that each feed is a request of its
 * own (as every feed is of such a peer, and every long feed of any); a node asking faster is
 * refused, a node paced within it gets every feed, nothing refused.
 */
import * as assert from 'node:assert/strict'
import { join } from 'node:path'
import { LedgerEntry } from '../../protocols/ledger.js'
import { resolveConfig } from '../../src/config/index.js'
import { sealEntry } from '../../src/ledger/entries/entry.js'
import { ledgerService } from '../../src/ledger/service/ledger-node.js'
import { createNode, type IdlegridNode, type RateLimit } from '../../src/node/index.js'
import { tempDir, waitFor } from '../utils/index.js'
import { idOf, signers } from './feeds.js'
import { summaryBody } from './flood-fixtures.js'
import { wrapSync } from './sync-responders.js'
import type { LedgerService } from '../../src/ledger/service/ledger-service.js'
import type { Signer } from '../../src/ledger/dev.js'

// the hasty node's 200 requests exceed 60 + 20 a second unless it runs slower than ~45 a second
const FEEDS = 200
const HOLDER_STREAMS: RateLimit = { perSecond: 20, burst: 60 }

describe('ledger: sync requests paced within a peer\'s stream limit', function () {
  this.timeout(90_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  let authors: Signer[]
  let holder: IdlegridNode
  const nodes: IdlegridNode[] = []
  const ledgerOf = (node: IdlegridNode): LedgerService =>
    (node.libp2p.services as unknown as { ledger: LedgerService }).ledger
  const heldFeeds = (node: IdlegridNode): number => ledgerOf(node).store.allHeads().filter(h => h.seq === 1).length
  const refused = (): number => holder.libp2p.services.peerGuard.snapshot().counters.streamsRefused

  async function start (
    name: string,
    opts: { pace?: RateLimit, guard?: RateLimit, bootstrap?: IdlegridNode }
  ): Promise<IdlegridNode> {
    const config = resolveConfig({
      role: 'bootstrap',
      flags: {
        dataDir: join(dir.path, name),
        listen: ['/ip4/127.0.0.1/tcp/0'],
        bootstrap: opts.bootstrap == null ? [] : [opts.bootstrap.libp2p.getMultiaddrs()[0].toString()],
        heartbeatSeconds: 60
      }
    })
    const ledger = ledgerService({
      dataDir: config.dataDir,
      role: 'renter',
      summaryIntervalMs: 0,
      syncIntervalMs: 3_600_000,
      trustedPeers: authors.map(idOf),
      syncPace: opts.pace
    })
    const node = await createNode(config, {
      services: { ledger },
      ...(opts.guard != null ? { peerGuard: { streams: opts.guard } } : {})
    })
    nodes.push(node)
    return node
  }

  before(async () => {
    dir = await tempDir('idlegrid-sync-pace-')
    authors = await signers(FEEDS)
    holder = await start('holder', { guard: HOLDER_STREAMS })
    const time = Date.now() - 60_000
    for (const author of authors) {
      const entry = sealEntry(author.key, author.peerId, {
        seq: 1,
        prevHash: new Uint8Array(0),
        time,
        kind: LedgerEntry.BodyKind.HEARTBEAT_SUMMARY,
        body: summaryBody(time - 1_000)
      })
      const [outcome] = await ledgerOf(holder).ingest.ingest([entry.envelope])
      assert.equal(outcome?.status, 'added')
    }
    await wrapSync(holder, { beforeRanges: true })
  })
  after(async () => {
    await Promise.all(nodes.map(async n => { await n.stop() }))
    await dir.cleanup()
  })

  it('asked faster than the holder allows, the holder refuses streams', async () => {
    const before = refused()
    const hasty = await start('hasty', { pace: { perSecond: 1_000, burst: 1_000 }, bootstrap: holder })
    await waitFor(() => refused() > before, { timeoutMs: 20_000, what: 'the holder to refuse a stream of the hasty node' })
    assert.ok(heldFeeds(hasty) < FEEDS, 'the hasty node did not get every feed in its first session')
    await hasty.stop()
  })

  it('paced within it (16 a second, bursts of 30), a fresh node gets every feed in one go and nothing is refused', async () => {
    const before = refused()
    const paced = await start('paced', { pace: { perSecond: 16, burst: 30 }, bootstrap: holder })
    await waitFor(() => heldFeeds(paced) === FEEDS, { timeoutMs: 30_000, what: `the paced node to hold all ${FEEDS} feeds` })
    assert.equal(refused(), before, 'no stream of the paced node was refused')
  })
})
