/**
 * The renter's bid collector on its own (bid-collector.ts): one bid per signer, the signer
 * bound, and which bids cost a dial. Signed bids with real keys; the dialler and the address
 * book are counters (the network version of these attacks is redteam-bids.spec.ts).
 */
import * as assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { defaultLogger } from '@libp2p/logger'
import { multiaddr } from '@multiformats/multiaddr'
import { BidCollector, MAX_BIDDERS_PER_AUCTION, MAX_UNFIT_BIDS_KEPT, LATE_READ_GRACE_MS, type BidCollectorComponents } from '../../src/market/renter/bid-collector.js'
import { parseJobSpec, toJobRequest } from '../../src/market/renter/job-spec.js'
import { signBid, usdToMicro, type Bid, type JobRequest } from '../../src/market/shared/messages.js'
import { recordAttack } from '../utils/index.js'
import type { Signed } from '../../src/identity/index.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

interface Bidder { key: Ed25519PrivateKey, peerId: PeerId }

async function bidder (): Promise<Bidder> {
  const key = await generateKeyPair('Ed25519')
  return { key, peerId: peerIdFromPrivateKey(key) }
}

function bidOf (job: JobRequest, by: Bidder, price: bigint, over: Partial<Bid> = {}): Signed<Bid> {
  const now = Date.now()
  return signBid(by.key, by.peerId, {
    jobId: job.jobId,
    provider: by.peerId.toMultihash().bytes,
    priceMicroUsd: price,
    gpuModel: 'h100',
    vramMib: 81_920,
    region: 'eu-west',
    residency: '',
    createdAt: BigInt(now),
    expiresAt: BigInt(now + 120_000),
    capabilitySeq: 0n,
    jobNonce: job.nonce,
    simulated: false,
    cachedDatasets: 0,
    addrs: [multiaddr('/ip4/127.0.0.1/tcp/9').bytes],
    ...over
  })
}

describe('market: the renter\'s bid collector', function () {
  this.timeout(60_000)
  const dialled: string[] = []
  const learnt: string[] = []
  const connected = new Set<string>()
  const components = {
    peerStore: { merge: async (peer: PeerId) => { learnt.push(peer.toString()) } },
    connectionManager: {
      openConnection: async (peer: PeerId) => { dialled.push(peer.toString()); throw new Error('not dialling in a unit test') },
      // bidders in `connected` came over a connection of their own (the bid stream's)
      getConnections: (peer: PeerId) => connected.has(peer.toString()) ? [{ remotePeer: peer }] : []
    },
    pubsub: {}
  } as unknown as BidCollectorComponents
  // made afresh for each test: a job made when the file loads has expired by the time a long suite reaches it
  let job: JobRequest
  let collector: BidCollector

  beforeEach(() => {
    job = toJobRequest(parseJobSpec({ name: 'c', runtime: { image: 'x:1' }, constraints: { minVramGb: 40, maxPriceUsd: 10 }, auction: { bidWindowMs: 60_000 } }), { renter: new Uint8Array(38) })
    dialled.length = 0
    learnt.length = 0
    connected.clear()
    collector = new BidCollector(components, defaultLogger().forComponent('test:bid-collector'))
  })
  afterEach(() => { collector.close(job) })

  it('red team: 10,000 bids from one signer keep one bid, its cheapest; one dial, one address merge, one progress event', async () => {
    const flooder = await bidder()
    const honest = await bidder()
    const events: string[] = []
    const window = collector.open(job, (bid) => { events.push(bid.signer.toString()) })
    collector.add(bidOf(job, honest, usdToMicro(2)))
    const flood = 10_000
    // prices go down and up again: the cheapest is in the middle
    for (let i = 0; i < flood; i++) collector.add(bidOf(job, flooder, usdToMicro(9) - BigInt(Math.abs(i - flood / 2))))
    const kept = window.bids.filter(b => b.signer.equals(flooder.peerId))
    assert.equal(window.bids.length, 2)
    assert.equal(kept.length, 1)
    assert.equal(kept[0]?.message.priceMicroUsd, usdToMicro(9) - BigInt(flood / 2))
    assert.equal(collector.stats().held, 2)
    assert.equal(window.counts.kept + window.counts.notBetter, flood + 1)
    assert.deepEqual(dialled.filter(p => p === flooder.peerId.toString()).length, 1)
    assert.deepEqual(learnt.filter(p => p === flooder.peerId.toString()).length, 1)
    assert.deepEqual(events.filter(p => p === flooder.peerId.toString()).length, 1)
    recordAttack({ issue: '13 market', attack: `bid flood on the collector: ${flood} bids from one signer`, got: `${kept.length} kept (the cheapest), ${window.bids.length} held in all, 1 dial`, limit: 'one bid per signer per auction' })
  })

  it('a bid from a connected bidder (it came over its own bid stream) costs no dial and no address write, and still counts', async () => {
    const near = await bidder()
    const far = await bidder()
    connected.add(near.peerId.toString())
    const events: string[] = []
    const window = collector.open(job, (bid) => { events.push(bid.signer.toString()) })
    assert.equal(collector.add(bidOf(job, near, usdToMicro(2))), 'kept')
    assert.equal(collector.add(bidOf(job, far, usdToMicro(3))), 'kept')
    assert.deepEqual(dialled, [far.peerId.toString()])
    assert.deepEqual(learnt, [far.peerId.toString()])
    assert.deepEqual(events, [near.peerId.toString(), far.peerId.toString()])
    assert.equal(window.best.size, 2)
  })

  it('a bid read after the window\'s end but before the auction closed it (a busy renter read it late) is kept; once closed, or past the read grace, it is late', async () => {
    const [a, b, c] = await Promise.all([bidder(), bidder(), bidder()])
    const ended = { ...job, createdAt: BigInt(Date.now() - job.bidWindowMs - 50) }
    const window = collector.open(ended)
    assert.equal(collector.add(bidOf(ended, a as Bidder, usdToMicro(2))), 'kept')
    window.closed = true
    assert.equal(collector.add(bidOf(ended, b as Bidder, usdToMicro(1))), 'late')
    collector.close(ended)
    const longEnded = {
      ...job,
      jobId: new Uint8Array(16).fill(7),
      createdAt: BigInt(Date.now() - job.bidWindowMs - LATE_READ_GRACE_MS - 50)
    }
    const open = collector.open(longEnded)
    assert.equal(collector.add(bidOf(longEnded, c as Bidder, usdToMicro(1))), 'late')
    assert.deepEqual([window.counts.late, open.counts.late, window.best.size, open.best.size], [1, 1, 1, 0])
    collector.close(longEnded)
  })

  it('keeps at most MAX_BIDDERS_PER_AUCTION signers; a kept signer can still lower its bid when the room is full', async () => {
    const signers = await Promise.all(Array.from({ length: MAX_BIDDERS_PER_AUCTION + 20 }, bidder))
    const window = collector.open(job)
    for (const s of signers) collector.add(bidOf(job, s, usdToMicro(5)))
    assert.equal(window.best.size, MAX_BIDDERS_PER_AUCTION)
    assert.equal(window.counts.overflow, 20)
    const first = signers[0] as Bidder
    collector.add(bidOf(job, first, usdToMicro(4)))
    assert.equal(window.best.get(first.peerId.toString())?.message.priceMicroUsd, usdToMicro(4))
    assert.equal(window.best.size, MAX_BIDDERS_PER_AUCTION)
  })

  it('red team: unfit bids (constraints, lapsing before the window ends, another nonce, unknown job) cost no dial and no address', async () => {
    const bait = await Promise.all(Array.from({ length: MAX_UNFIT_BIDS_KEPT + 8 }, bidder))
    const window = collector.open(job)
    const unfit: Array<Partial<Bid>> = [
      { vramMib: 1 }, { priceMicroUsd: usdToMicro(11) }, { expiresAt: BigInt(Date.now() + 1_000) },
      { jobNonce: new Uint8Array(16) }, { jobId: new Uint8Array(16) }
    ]
    bait.forEach((b, i) => { collector.add(bidOf(job, b, usdToMicro(1), unfit[i % unfit.length])) })
    assert.deepEqual(dialled, [])
    assert.deepEqual(learnt, [])
    assert.equal(window.best.size, 0)
    assert.ok(window.unfit.size <= MAX_UNFIT_BIDS_KEPT, 'unfit bids kept for the report are bounded')
    assert.equal(window.counts.otherAuction, bait.filter((_, i) => i % unfit.length === 3).length)
    assert.equal(collector.stats().unknownJob, bait.filter((_, i) => i % unfit.length === 4).length)
    // a signer whose unfit bid is followed by a fitting one: the fitting one is kept and dialled,
    // the unfit one forgotten
    const late = bait[0] as Bidder
    collector.add(bidOf(job, late, usdToMicro(3)))
    assert.equal(window.best.get(late.peerId.toString())?.message.priceMicroUsd, usdToMicro(3))
    assert.equal(window.unfit.has(late.peerId.toString()), false)
    assert.deepEqual(dialled, [late.peerId.toString()])
    recordAttack({ issue: '13 market', attack: `${bait.length} unfit bids from distinct signers`, got: `${dialled.length - 1} dials, ${learnt.length - 1} addresses kept, ${window.unfit.size} kept for the report`, limit: `dials only for bids that fit the job; ≤ ${MAX_UNFIT_BIDS_KEPT} unfit bids kept` })
  })
})
