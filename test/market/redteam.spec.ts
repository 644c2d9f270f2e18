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
import { parseSimulatedGpus } from '../../src/capability/gpu/simulated-gpus.js'
import { parsePolicy } from '../../src/capability/policy/policy.js'
import { providerProfile, type ProviderProfile } from '../../src/capability/policy/profile.js'
import { parseJobSpec } from '../../src/market/renter/job-spec.js'
import { DeclineReason, readAcceptResponse, readJobRequest, signAward, signJobRequest, type AcceptResponse, type Award, type JobRequest } from '../../src/market/shared/messages.js'
import { DEFAULT_PRICING } from '../../src/market/provider/pricing.js'
import { MARKET_PROVIDER_SERVICE, type MarketProviderService } from '../../src/market/provider/provider-service.js'
import type { AcceptedJob, AcceptVerdict } from '../../src/market/provider/provider-events.js'
import { MARKET_RENTER_SERVICE, type MarketRenterService } from '../../src/market/renter/renter-service.js'
import { neutralReputation } from '../../src/market/shared/reputation.js'
import { marketServices } from '../../src/market/role-services.js'
import { LEDGER_SERVICE } from '../../src/ledger/index.js'
import { requestOnce, type IdlegridNode, type RequestDialer } from '../../src/node/index.js'
import { AcceptRequest, BidsAuditResponse } from '../../protocols/market.js'
import { MAX_BYTES } from '../../protocols/codec.js'
import { jobShardOf, PROTOCOL } from '../../protocols/ids.js'
import { dialerOf, hearAllJobs, providerMarketServices, reputationService, waitForMarketMesh } from './fixtures.js'
import { fetchBidsAudit, verifyBidsAudit } from '../../src/market/shared/bids-audit.js'
import { recordAttack, startInProcessNetwork, waitFor, type InProcessNetwork } from '../utils/index.js'
import type { Signed } from '../../src/identity/index.js'

const PROVIDERS = [
  { region: 'eu-west', floor: 1.0, gpu: 'H100:80' },
  { region: 'eu-central', floor: 1.5, gpu: 'H100:80' },
  { region: 'eu-north', floor: 2.0, gpu: 'H100:80' }
]
const FLAT = { ...DEFAULT_PRICING, peakMultiplier: 1, offPeakMultiplier: 1, clearingWeight: 0 }
/** generous: bids now take a stream each, slow on a loaded 2-core machine */
const WINDOW_MS = 3000
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
  const market = (i: number): MarketProviderService =>
    (net.providers[i] as IdlegridNode).libp2p.services[MARKET_PROVIDER_SERVICE] as unknown as MarketProviderService
  const renterMarket = (): MarketRenterService =>
    victim().libp2p.services[MARKET_RENTER_SERVICE] as unknown as MarketRenterService
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
          const ext = providerMarketServices(profiles[index], {
            pricing: FLAT,
            acceptHook: job => hooks[index]?.(job) ?? { accept: true }
          })
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
    const off = await hearAllJobs(me, (envelope) => {
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
        // on the copy's own shard (its impossible VRAM floor): anywhere else it is rejected as wrong-shard
        void me.libp2p.services.pubsub.publish(jobShardOf(copy.message.constraints), copy.envelope).catch(() => {})
      }
    }, net.bootstrap)
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
      recordAttack({
        issue: '13.1',
        attack: 'job-id hijack: same job id under another key',
        got: `${copies.length} copies stored apart; victim awarded at attempt 1 (${report.attempts.length} offer)`,
        limit: 'jobs keyed by (renter, job id)'
      })
    } finally {
      off()
    }
  })

  it('award sniping: an award relayed to the winner by a third party is refused; the renter\'s own request is accepted', async () => {
    // awards are not gossiped (version 2): the attacker holds a leaked copy, and relays it the
    // moment the renter offers it
    const me = attacker()
    const snipes: AcceptResponse[] = []
    const relayFirst = (i: number) => async (job: AcceptedJob): Promise<AcceptVerdict> => {
      snipes.push(await askAccept(me, net.providers[i] as IdlegridNode, job.award.envelope))
      return { accept: true }
    }
    const asyncHooks = PROVIDERS.map((_, i) => relayFirst(i))
    for (let i = 0; i < PROVIDERS.length; i++) {
      hooks[i] = asyncHooks[i] as unknown as (job: AcceptedJob) => AcceptVerdict
    }
    // the winner's hook waits for the attacker's relay: room for that round trip on a loaded machine
    const report = await renterMarket().auction(parseJobSpec({ name: 'sniped', runtime: { image: 'ghcr.io/acme/eval:1' }, auction: { bidWindowMs: WINDOW_MS, acceptTimeoutMs: 8_000 } }))
    assert.deepEqual(report.attempts.map(a => a.outcome), ['accepted'], JSON.stringify(report.attempts))
    assert.equal(snipes.length, 1)
    // the attacker's goal: the winner answered it in the renter's place
    assert.equal(snipes[0]?.accepted, false, 'the winner accepted an award from a peer that is not its renter')
    assert.equal(snipes[0]?.reason, DeclineReason.OTHER)
    assert.match(snipes[0]?.detail ?? '', /renter/)
    const won = accepted.filter(a => a.job.jobId === report.jobId)
    assert.equal(won.length, 1)
    assert.ok(won[0]?.job.job.signer.equals(victim().peerId))
    recordAttack({ issue: '13.2', attack: 'award sniping: relay a leaked award to the winner first', got: `declined (${snipes[0]?.detail ?? ''})`, limit: 'accept only from the award\'s renter' })
  })

  it('red team: awards never reach gossip; an auditor holding one gets the committed bids from the renter, and a renter hiding a bid is caught', async () => {
    const v = victim()
    const me = attacker()
    const heard: string[] = []
    const off = await hearAllJobs(me, (envelope) => { heard.push(envelope.domain) }, net.bootstrap)
    // the best bidder declines: attempt 2 is the award
    hooks[0] = () => ({ accept: false, reason: DeclineReason.NO_CAPACITY, detail: 'slot just taken' })
    try {
      const report = await renterMarket().auction(spec('audited'))
      assert.deepEqual(report.attempts.map(a => a.outcome), ['declined', 'accepted'], JSON.stringify(report.attempts))
      const award = report.signed?.award as Signed<Award>
      assert.ok(award != null)
      assert.deepEqual([...new Set(heard)], ['job-request'], 'only job requests travel on the shards')
      // an auditor with the award (from the winner, say) and nothing else
      const served = await fetchBidsAudit(dialerOf(auditor()), award, AbortSignal.timeout(10_000))
      const audit = verifyBidsAudit(award, served)
      assert.deepEqual(audit.problems, [])
      assert.equal(audit.bids.length, PROVIDERS.length)
      // the same response with a bid hidden (a renter covering a cheaper bid) fails the commitment
      const decoded = BidsAuditResponse.decode(served)
      const hidden = verifyBidsAudit(award, BidsAuditResponse.encode({ ...decoded, bids: decoded.bids.slice(1) }))
      assert.equal(hidden.ok, false)
      assert.ok(hidden.problems.some(p => /bids_digest/.test(p)), hidden.problems.join('; '))
      // someone else's "award" for the auction gets nothing from the renter
      const forged = signAward(me.privateKey, me.peerId, { ...award.message, renter: me.peerId.toMultihash().bytes })
      await assert.rejects(
        fetchBidsAudit(
          dialerOf(me),
          { ...award, envelope: forged.envelope, signer: v.peerId },
          AbortSignal.timeout(10_000)
        )
      )
      recordAttack({ issue: '15', attack: 'renter serves an audit with one committed bid hidden', got: `caught: ${hidden.problems[0] ?? ''}`.slice(0, 120), limit: 'served bids must equal bids_digest and valid_bids' })
    } finally {
      off()
    }
  })
})

/** `from` asks `winner` to accept the award envelope, over the accept protocol as a renter does. */
async function askAccept (from: IdlegridNode, winner: IdlegridNode, award: Uint8Array): Promise<AcceptResponse> {
  const dialer = {
    openConnection: async (peer: Parameters<typeof from.libp2p.dial>[0], opts?: { signal?: AbortSignal }) =>
      await from.libp2p.dial(peer, opts)
  } as unknown as RequestDialer
  const bytes = await requestOnce(dialer, winner.peerId, {
    protocol: PROTOCOL.accept,
    request: AcceptRequest.encode({ award }),
    maxResponseBytes: MAX_BYTES.acceptResponse + 256,
    signal: AbortSignal.timeout(5_000)
  })
  return readAcceptResponse(bytes, winner.peerId)
}
