/**
 * Several ranges in one sync request (protocols/README.md §7 "Range size"), on real nodes over
 * /idlegrid/ledger/sync: a fresh node pulls many short feeds a `ranges` request at a time (up to
 * 64 ranges, 1,024 entries in all), a long feed on its own; a responder shares one response's
 * bounds over the ranges in order; a node from before (its heads do not say `answers_ranges`) is
 * asked one range at a time; an answer that does not match its request is refused whole.
 */
import * as assert from 'node:assert/strict'
import { join } from 'node:path'
import { LIMITS } from '../../protocols/codec.js'
import type { SyncRequest, SyncResponse } from '../../protocols/ledger.js'
import { resolveConfig } from '../../src/config/index.js'
import { parseAuthor, type LedgerRecord } from '../../src/ledger/entries/entry.js'
import { ledgerService } from '../../src/ledger/service/ledger-node.js'
import { MAX_RANGE_ENTRIES, syncRequest } from '../../src/ledger/sync/protocol.js'
import { MAX_RANGES_PER_REQUEST, SHORT_FEED_ENTRIES } from '../../src/ledger/sync/pull-short.js'
import { createNode, type IdlegridNode } from '../../src/node/index.js'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { logger } from '@libp2p/logger'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { LedgerIngest } from '../../src/ledger/ingest/ingest.js'
import { SyncClient } from '../../src/ledger/sync/client.js'
import { tempDir, waitFor } from '../utils/index.js'
import { idOf, signers } from './feeds.js'
import { summaryFeed } from './flood-fixtures.js'
import { wrapSync, type SyncRequestCounts } from './sync-responders.js'
import type { LedgerService } from '../../src/ledger/service/ledger-service.js'
import type { Signer } from '../../src/ledger/dev.js'
import type { PeerId } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'

/** one-entry feeds: three requests of at most 64 ranges */
const SHORT_FEEDS = 150
/** carol's feed: short (within SHORT_FEED_ENTRIES), pulled in a `ranges` request with the others */
const CAROL = 200
/** alice's feed: long, pulled in ranges of its own */
const ALICE = 1_100

describe('ledger: several ranges in one sync request', function () {
  this.timeout(120_000)
  let dir: { path: string, cleanup: () => Promise<void> }
  let shorts: Signer[]
  let alice: Signer
  let carol: Signer
  let all: Signer[]
  const feeds = new Map<string, LedgerRecord[]>()
  const nodes: IdlegridNode[] = []
  const ledgerOf = (node: IdlegridNode): LedgerService =>
    (node.libp2p.services as unknown as { ledger: LedgerService }).ledger
  const held = (node: IdlegridNode, s: Signer): number => ledgerOf(node).store.head(idOf(s))?.seq ?? 0
  const holdsAll = (node: IdlegridNode): boolean => all.every(s => held(node, s) === feeds.get(idOf(s))?.length)

  async function start (name: string, bootstrap?: IdlegridNode): Promise<IdlegridNode> {
    const config = resolveConfig({ role: 'bootstrap', flags: { dataDir: join(dir.path, name), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: bootstrap == null ? [] : [bootstrap.libp2p.getMultiaddrs()[0].toString()], heartbeatSeconds: 60 } })
    const node = await createNode(config, { services: { ledger: ledgerService({ dataDir: config.dataDir, role: 'renter', summaryIntervalMs: 0, syncIntervalMs: 3_600_000, trustedPeers: all.map(idOf) }) } })
    nodes.push(node)
    return node
  }

  /**
   * A node holding every feed, its sync served through the wrapper (counted, maybe as a node from
   * before, or lying).
   */
  async function holder (
    name: string,
    opts: Parameters<typeof wrapSync>[1] = {}
  ): Promise<{ node: IdlegridNode, counts: SyncRequestCounts }> {
    const node = await start(name)
    for (const signer of all) {
      const records = feeds.get(idOf(signer)) ?? []
      const outcomes = await ledgerOf(node).ingest.ingest(
        records.map(r => r.envelope),
        { range: { author: signer.peerId.toMultihash().bytes, fromSeq: 1 } }
      )
      assert.deepEqual([...new Set(outcomes.map(o => o.status))], ['added'])
    }
    return { node, counts: await wrapSync(node, opts) }
  }

  /** `node`'s dials and connections, as the sync's requests and client read a connection manager. */
  const dialerOf = (node: IdlegridNode): ConnectionManager => ({
    openConnection: async (peer: PeerId, opts: { signal?: AbortSignal }) => await node.libp2p.dial(peer, opts),
    getConnections: (peer?: PeerId) => node.libp2p.getConnections(peer)
  }) as unknown as ConnectionManager

  /** `from`'s request to `to`, answered (or the error it got). */
  async function ask (from: IdlegridNode, to: IdlegridNode, request: SyncRequest): Promise<SyncResponse> {
    await from.libp2p.dial(to.libp2p.getMultiaddrs()[0])
    return await syncRequest(dialerOf(from), to.peerId, request, AbortSignal.timeout(10_000))
  }

  const span = (s: Signer, fromSeq: number, limit: number): SyncRequest.Range => ({
    author: s.peerId.toMultihash().bytes,
    fromSeq: BigInt(fromSeq),
    limit
  })

  before(async () => {
    dir = await tempDir('idlegrid-sync-ranges-')
    shorts = await signers(SHORT_FEEDS)
    ;[alice, carol] = await signers(2)
    all = [...shorts, alice, carol]
    for (const s of shorts) feeds.set(idOf(s), summaryFeed(s, 1))
    feeds.set(idOf(alice), summaryFeed(alice, ALICE))
    feeds.set(idOf(carol), summaryFeed(carol, CAROL))
  })
  after(async () => {
    await Promise.all(nodes.map(async n => { await n.stop() }))
    await dir.cleanup()
  })

  it('a fresh node pulls 151 short feeds in ranges requests (3 of up to 64) and the long one on its own, and holds every entry', async () => {
    assert.equal(SHORT_FEED_ENTRIES >= CAROL && ALICE > SHORT_FEED_ENTRIES, true)
    const { node, counts } = await holder('holder')
    const fresh = await start('fresh', node)
    await waitFor(() => holdsAll(fresh), { timeoutMs: 30_000, what: 'the fresh node to hold every feed' })
    // the feeds the holder's first heartbeat relayed heads of (4 at most) are pulled at once, one
    // range a request, beside the session; the short feeds the session did not hold by then it
    // asked in `ranges` requests of up to 64
    const relayed = [...counts.rangeAuthors.keys()].filter(id => id !== idOf(alice))
    assert.ok(relayed.length <= LIMITS.heartbeat.relayedHeads, `short feeds asked one range a request: ${relayed.length}`)
    assert.ok(counts.rangesOfRanges >= SHORT_FEEDS + 1 - relayed.length && counts.rangesOfRanges <= SHORT_FEEDS + 1, `ranges asked: ${counts.rangesOfRanges}`)
    assert.equal(counts.ranges, Math.ceil(counts.rangesOfRanges / MAX_RANGES_PER_REQUEST))
    // alice's 1,100 (too long for a ranges request): one range of 1,024 and the rest, by the session
    // or by a relayed head's pull, never both (client.ts: feeds-pulled.ts)
    const aliceAsked = counts.rangeAuthors.get(idOf(alice)) ?? 0
    assert.equal(aliceAsked, 2, `alice's feed asked in ${aliceAsked} range requests`)
  })

  it('a ranges request is answered in order within one response\'s 1,024 entries: a range past them gets what is left, maybe nothing, with `more`', async () => {
    const { node } = await holder('holder-b')
    const asker = await start('asker-b')
    const first = await ask(asker, node, {
      ranges: { ranges: [span(alice, 1, 1024), span(carol, 1, 200), span(shorts[0], 1, 1)] }
    })
    assert.deepEqual(first.ranges?.ranges.map(r => [r.entries.length, r.more]), [[1024, true], [0, true], [0, true]])
    const second = await ask(asker, node, {
      ranges: { ranges: [span(carol, 1, 200), span(alice, 1, 1024), span(shorts[0], 1, 1)] }
    })
    assert.deepEqual(second.ranges?.ranges.map(r => [r.entries.length, r.more]), [[200, false], [824, true], [0, true]])
    // never more than asked; limit 0 is 256; a seq past the head and an author it lacks: nothing, no `more`
    const stranger = (await signers(1))[0]
    const third = await ask(asker, node, {
      ranges: { ranges: [span(carol, 5, 3), span(alice, 1, 0), span(carol, CAROL + 1, 10), span(stranger, 1, 10)] }
    })
    assert.deepEqual(
      third.ranges?.ranges.map(r => [r.entries.length, r.more]),
      [
        [3, true],
        [256, true],
        [0, false],
        [0, false]
      ]
    )
    // each range is its feed's own run from its seq
    assert.deepEqual(third.ranges?.ranges[0].entries, feeds.get(idOf(carol))?.slice(4, 7).map(r => r.envelope))
    // the heads page says it answers them
    assert.equal(
      (
        await ask(asker, node, {
          heads: {
            ownAuthor: new Uint8Array(0),
            ownSeq: 0n,
            ownHash: new Uint8Array(0),
            afterAuthor: new Uint8Array(0),
            limit: 1
          }
        })
      ).heads?.answersRanges,
      true
    )
  })

  it('red team: a ranges request with no range, a malformed one or more than 64 ranges is refused, not answered', async () => {
    const { node } = await holder('holder-c')
    const asker = await start('asker-c')
    const refused = async (request: SyncRequest, why: string): Promise<void> => {
      await assert.rejects(ask(asker, node, request), /without answering|reset|closed/i, why)
    }
    await refused({ ranges: { ranges: [] } }, 'no range')
    await refused({ ranges: { ranges: [span(carol, 1, 1), { author: new Uint8Array([1, 2, 3]), fromSeq: 1n, limit: 1 }] } }, 'an author that is no peer id')
    await refused({ ranges: { ranges: [span(carol, 0, 1)] } }, 'seq 0')
    await refused({ ranges: { ranges: Array.from({ length: MAX_RANGES_PER_REQUEST + 1 }, () => span(shorts[0], 1, 1)) } }, '65 ranges')
    // the holder is still serving
    assert.equal(
      (await ask(asker, node, { ranges: { ranges: [span(carol, 1, 2)] } })).ranges?.ranges[0].entries.length,
      2
    )
  })

  it('a node from before ranges requests (its heads do not say it answers them) is asked one range at a time, and gives every feed', async () => {
    const { node, counts } = await holder('holder-before', { beforeRanges: true })
    const fresh = await start('fresh-before', node)
    await waitFor(() => holdsAll(fresh), { timeoutMs: 60_000, what: 'the fresh node to hold every feed from the node from before' })
    assert.equal(counts.ranges, 0, 'no ranges request was sent to it')
    // every feed one range at a time (alice's in two; a feed a heartbeat relayed may be pulled twice)
    assert.ok((counts.rangeAuthors.get(idOf(alice)) ?? 0) >= 2)
    assert.equal(counts.rangeAuthors.size, SHORT_FEEDS + 2)
  })

  describe('red team: a ranges answer that does not match its request is refused whole; a range that does not verify is refused whole, and the verified ranges beside it are taken', () => {
    let lie: (request: SyncRequest.Ranges, honest: SyncResponse) => SyncResponse
    let liar: IdlegridNode
    let liarCounts: SyncRequestCounts
    before(async () => {
      ({ node: liar, counts: liarCounts } = await holder('liar', { lieToRanges: (request, honest) => lie(request, honest) }))
    })
    /**
     * Nothing of a lying answer is stored: the short feeds the node holds are those the liar was
     * also asked for one range at a time (the feeds its heartbeat relayed heads of), which it
     * answers truly.
     */
    const nothingLiedStored = (node: IdlegridNode): boolean =>
      shorts.every(s => held(node, s) === 0 || liarCounts.rangeAuthors.has(idOf(s)))
    /** The same, of the feeds of the first ranges of the first lying answer (those the lie was in). */
    const liedRangesNotStored =
      (count: number) =>
        (node: IdlegridNode): boolean =>
          liedAuthors
            .slice(0, count)
            .every(
              id => held(node, shorts.find(s => idOf(s) === id) as Signer) === 0 || liarCounts.rangeAuthors.has(id)
            )
    const ranges = (honest: SyncResponse): SyncResponse.Entries[] => honest.ranges?.ranges ?? []
    /** the positions of a request's one-entry ranges (the short feeds', not carol's) */
    const oneEntryRanges = (request: SyncRequest.Ranges): number[] =>
      request.ranges.flatMap((r, i) => (r.limit === 1 ? [i] : []))

    const cases: Array<{ name: string, lie: typeof lie, error: RegExp, refused: (node: IdlegridNode) => boolean }> = [
      {
        name: 'one range fewer than asked',
        lie: (_, honest) => ({ ranges: { ranges: ranges(honest).slice(1) } }),
        error: /answered \d+ ranges of the \d+ asked/,
        refused: nothingLiedStored
      },
      {
        name: 'a range longer than its limit (the next feed\'s entry added to a one-entry range)',
        lie: (_, honest) => ({
          ranges: {
            ranges: ranges(honest).map((r, i, a) =>
              i === 0 ? { ...r, entries: [...r.entries, ...(a[1]?.entries ?? [])] } : r
            )
          }
        }),
        error: /entries for a range of at most \d+/,
        refused: nothingLiedStored
      },
      {
        name: 'two ranges swapped (another author\'s entries under a feed)',
        lie: (request, honest) => {
          const [x, y] = oneEntryRanges(request)
          return { ranges: { ranges: ranges(honest).map((r, i, a) => (i === x ? a[y] : i === y ? a[x] : r)) } }
        },
        error: /sent an entry we refuse/,
        refused: liedRangesNotStored(2)
      },
      {
        name: 'an altered entry in a range (a byte of its body changed)',
        lie: (request, honest) => {
          const [x] = oneEntryRanges(request)
          return {
            ranges: {
              ranges: ranges(honest).map((r, i) => {
                if (i !== x) return r
                const altered = Uint8Array.from(r.entries[0])
                altered[altered.length - 80] ^= 1
                return { ...r, entries: [altered] }
              })
            }
          }
        },
        error: /sent an entry we refuse/,
        refused: liedRangesNotStored(1)
      }
    ]
    /** the authors of the first lying answer's one-entry ranges (those the lies are in), in order */
    let liedAuthors: string[] = []
    for (const c of cases) {
      it(c.name, async () => {
        liedAuthors = []
        liarCounts.rangeAuthors.clear()
        lie = (request, honest) => {
          if (liedAuthors.length === 0) liedAuthors = oneEntryRanges(request).map(i => parseAuthor(request.ranges[i].author)?.id ?? '?')
          return c.lie(request, honest)
        }
        const fresh = await start(`fresh-${cases.indexOf(c)}`)
        await fresh.libp2p.dial(liar.libp2p.getMultiaddrs()[0])
        const report = await ledgerOf(fresh).syncNow({ timeoutMs: 20_000 })
        assert.ok(report.errors.some(e => c.error.test(e)), `errors: ${report.errors.join('; ')}`)
        assert.ok(liedAuthors.length > 1, 'the liar was asked a ranges request')
        assert.ok(c.refused(fresh), 'nothing of the lying answer was stored')
        // the node goes on: alice's long feed, asked one range at a time, is not the liar's lie
        assert.equal(fresh.libp2p.status, 'started')
        await fresh.stop()
        nodes.splice(nodes.indexOf(fresh), 1)
      })
    }
  })

  /**
   * A sync client over a store of its own, on a node without a ledger (its service would sync
   * with the holders too): the client's sessions and hints are what the spec watches.
   */
  async function bareClient (
    name: string
  ): Promise<{ asker: IdlegridNode, client: SyncClient, ingest: LedgerIngest, stop: () => Promise<void> }> {
    const config = resolveConfig({ role: 'renter', flags: { dataDir: join(dir.path, name), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], heartbeatSeconds: 60 } })
    const asker = await createNode(config)
    nodes.push(asker)
    const key = await generateKeyPair('Ed25519')
    const ingest = await LedgerIngest.open(join(dir.path, `${name}-store`), { privateKey: key, peerId: peerIdFromPrivateKey(key) })
    const abort = new AbortController()
    const client = new SyncClient({
      connectionManager: dialerOf(asker),
      ledger: () => ingest,
      selfId: peerIdFromPrivateKey(key).toString(),
      signal: abort.signal,
      log: logger(`test:${name}`)
    })
    const stop = async (): Promise<void> => {
      abort.abort()
      await client.settled()
      await ingest.close()
    }
    return { asker, client, ingest, stop }
  }

  const aliceAuthor = (): Uint8Array => alice.peerId.toMultihash().bytes

  it('a relayed head of a feed a session is pulling starts no second pull of it (the same entries fetched twice)', async () => {
    const a = await holder('holder-dup-a')
    const b = await holder('holder-dup-b')
    const { asker, client, ingest, stop } = await bareClient('asker-dup')
    try {
      await asker.libp2p.dial(b.node.libp2p.getMultiaddrs()[0])
      let relayedTaken: boolean | undefined
      let heldThen = 0
      // b relays alice's head (as a heartbeat would) after the session wrote her first range and
      // while it pulls her second
      ingest.store.onAdded(record => {
        if (relayedTaken !== undefined || record.authorId !== idOf(alice)) return
        heldThen = ingest.store.head(idOf(alice))?.seq ?? 0
        relayedTaken = client.considerHint(b.node.peerId, aliceAuthor(), ALICE, { relayed: true })
      })
      await asker.libp2p.dial(a.node.libp2p.getMultiaddrs()[0])
      await client.syncWith(a.node.peerId)
      await client.settled()
      assert.ok(heldThen > 0 && heldThen < ALICE, `the hint came while alice's feed was pulled (${heldThen} held)`)
      assert.equal(relayedTaken, false, 'a relayed head started a second pull of a feed the session was pulling')
      assert.equal(b.counts.rangeAuthors.get(idOf(alice)) ?? 0, 0, 'b was asked for alice\'s feed')
      assert.equal(ingest.store.head(idOf(alice))?.seq, ALICE)
      // once the session is over, a relayed head beyond what is held is taken again
      assert.equal(client.considerHint(b.node.peerId, aliceAuthor(), ALICE + 1, { relayed: true }), true)
    } finally {
      await stop()
    }
  })

  /**
   * Holders a and b (b answering each range `delayRangeMs` late), a bare client connected to
   * both; b's head of alice's feed is relayed to it first (taken: b's pull starts), then its
   * session with a runs to its end.
   */
  async function hintThenSession (
    name: string,
    delayRangeMs: number
  ): Promise<{
    a: { counts: SyncRequestCounts }
    b: { counts: SyncRequestCounts }
    client: SyncClient
    ingest: LedgerIngest
    stop: () => Promise<void>
  }> {
    const a = await holder(`holder-${name}-a`)
    const b = await holder(`holder-${name}-b`, { delayRangeMs })
    const bare = await bareClient(`asker-${name}`)
    await bare.asker.libp2p.dial(b.node.libp2p.getMultiaddrs()[0])
    await bare.asker.libp2p.dial(a.node.libp2p.getMultiaddrs()[0])
    assert.equal(bare.client.considerHint(b.node.peerId, aliceAuthor(), ALICE, { relayed: true }), true)
    await bare.client.syncWith(a.node.peerId)
    return { a, b, client: bare.client, ingest: bare.ingest, stop: bare.stop }
  }

  it('a session comes to a feed a relayed head\'s pull is fetching only once that pull is over, and fetches none of it again', async () => {
    // b answers each range 300 ms late: its pull of alice's feed is still running when the session compares
    const { a, b, client, ingest, stop } = await hintThenSession('late', 300)
    try {
      assert.equal(ingest.store.head(idOf(alice))?.seq, ALICE, 'the session ended before alice\'s feed was held')
      await client.settled()
      assert.equal(a.counts.rangeAuthors.get(idOf(alice)) ?? 0, 0, 'a was asked for alice\'s feed while b\'s pull of it ran')
      assert.equal(b.counts.rangeAuthors.get(idOf(alice)), 2, 'b gave alice\'s feed in two ranges')
      assert.ok(all.every(s => ingest.store.head(idOf(s))?.seq === feeds.get(idOf(s))?.length), 'every feed is held')
    } finally {
      await stop()
    }
  })

  it('a feed a relayed head\'s pull began fetching after the session read the heads comes later too, and is fetched once', async () => {
    const a = await holder('holder-mid-a')
    // b answers each range 300 ms late: its pull of alice's feed runs past the session's short feeds
    const b = await holder('holder-mid-b', { delayRangeMs: 300 })
    const { asker, client, ingest, stop } = await bareClient('asker-mid')
    try {
      await asker.libp2p.dial(b.node.libp2p.getMultiaddrs()[0])
      let taken: boolean | undefined
      // b relays alice's head once the session stores the short feeds: it read the heads before
      ingest.store.onAdded(record => {
        if (taken !== undefined || record.authorId === idOf(alice)) return
        taken = client.considerHint(b.node.peerId, aliceAuthor(), ALICE, { relayed: true })
      })
      await asker.libp2p.dial(a.node.libp2p.getMultiaddrs()[0])
      await client.syncWith(a.node.peerId)
      await client.settled()
      assert.equal(taken, true, 'b\'s relayed head of alice\'s feed started no pull')
      assert.equal(ingest.store.head(idOf(alice))?.seq, ALICE)
      assert.equal(a.counts.rangeAuthors.get(idOf(alice)) ?? 0, 0, 'a was asked for alice\'s feed while b\'s pull of it ran')
      assert.equal(b.counts.rangeAuthors.get(idOf(alice)), 2, 'b gave alice\'s feed in two ranges')
    } finally {
      await stop()
    }
  })

  it('red team: a relayer that answers its hint\'s pull slowly delays the session\'s pull of that feed by the bounded wait only', async () => {
    // b answers each range 6 s late: far past the session's 2 s wait for a hint's pull
    const { a, b, ingest, stop } = await hintThenSession('slow', 6_000)
    try {
      // the session pulled alice's feed from a itself while b had not answered its first range
      assert.equal(ingest.store.head(idOf(alice))?.seq, ALICE)
      assert.equal(a.counts.rangeAuthors.get(idOf(alice)), 2, 'a gave alice\'s feed in two ranges')
      assert.equal(b.counts.rangeAuthors.get(idOf(alice)), 1, 'b was asked once and has not answered')
    } finally {
      await stop()
    }
  })

  it('asks no more ranges than fit one request, nor more than 1,024 entries in all', async () => {
    const { groupSpans } = await import('../../src/ledger/sync/pull-short.js')
    const author = alice.peerId.toMultihash().bytes
    const groups = groupSpans([
      ...Array.from({ length: 100 }, (_, i) => ({ author, fromSeq: i + 1, limit: 1 })),
      ...Array.from({ length: 5 }, (_, i) => ({ author, fromSeq: i + 1, limit: 256 }))
    ])
    assert.deepEqual(groups.map(g => g.length), [64, 36 + 3, 2])
    for (const g of groups) {
      assert.ok(g.reduce((sum, s) => sum + s.limit, 0) <= MAX_RANGE_ENTRIES)
      assert.ok(g.length <= MAX_RANGES_PER_REQUEST)
    }
  })
})
