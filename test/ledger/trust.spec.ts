import { signedTestBid } from '../market/fixtures.js'
import * as assert from 'node:assert/strict'
import { collectEvidence } from '../../src/ledger/reputation/evidence.js'
import { computeReputation, DEFAULT_REPUTATION } from '../../src/ledger/reputation/reputation.js'
import { ReputationView } from '../../src/ledger/reputation/view.js'
import { TrustGraph } from '../../src/ledger/reputation/trust.js'
import { parseJobSpec, toJobRequest } from '../../src/market/renter/job-spec.js'
import { rankBids } from '../../src/market/shared/ranking.js'
import { resolveConfig } from '../../src/config/index.js'
import { trustSeeds } from '../../src/ledger/service/from-config.js'
import { recordAttack } from '../utils/index.js'
import { Feeds, idOf, signers } from './feeds.js'
import type { Signer } from '../../src/ledger/dev.js'

// Reputation as each node sees it (issue 12, item 3): an honest viewer with its own history
// (it rented from three honest providers, which ten honest renters also used) scores
// providers by trust-weighted evidence. Real keys and signatures throughout.

const NOW = 1_800_000_000_000
const HOUR = 3600_000
const NEWCOMER = 0.5

/** The honest world: viewer V rented from H1..H3; renters R1..R10 rented from them too. */
function honestWorld (viewer: Signer, hosts: Signer[], renters: Signer[]): Feeds {
  const feeds = new Feeds()
  for (const h of hosts) for (let i = 0; i < 3; i++) feeds.job(h, viewer, NOW - (10 + i) * HOUR)
  for (const r of renters) for (const h of hosts) feeds.job(h, r, NOW - 20 * HOUR)
  return feeds
}

function viewOf (viewer: Signer, feeds: Feeds, trustedPeers: string[] = []): ReputationView {
  const view = new ReputationView({}, { selfId: idOf(viewer), trustedPeers })
  for (const r of feeds.records) view.add(r)
  return view
}

/** A ring: `provider` attests fake jobs for each ring key (2 each), and each key vouches for the next. */
function addRing (feeds: Feeds, provider: Signer, ring: Signer[]): void {
  ring.forEach((k, i) => {
    feeds.job(provider, k, NOW - HOUR)
    feeds.job(provider, k, NOW - 2 * HOUR)
    feeds.job(k, ring[(i + 1) % ring.length], NOW - 3 * HOUR)
  })
}

describe('ledger trust: reputation as each node sees it (issue 12.3)', function () {
  this.timeout(60_000)
  let viewer: Signer
  let hosts: Signer[]
  let renters: Signer[]
  let honest: Signer
  let attacker: Signer
  let ring: Signer[]

  before(async () => {
    ;[viewer, honest, attacker] = await signers(3)
    hosts = await signers(3)
    renters = await signers(10)
    ring = await signers(100)
  })

  it('honest history counts: 20 jobs from renters the viewer trusts transitively lift a provider as much as the plain formula (±10 %)', () => {
    const feeds = honestWorld(viewer, hosts, renters)
    for (const r of renters) for (let i = 0; i < 2; i++) feeds.job(honest, r, NOW - (5 + i) * HOUR)
    const seen = viewOf(viewer, feeds).reputation(idOf(honest), NOW)
    const plain = computeReputation(collectEvidence(feeds.records), idOf(honest), NOW)
    assert.equal(seen.jobs, 20)
    assert.equal(seen.evidenceScore, plain.score, 'the viewer-independent score is today\'s formula')
    const lift = seen.score - NEWCOMER
    const plainLift = plain.score - NEWCOMER
    assert.ok(plainLift > 0.2, `20 jobs lift the plain score (${plainLift})`)
    assert.ok(Math.abs(lift - plainLift) <= 0.1 * plainLift, `trusted lift ${lift} within 10 % of ${plainLift}`)
    for (const c of seen.counterparties) assert.ok(c.trust > 0 && c.weight === 1, `renter ${c.renter} counts fully (trust ${c.trust})`)
  })

  it('red team: a ring of 100 fresh keys vouching for one provider lifts it by ≤ 0.02 and never outranks an honest provider with 20 real jobs at the same price', () => {
    const feeds = honestWorld(viewer, hosts, renters)
    for (const r of renters) for (let i = 0; i < 2; i++) feeds.job(honest, r, NOW - (5 + i) * HOUR)
    const job = toJobRequest(parseJobSpec({ runtime: { image: 'ghcr.io/acme/eval:1' } }), { renter: viewer.peerId.toMultihash().bytes, now: Date.now() })
    const bids = [signedTestBid(attacker, job, 1.0), signedTestBid(honest, job, 1.0)]
    let worst = 0
    for (const size of [10, 50, 100]) {
      const part = new Feeds()
      for (const r of feeds.records) part.records.push(r)
      addRing(part, attacker, ring.slice(0, size))
      const view = viewOf(viewer, part)
      const rep = view.reputation(idOf(attacker), NOW)
      assert.equal(rep.jobs, 2 * size)
      assert.ok(rep.evidenceScore > 0.8, `counted by everyone alike the ring would lift it to ${rep.evidenceScore}`)
      const lift = rep.score - NEWCOMER
      worst = Math.max(worst, lift)
      assert.ok(lift <= 0.02, `ring of ${size} lifted the attacker by ${lift}`)
      const reputation = { reliability: (id: string) => view.reputation(id, NOW).score }
      assert.equal(rankBids(bids, job, { reputation })[0].provider, idOf(honest), `the honest provider ranks first against a ring of ${size}`)
    }
    recordAttack({ issue: '12.3', attack: 'ring of 100 fresh keys (200 fake jobs, vouching each other) lifts one provider', got: `lift ${worst.toFixed(4)} over a newcomer; honest provider with 20 jobs still ranks first at the same price`, limit: 'lift ≤ 0.02' })
  })

  it('red team: attack 2, 40 generated renter keys signing receipts for 80 fake jobs, no longer buys reputation', async () => {
    const feeds = honestWorld(viewer, hosts, renters)
    const fakes = ring.slice(0, 40)
    for (const k of fakes) { feeds.job(attacker, k, NOW - HOUR); feeds.job(attacker, k, NOW - 2 * HOUR) }
    const rep = viewOf(viewer, feeds).reputation(idOf(attacker), NOW)
    assert.equal(rep.jobs, 80)
    assert.ok(rep.score - NEWCOMER <= 0.02, `score ${rep.score}`)
    recordAttack({ issue: '12.2', attack: '40 generated renter keys receipt 80 fake jobs for a new key (was 0.944)', got: `score ${rep.score.toFixed(4)} (plain formula ${rep.evidenceScore.toFixed(4)})`, limit: '≤ newcomer 0.5 + 0.02' })
  })

  it('red team: a ring hanging from one real job gains at most what flows over that one edge', async () => {
    const feeds = honestWorld(viewer, hosts, renters)
    for (const r of renters) for (let i = 0; i < 2; i++) feeds.job(honest, r, NOW - (5 + i) * HOUR)
    // the attacker does one real job for a trusted renter, then its ring vouches for it
    feeds.job(attacker, renters[0], NOW - 4 * HOUR)
    addRing(feeds, attacker, ring)
    const view = viewOf(viewer, feeds)
    const rep = view.reputation(idOf(attacker), NOW)
    const ringWeight = rep.counterparties
      .filter(c => c.renter !== idOf(renters[0]))
      .reduce((sum, c) => sum + c.weight, 0)
    const honestScore = view.reputation(idOf(honest), NOW).score
    // the 100 ring keys together count for less than a few trusted renters, and the honest provider stays ahead
    assert.ok(ringWeight < 5, `the ring counts as ${ringWeight} renters`)
    assert.ok(rep.score < honestScore, `attacker ${rep.score} < honest ${honestScore}`)
    recordAttack({ issue: '12.3', attack: 'ring of 100 keys hanging from one real job for a trusted renter', got: `ring counts as ${ringWeight.toFixed(2)} renters; score ${rep.score.toFixed(4)} (honest 20 jobs: ${honestScore.toFixed(4)})`, limit: 'ring weight ≤ its trust mass / fullTrust; honest provider stays ahead' })
  })

  it('operator-trusted peers are seeds: their receipts count fully for a viewer with no history of its own', async () => {
    const feeds = new Feeds()
    const [friend] = await signers(1)
    feeds.job(honest, friend, NOW - HOUR)
    const alone = viewOf(viewer, feeds).reputation(idOf(honest), NOW)
    const trusting = viewOf(viewer, feeds, [idOf(friend)]).reputation(idOf(honest), NOW)
    assert.equal(alone.score, NEWCOMER, 'a stranger\'s receipt counts nothing')
    assert.equal(trusting.score, alone.evidenceScore, 'a trusted peer\'s receipt counts fully')
    assert.ok(trusting.score > NEWCOMER)
  })

  it('seeds: the bootstrap peers\' ids and every --trust peer; a bad trust entry is a ConfigError naming it', () => {
    const boot = `/ip4/127.0.0.1/tcp/4001/p2p/${idOf(hosts[0])}`
    const config = resolveConfig({ role: 'renter', env: {}, flags: { bootstrap: [boot], trust: [idOf(hosts[1]), idOf(hosts[0])] } })
    assert.deepEqual(trustSeeds(config), [idOf(hosts[0]), idOf(hosts[1])].sort())
    assert.deepEqual(resolveConfig({ role: 'renter', env: {} }).trust, [])
    assert.throws(() => resolveConfig({ role: 'renter', env: {}, file: { trust: ['not-a-peer'] } }), (err: any) => err?.name === 'ConfigError' && /trust/.test(err.message))
  })

  it('is deterministic and in [0, 1]: the same entries, viewer and now give the same scores in any order', () => {
    const feeds = honestWorld(viewer, hosts, renters)
    addRing(feeds, attacker, ring.slice(0, 20))
    for (const r of renters.slice(0, 4)) feeds.job(honest, r, NOW - HOUR, 'failed')
    const a = viewOf(viewer, feeds).reputations(NOW)
    const reversed = new Feeds()
    for (const r of [...feeds.records].reverse()) reversed.records.push(r)
    const b = viewOf(viewer, reversed).reputations(NOW)
    assert.deepEqual(b, a)
    for (const r of a) assert.ok(r.score >= 0 && r.score <= 1 && r.evidenceScore >= 0 && r.evidenceScore <= 1)
    assert.ok(a.find(r => r.peerId === idOf(honest))!.score < NEWCOMER, 'trusted failures count against a provider too')
  })

  it('explain splits the evidence into direct, transitive and discounted parts', () => {
    const feeds = honestWorld(viewer, hosts, renters)
    feeds.job(hosts[0], viewer, NOW - HOUR)
    for (const k of ring.slice(0, 5)) feeds.job(hosts[0], k, NOW - HOUR)
    const e = viewOf(viewer, feeds).explain(idOf(hosts[0]), NOW)
    assert.equal(e.viewer, idOf(viewer))
    assert.deepEqual([e.direct.renters, e.direct.jobs], [1, 4], 'the viewer\'s own four receipts')
    assert.equal(e.transitive.renters, 10)
    // keys whose only trust came from hosts[0]'s own attestations do not count for hosts[0]
    const ringRows = e.renters.filter(r => ring.some(k => idOf(k) === r.renter))
    assert.equal(ringRows.length, 5)
    for (const row of ringRows) assert.deepEqual([row.part, row.weight], ['discounted', 0])
    assert.deepEqual([e.discounted.renters, e.discounted.jobs], [5, 5])
    assert.ok(Math.abs(e.discounted.successes - 5) < 0.02, `what they would have given: ${e.discounted.successes}`)
    assert.ok(e.score < e.evidenceScore)
    assert.equal(e.renters.length, 16)
  })

  it('the graph: no path from a seed, no trust; trust sums to 1 and seeds weigh fully', () => {
    const g = new TrustGraph()
    g.add({ renter: 'v', provider: 'p', okWeight: 1 })
    g.add({ renter: 'r', provider: 'p', okWeight: 1 })
    g.add({ renter: 's1', provider: 's2', okWeight: 5 })
    const t = g.compute(['v'])
    assert.equal(t.trust('s1'), 0)
    assert.equal(t.weight('s2'), 0)
    assert.ok(t.trust('r') > 0)
    assert.equal(t.weight('v'), 1)
    const sum = ['v', 'p', 'r'].reduce((s, id) => s + t.trust(id), 0)
    assert.ok(Math.abs(sum - 1) < 1e-9, `trust is conserved (${sum})`)
    assert.equal(
      DEFAULT_REPUTATION.priorSuccesses / (DEFAULT_REPUTATION.priorSuccesses + DEFAULT_REPUTATION.priorFailures),
      NEWCOMER
    )
  })
})
