/**
 * Red team, market (issue 13 items 1 and 2), on real in-process libp2p nodes. The attacker is
 * just another node with its own key, using the project's own messages, gossip and streams.
 *
 * 1. Job-id hijack: for every job request seen on gossip the attacker publishes one of its own
 *    with the same job id (fresh nonce, impossible VRAM; and one with the victim's nonce), plus
 *    a high-attempt award for it, hoping providers forget the victim's job (its award declined
 *    `unknown-job`) and relays drop the victim's award as a stale attempt.
 * 2. Award sniping: the attacker relays an award it saw on gossip to the winner before the
 *    renter asks, to "answer" the attempt in the renter's place.
 */
import * as assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { equals } from 'uint8arrays/equals'
import { parseSimulatedGpus } from '../../src/capability/simulated-gpus.js'
import { parsePolicy } from '../../src/capability/policy.js'
import { providerProfile, type ProviderProfile } from '../../src/capability/profile.js'
import { readAward } from '../../src/market/award-check.js'
import { parseJobSpec, toJobRequest } from '../../src/market/job-spec.js'
import { DeclineReason, readAcceptResponse, readBid, readJobRequest, signAward, signJobRequest, type AcceptResponse, type Award, type Bid, type JobRequest } from '../../src/market/messages.js'
import { DEFAULT_PRICING } from '../../src/market/pricing.js'
import { MARKET_PROVIDER_SERVICE, type AcceptedJob, type AcceptVerdict, type MarketProviderService } from '../../src/market/provider-service.js'
import { auditAward, bidsDigest, rankBids, selectValidBids } from '../../src/market/ranking.js'
import { MARKET_RENTER_SERVICE, type MarketRenterService } from '../../src/market/renter-service.js'
import { neutralReputation } from '../../src/market/reputation.js'
import { marketServices } from '../../src/market/services.js'
import { LEDGER_SERVICE } from '../../src/ledger/index.js'
import { GOSSIP_SERVICE, requestOnce, type GossipRouter, type IdlegridNode } from '../../src/node/index.js'
import { AcceptRequest } from '../../protocols/market.js'
import { MAX_BYTES } from '../../protocols/codec.js'
import { PROTOCOL, TOPIC } from '../../protocols/ids.js'
import { providerMarketServices, reputationService, waitForMarketMesh } from './fixtures.js'
import { recordAttack, startInProcessNetwork, waitFor, type InProcessNetwork } from '../utils/index.js'
import type { Signed } from '../../src/identity/index.js'
import type { ConnectionManager } from '@libp2p/interface-internal'

const PROVIDERS = [
  { region: 'eu-west', floor: 1.0, gpu: 'H100:80' },
  { region: 'eu-central', floor: 1.5, gpu: 'H100:80' },
  { region: 'eu-north', floor: 2.0, gpu: 'H100:80' }
]
const FLAT = { ...DEFAULT_PRICING, peakMultiplier: 1, offPeakMultiplier: 1, clearingWeight: 0 }
const WINDOW_MS = 1500
/** More VRAM than any GPU has: nobody bids on the attacker's copies. */
const IMPOSSIBLE_VRAM_MIB = 4_000_000

describe('red team: market (issue 13)', function () {
  this.timeout(120_000)
  let net: InProcessNetwork
  const hooks: Array<((job: AcceptedJob) => AcceptVerdict) | undefined> = []
  const profiles: ProviderProfile[] = PROVIDERS.map(p => providerProfile(parsePolicy({ region: p.region, priceFloor: p.floor, images: ['*'] }), parseSimulatedGpus([p.gpu])))

  const victim = (): IdlegridNode => net.renters[0] as IdlegridNode
  const attacker = (): IdlegridNode => net.renters[1] as IdlegridNode
  const auditor = (): IdlegridNode => net.renters[2] as IdlegridNode
  const gossip = (n: IdlegridNode): GossipRouter => n.libp2p.services[GOSSIP_SERVICE]
  const market = (i: number): MarketProviderService => (net.providers[i] as IdlegridNode).libp2p.services[MARKET_PROVIDER_SERVICE] as unknown as MarketProviderService
  const renterMarket = (): MarketRenterService => victim().libp2p.services[MARKET_RENTER_SERVICE] as unknown as MarketRenterService
  const spec = (name: string): ReturnType<typeof parseJobSpec> =>
    parseJobSpec({ name, runtime: { image: 'ghcr.io/acme/eval:1' }, auction: { bidWindowMs: WINDOW_MS, acceptTimeoutMs: 1500 } })
  /** every provider's accepted awards, with when */
  const accepted: Array<{ at: number, provider: string, job: AcceptedJob }> = []

  before(async () => {
    net = await startInProcessNetwork({
      providers: PROVIDERS.length,
      renters: 3, // the victim, the attacker, an auditor that only watches gossip
      extensions: (role, index) => {
        if (role === 'provider') {
          const ext = providerMarketServices(profiles[index], { pricing: FLAT, acceptHook: (job) => hooks[index]?.(job) ?? { accept: true } })
          return ext
        }
        const ext = marketServices({ role })
        // the audit re-runs the ranking: the renter's reliabilities must be the auditor's (neutral)
        if (role === 'renter') ext.services[LEDGER_SERVICE] = reputationService(neutralReputation())
        return ext
      }
    })
    await waitForMarketMesh(net)
    net.providers.forEach((n, i) => {
      market(i).onAccepted(job => { accepted.push({ at: Date.now(), provider: n.peerId.toString(), job }) })
    })
  })

  after(async () => { await net?.stop() })
  afterEach(() => { hooks.length = 0 })

  it('job-id hijack: another signer\'s job with the same id neither replaces nor shadows the victim\'s', async () => {
    const me = attacker()
    const copies: Array<Signed<JobRequest>> = []
    // the attacker: every job request of someone else comes back under its key, twice, each with a high-attempt award
    const off = gossip(me).onMessage(TOPIC.jobs, (envelope) => {
      const seen = readJobRequest(envelope)
      if (seen.signer.equals(me.peerId)) return
      for (const nonce of [new Uint8Array(randomBytes(16)), seen.message.nonce]) {
        const now = Date.now()
        const copy = signJobRequest(me.privateKey, me.peerId, {
          ...seen.message,
          renter: me.peerId.toMultihash().bytes,
          nonce,
          createdAt: BigInt(now),
          expiresAt: BigInt(now) + seen.message.expiresAt - seen.message.createdAt,
          constraints: { ...(seen.message.constraints as NonNullable<JobRequest['constraints']>), minVramMib: IMPOSSIBLE_VRAM_MIB }
        })
        copies.push(copy)
        const award = signAward(me.privateKey, me.peerId, fakeAward(copy.message, (net.providers[0] as IdlegridNode).peerId.toMultihash().bytes, 8))
        void me.libp2p.services.pubsub.publish(TOPIC.jobs, copy.envelope)
          .then(async () => await me.libp2p.services.pubsub.publish(TOPIC.awards, award.envelope))
          .catch(() => {})
      }
    })
    const awardsSeen: Array<Signed<Award>> = []
    const offAuditor = gossip(auditor()).onMessage(TOPIC.awards, (envelope) => { awardsSeen.push(readAward(envelope)) })
    const declinesBefore = market(0).stats().declines.vram ?? 0
    try {
      const report = await renterMarket().auction(spec('hijacked'))
      const { signed, ...plain } = report
      // the attack ran: the copies went out while the victim's window was open, and providers judged them
      assert.ok(copies.length >= 2, 'the attacker republished the job')
      await waitFor(() => (market(0).stats().declines.vram ?? 0) > declinesBefore, { what: 'providers to see the attacker\'s copies' })
      // the honest job is still awarded and accepted at the first attempt
      assert.ok(report.award != null, JSON.stringify(plain))
      assert.deepEqual(report.attempts.map(a => a.outcome), ['accepted'], JSON.stringify(report.attempts))
      assert.equal(report.validBids, PROVIDERS.length)
      const won = accepted.find(a => a.job.jobId === report.jobId)
      assert.ok(won != null)
      assert.ok(won.job.job.signer.equals(victim().peerId), 'the winner ran the victim\'s job, not the attacker\'s')
      assert.ok(equals(won.job.job.message.nonce, signed?.job.message.nonce as Uint8Array))
      // every provider still knows the victim's job as the victim signed it
      for (let i = 0; i < PROVIDERS.length; i++) {
        assert.ok(market(i).jobRequest(victim().peerId, report.jobId)?.signer.equals(victim().peerId), `provider ${i} lost the victim's job`)
        assert.ok(market(i).jobRequest(me.peerId, report.jobId)?.signer.equals(me.peerId), `provider ${i} never saw the attacker's copy`)
      }
      // the attacker's attempt-8 award does not make relays drop the victim's attempt 1
      await waitFor(() => awardsSeen.some(a => a.signer.equals(victim().peerId) && equals(a.message.jobId, signed?.job.message.jobId as Uint8Array)),
        { timeoutMs: 5_000, what: 'the victim\'s award to reach the auditor' })
      assert.ok(awardsSeen.some(a => a.signer.equals(me.peerId) && a.message.attempt === 8), 'the attacker\'s award was relayed too')
      recordAttack({
        issue: '13.1',
        attack: 'job-id hijack: same job id under another key (+ attempt-8 award)',
        got: `${copies.length} copies stored apart; victim awarded at attempt 1 (${report.attempts.length} offer)`,
        limit: 'jobs keyed by (renter, job id)'
      })
    } finally {
      off()
      offAuditor()
    }
  })

  it('award sniping: an award relayed to the winner by a third party is refused; the renter\'s own request is accepted', async () => {
    // the renter runs the old order (award on gossip, then the accept request): the provider alone must hold
    const v = victim()
    const me = attacker()
    const job = toJobRequest(spec('sniped'), { renter: v.peerId.toMultihash().bytes })
    const signedJob = signJobRequest(v.privateKey, v.peerId, job)
    const bids: Array<Signed<Bid>> = []
    const offBids = gossip(v).onMessage(TOPIC.bids, (envelope) => {
      const bid = readBid(envelope)
      if (equals(bid.message.jobId, job.jobId)) bids.push(bid)
    })
    const snipes: AcceptResponse[] = []
    const offSniper = gossip(me).onMessage(TOPIC.awards, (envelope) => {
      const award = readAward(envelope)
      if (!award.signer.equals(v.peerId)) return
      const winner = net.providers.find(p => equals(p.peerId.toMultihash().bytes, award.message.winner)) as IdlegridNode
      void askAccept(me, winner, award.envelope).then(r => { snipes.push(r) }, () => {})
    })
    try {
      await v.libp2p.services.pubsub.publish(TOPIC.jobs, signedJob.envelope)
      await waitFor(() => bids.length === PROVIDERS.length, { what: 'every provider to bid' })
      const ctx = { reputation: neutralReputation() }
      const { valid } = selectValidBids(bids, job, ctx, Date.now())
      const [best] = rankBids(valid, job, ctx)
      assert.ok(best != null)
      const winner = net.providers.find(p => p.peerId.equals(best.bid.signer)) as IdlegridNode
      const award = signAward(v.privateKey, v.peerId, { ...fakeAward(job, best.bid.signer.toMultihash().bytes, 1), clearingPriceMicroUsd: best.bid.message.priceMicroUsd, bidsDigest: bidsDigest(valid), validBids: valid.length, winnerBidHash: best.bid.hash })
      await v.libp2p.services.pubsub.publish(TOPIC.awards, award.envelope)
      await waitFor(() => snipes.length > 0, { what: 'the attacker to relay the award to the winner' })
      // the attacker's goal: the winner answered it in the renter's place
      assert.equal(snipes[0]?.accepted, false, 'the winner accepted an award from a peer that is not its renter')
      assert.equal(snipes[0]?.reason, DeclineReason.OTHER)
      assert.match(snipes[0]?.detail ?? '', /renter/)
      // the renter still gets its answer
      const answer = await askAccept(v, winner, award.envelope)
      assert.equal(answer.accepted, true, answer.detail)
      const won = accepted.filter(a => a.job.jobId === Buffer.from(job.jobId).toString('hex'))
      assert.equal(won.length, 1)
      assert.ok(won[0]?.job.job.signer.equals(v.peerId))
      recordAttack({ issue: '13.2', attack: 'award sniping: relay a gossiped award to the winner first', got: `declined (${snipes[0]?.detail ?? ''})`, limit: 'accept only from the award\'s renter' })
    } finally {
      offBids()
      offSniper()
    }
  })

  it('award sniping: the renter publishes an award only once its winner accepted, and the award still audits', async () => {
    const v = victim()
    const me = attacker()
    const seen: Array<{ at: number, award: Signed<Award> }> = []
    const snipes: AcceptResponse[] = []
    const offSniper = gossip(me).onMessage(TOPIC.awards, (envelope) => {
      const award = readAward(envelope)
      if (!award.signer.equals(v.peerId)) return
      seen.push({ at: Date.now(), award })
      const winner = net.providers.find(p => equals(p.peerId.toMultihash().bytes, award.message.winner)) as IdlegridNode
      void askAccept(me, winner, award.envelope).then(r => { snipes.push(r) }, () => {})
    })
    // the auditor keeps what gossip carried for the job
    const jobs: Array<Signed<JobRequest>> = []
    const bids: Array<Signed<Bid>> = []
    const awards: Array<Signed<Award>> = []
    const watch = gossip(auditor())
    const offs = [
      watch.onMessage(TOPIC.jobs, (e) => { jobs.push(readJobRequest(e)) }),
      watch.onMessage(TOPIC.bids, (e) => { bids.push(readBid(e)) }),
      watch.onMessage(TOPIC.awards, (e) => { awards.push(readAward(e)) })
    ]
    // the best bidder declines: its attempt must never reach gossip
    hooks[0] = () => ({ accept: false, reason: DeclineReason.NO_CAPACITY, detail: 'slot just taken' })
    try {
      const report = await renterMarket().auction(spec('published-late'))
      assert.deepEqual(report.attempts.map(a => a.outcome), ['declined', 'accepted'], JSON.stringify(report.attempts))
      const won = accepted.find(a => a.job.jobId === report.jobId)
      assert.ok(won != null)
      await waitFor(() => seen.length > 0 && snipes.length > 0, { timeoutMs: 5_000, what: 'the accepted award on gossip, and the attacker\'s relay of it' })
      assert.deepEqual(seen.map(s => s.award.message.attempt), [2], 'only the accepted attempt is published')
      assert.ok((seen[0]?.at ?? 0) >= won.at, 'the award reached gossip before its winner accepted')
      assert.equal(snipes[0]?.accepted, false)
      assert.equal(accepted.filter(a => a.job.jobId === report.jobId).length, 1)
      // an auditor with only what gossip carried re-runs the ranking and agrees
      await waitFor(() => awards.some(a => Buffer.from(a.message.jobId).toString('hex') === report.jobId), { timeoutMs: 5_000, what: 'the award at the auditor' })
      const award = awards.find(a => Buffer.from(a.message.jobId).toString('hex') === report.jobId) as Signed<Award>
      const job = jobs.find(j => j.signer.equals(v.peerId) && equals(j.message.jobId, award.message.jobId)) as Signed<JobRequest>
      assert.ok(job != null)
      const audit = auditAward(award.message, bids.filter(b => equals(b.message.jobId, job.message.jobId)), { job: job.message, reputation: neutralReputation() })
      assert.deepEqual(audit.problems, [])
      recordAttack({ issue: '13.2', attack: 'award sniping: watch the awards topic, relay before the renter asks', got: `saw only attempt ${seen.map(s => s.award.message.attempt).join(',')}, after the accept; relay declined`, limit: 'award published once its winner accepted' })
    } finally {
      offSniper()
      for (const off of offs) off()
    }
  })
})

/** An award of `job` to `winner` at `attempt`, fields as a renter fills them (digest and bid hash made up). */
function fakeAward (job: JobRequest, winner: Uint8Array, attempt: number): Award {
  const now = Date.now()
  return {
    jobId: job.jobId,
    renter: job.renter,
    winner,
    clearingPriceMicroUsd: 1_000_000n,
    pricingRule: job.pricingRule,
    bidsDigest: new Uint8Array(randomBytes(32)),
    runnerUp: [],
    ranking: [],
    reliabilityWeightPpm: 0,
    latencyWeightPpm: 0,
    localityWeightPpm: 0,
    acceptDeadline: BigInt(now + 3_000),
    createdAt: BigInt(now),
    expiresAt: BigInt(now + 63_000),
    attempt,
    validBids: 1,
    winnerBidHash: new Uint8Array(randomBytes(32)),
    jobNonce: job.nonce
  }
}

/** `from` asks `winner` to accept the award envelope, over the accept protocol as a renter does. */
async function askAccept (from: IdlegridNode, winner: IdlegridNode, award: Uint8Array): Promise<AcceptResponse> {
  const dialer = { openConnection: async (peer: Parameters<typeof from.libp2p.dial>[0], opts?: { signal?: AbortSignal }) => await from.libp2p.dial(peer, opts) } as unknown as ConnectionManager
  const bytes = await requestOnce(dialer, winner.peerId, PROTOCOL.accept, AcceptRequest.encode({ award }), MAX_BYTES.acceptResponse + 256, AbortSignal.timeout(5_000))
  return readAcceptResponse(bytes, winner.peerId)
}
