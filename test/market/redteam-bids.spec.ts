/**
 * Red team, the renter's bid collector (issue 13 market holes), on real in-process libp2p
 * nodes. The attackers are nodes of their own that publish signed bids on the bids topic.
 * (The bid flood from one key is played by a separate attacker process in
 * test/redteam/market.spec.ts: in one process its validation starves every node, the honest
 * ones included; the 10,000-bid bound itself is checked on the collector in bid-collector.spec.ts.)
 *
 * 1. Dial bait: bids that can never win (too little VRAM) for a gold job, hoping the renter
 *    spends a dial and a latency probe on each bidder.
 * 2. Unknown-job flood: bids for job ids the renter is not auctioning (and for its job id under
 *    another auction's nonce), hoping the renter keeps them.
 */
import * as assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { parseSimulatedGpus } from '../../src/capability/gpu/simulated-gpus.js'
import { parsePolicy } from '../../src/capability/policy/policy.js'
import { providerProfile } from '../../src/capability/policy/profile.js'
import { parseJobSpec } from '../../src/market/renter/job-spec.js'
import { readJobRequest, signBid, usdToMicro, type Bid, type JobRequest } from '../../src/market/shared/messages.js'
import { DEFAULT_PRICING } from '../../src/market/provider/pricing.js'
import { MARKET_RENTER_SERVICE, type MarketRenterService } from '../../src/market/renter/renter-service.js'
import { neutralReputation } from '../../src/market/shared/reputation.js'
import { marketServices } from '../../src/market/role-services.js'
import { LEDGER_SERVICE } from '../../src/ledger/index.js'
import type { IdlegridNode } from '../../src/node/index.js'
import { MAX_LIFETIME_MS } from '../../protocols/codec.js'
import { hearAllJobs, providerMarketServices, reputationService, sendRawBid, waitForMarketMesh } from './fixtures.js'
import { recordAttack, startInProcessNetwork, UNLIMITED_GOSSIP_RATES, waitFor, type InProcessNetwork } from '../utils/index.js'
import type { Signed } from '../../src/identity/index.js'

const UNKNOWN_FLOOD = 200
/** multicodec of /p2p */
const P2P_CODE = 421
const FLAT = { ...DEFAULT_PRICING, peakMultiplier: 1, offPeakMultiplier: 1, clearingWeight: 0 }

describe('red team: the renter\'s bid collector (issue 13)', function () {
  this.timeout(120_000)
  let net: InProcessNetwork
  const profile = providerProfile(parsePolicy({ region: 'eu-west', priceFloor: 1.25, images: ['*'] }), parseSimulatedGpus(['H100:80']))
  const victim = (): IdlegridNode => net.renters[0] as IdlegridNode
  const attacker = (): IdlegridNode => net.renters[1] as IdlegridNode
  const honest = (): IdlegridNode => net.providers[0] as IdlegridNode
  const renterMarket = (): MarketRenterService =>
    victim().libp2p.services[MARKET_RENTER_SERVICE] as unknown as MarketRenterService
  /** bids the renter answered on its bid stream (every answer: it read and judged the bid) */
  let answered = 0
  const send = async (envelope: Uint8Array, job?: JobRequest): Promise<void> => {
    await sendRawBid(attacker(), victim().peerId, envelope, job).then(() => {
      answered++
    })
  }

  before(async () => {
    net = await startInProcessNetwork({
      providers: 1,
      renters: 2, // the victim, the attacker
      // the per-author gossip rate limit lifted: these floods must reach the auction's own bounds
      extensions: (role) => {
        if (role === 'provider') return { ...providerMarketServices(profile, { pricing: FLAT }), gossipRateLimits: UNLIMITED_GOSSIP_RATES }
        const ext = marketServices({ role })
        if (role === 'renter') ext.services[LEDGER_SERVICE] = reputationService(neutralReputation())
        return { ...ext, gossipRateLimits: UNLIMITED_GOSSIP_RATES }
      }
    })
    await waitForMarketMesh(net)
  })

  after(async () => { await net?.stop() })

  /** Runs `play` for every job request the victim publishes while `run` runs. */
  async function whileVictimAuctions<T> (
    play: (job: Signed<JobRequest>) => Promise<void>,
    run: () => Promise<T>
  ): Promise<T> {
    const plays: Array<Promise<void>> = []
    const off = await hearAllJobs(attacker(), (envelope) => {
      const job = readJobRequest(envelope)
      if (job.signer.equals(victim().peerId)) plays.push(play(job))
    }, net.bootstrap)
    try {
      const out = await run()
      await Promise.all(plays)
      return out
    } finally {
      off()
    }
  }

  it('red team: bids that cannot win a gold job cost the renter no dial and no latency probe', async () => {
    const me = attacker()
    // start unconnected, so that an outbound connection from the renter is one it opened for the bait
    // (the attacker's own bid streams open inbound ones)
    await victim().libp2p.hangUp(me.peerId)
    await waitFor(() => victim().libp2p.getConnections(me.peerId).length === 0, { what: 'the renter and the attacker to disconnect' })
    const opened: string[] = []
    const onOpen = (evt: CustomEvent<{ remotePeer: { equals: (p: unknown) => boolean }, direction: string }>): void => {
      if (evt.detail.remotePeer.equals(me.peerId)) opened.push(evt.detail.direction)
    }
    victim().libp2p.addEventListener('connection:open', onOpen as any)
    // dials of the bidder by anything but kad-dht and the peer connector: a DHT query or
    // routing-table ping may dial it (it sits in other nodes' tables), and the connector redials
    // peers it discovers while the renter is below its connection target (the hang-up above
    // puts it there); no bid caused either (both seen on a loaded machine)
    const dials: string[] = []
    const connectionManager = (
      victim().libp2p as unknown as {
        components: { connectionManager: { openConnection: (peer: unknown, opts?: unknown) => Promise<unknown> } }
      }
    ).components.connectionManager
    const openConnection = connectionManager.openConnection
    connectionManager.openConnection = async (peer, opts) => {
      const stack = new Error('dial').stack ?? ''
      if (String(peer).includes(me.peerId.toString()) && !stack.includes('@libp2p/kad-dht') && !stack.includes('PeerConnector.')) dials.push(stack.split('\n').slice(2, 6).join(' <'))
      return await openConnection.call(connectionManager, peer, opts)
    }
    let baits = 0
    // the bait advertises where the bidder listens, as an honest bid does: a renter that dials bidders finds it at once
    const addrs = me.libp2p.getMultiaddrs().map(a => a.decapsulateCode(P2P_CODE).bytes).slice(0, 4)
    try {
      const report = await whileVictimAuctions(async (job) => {
        for (const over of [{ vramMib: 1 }, { priceMicroUsd: usdToMicro(500) }, { region: 'nowhere' }]) {
          const bid = signBid(me.privateKey, me.peerId, { ...bidFor(job.message, me, usdToMicro(0.5)), addrs, ...over })
          await send(bid.envelope, job.message).then(() => { baits++ }, () => {})
        }
      }, async () => await renterMarket().auction(parseJobSpec({
        name: 'gold-bait',
        tier: 'gold',
        runtime: { image: 'ghcr.io/acme/eval:1' },
        constraints: { minVramGb: 40, maxPriceUsd: 50, regions: ['eu-west'] },
        auction: { bidWindowMs: 1_500, acceptTimeoutMs: 3_000 }
      })))
      const bait = report.bids.filter(b => b.provider === me.peerId.toString())
      const honestRow = report.bids.find(b => b.provider === honest().peerId.toString())
      console.log(`      [figures] dial bait: ${baits} unfit bids published; connections between renter and bidder: ${JSON.stringify(opened)}; dials of the bidder not by kad-dht or the connector: ${dials.length}; report rows ${JSON.stringify(bait.map(b => b.dropped))}`)
      assert.equal(baits, 3)
      assert.ok(bait.length === 1 && bait[0]?.dropped != null, 'the unfit bid is reported, dropped')
      assert.deepEqual(dials, [], 'the renter dialled a bidder whose bid could not win')
      assert.ok(bait[0]?.rttMs == null, 'the unfit bidder was not probed')
      assert.ok(honestRow?.rttMs != null, 'the honest bidder was measured')
      assert.equal(report.award?.winner, honest().peerId.toString())
      recordAttack({ issue: '13 market', attack: `dial bait: ${baits} unfit bids (VRAM, over max price, region) for a gold job`, got: `${dials.length} dials; honest bidder probed and awarded`, limit: 'dials and round trips only for bids that fit the job' })
    } finally {
      connectionManager.openConnection = openConnection
      victim().libp2p.removeEventListener('connection:open', onOpen as any)
    }
  })

  it('red team: bids for jobs the renter is not auctioning are dropped on arrival, none kept', async () => {
    const me = attacker()
    const before = renterMarket().bidStats()
    const deliveredBefore = answered
    let heldDuring = 0
    const report = await whileVictimAuctions(async (job) => {
      // 16 streams at a time, as a provider with many bids would open them
      await Promise.all(Array.from({ length: 16 }, async (_, lane) => {
        for (let i = lane; i < UNKNOWN_FLOOD; i += 16) {
          // most for made-up job ids, some for the victim's id under another auction's nonce
          const other = i % 10 === 0
            ? { ...job.message, nonce: new Uint8Array(randomBytes(16)) }
            : { ...job.message, jobId: new Uint8Array(randomBytes(16)) }
          const bid = signBid(me.privateKey, me.peerId, bidFor(other, me, usdToMicro(0.5)))
          await send(bid.envelope).catch(() => {})
        }
      }))
      heldDuring = renterMarket().bidStats().held
    }, async () => await renterMarket().auction(parseJobSpec({ name: 'unknown-flood', runtime: { image: 'ghcr.io/acme/eval:1' }, auction: { bidWindowMs: 4_000, acceptTimeoutMs: 10_000 } })))
    const after = renterMarket().bidStats()
    const delivered = answered - deliveredBefore
    const dropped = after.unknownJob - before.unknownJob
    console.log(`      [figures] unknown-job flood: ${delivered} bids reached the renter, ${dropped} dropped on arrival as unknown jobs; bids held while the auction ran: ${heldDuring}; held after: ${after.held}`)
    assert.ok(delivered >= UNKNOWN_FLOOD * 0.5, `the flood reached the renter (${delivered})`)
    assert.ok(dropped >= delivered * 0.8, `unknown-job bids dropped on arrival: ${dropped} of ${delivered}`)
    assert.ok(heldDuring <= 1, `the renter held ${heldDuring} bids while its auction ran (only the honest one belongs)`)
    assert.equal(after.held, 0)
    assert.equal(report.signed?.bids.filter(b => b.signer.equals(me.peerId)).length, 0, 'no attacker bid entered the auction')
    assert.equal(report.award?.winner, honest().peerId.toString())
    recordAttack({ issue: '13 market', attack: `unknown-job flood: ${delivered} bids for job ids/nonces not auctioned`, got: `${heldDuring} bids held during the auction (the honest one), 0 after`, limit: 'bids without an open auction dropped on arrival' })
  })
})

/** A bid on `job` by `by` at `price`, as a provider's bid engine fills it. */
function bidFor (job: JobRequest, by: IdlegridNode, price: bigint): Bid {
  const now = Date.now()
  return {
    jobId: job.jobId,
    provider: by.peerId.toMultihash().bytes,
    priceMicroUsd: price,
    gpuModel: 'h100',
    vramMib: 81_920,
    region: 'eu-west',
    residency: '',
    createdAt: BigInt(now),
    expiresAt: BigInt(Math.min(Number(job.expiresAt), now + MAX_LIFETIME_MS.bid)),
    capabilitySeq: 0n,
    jobNonce: job.nonce,
    simulated: true,
    cachedDatasets: 0,
    addrs: []
  }
}
