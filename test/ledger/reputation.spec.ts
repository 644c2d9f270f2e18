import { signedTestBid } from '../market/fixtures.js'
import * as assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { HeartbeatSummary, LedgerEntry } from '../../protocols/ledger.js'
import { sha256, type Signed } from '../../src/identity/index.js'
import { signTestJob, type Signer, type TestOutcome } from '../../src/ledger/dev.js'
import { sealEntry, type LedgerRecord } from '../../src/ledger/entries/entry.js'
import { buildEquivocationProof } from '../../src/ledger/entries/fraud.js'
import { collectEvidence } from '../../src/ledger/reputation/evidence.js'
import { computeEarnings, computeReputation, DEFAULT_REPUTATION, maxLiftPerCounterparty } from '../../src/ledger/reputation/reputation.js'
import { parseJobSpec, toJobRequest } from '../../src/market/renter/job-spec.js'
import { rankBids } from '../../src/market/shared/ranking.js'
import type { Bid, JobRequest } from '../../protocols/market.js'

// Reputation is a pure function of ledger entries and `now`: these tests build entries with
// real keys and signatures (as the store would hold them) and compute scores from them.

async function signer (): Promise<Signer> {
  const key = await generateKeyPair('Ed25519')
  return { key, peerId: peerIdFromPrivateKey(key) }
}

/** Feeds: keeps each author's chain so entries are what a store would hold. */
class Feeds {
  readonly records: LedgerRecord[] = []
  private readonly heads = new Map<string, LedgerRecord>()
  append (author: Signer, kind: LedgerEntry.BodyKind, body: Uint8Array, time: number): LedgerRecord {
    const head = this.heads.get(author.peerId.toString())
    const record = sealEntry(author.key, author.peerId, {
      seq: (head?.seq ?? 0) + 1,
      prevHash: head?.hash ?? new Uint8Array(0),
      time,
      kind,
      body
    })
    this.heads.set(author.peerId.toString(), record)
    this.records.push(record)
    return record
  }

  job (provider: Signer, renter: Signer, time: number, outcome: TestOutcome = 'ok', preemptible = false, price = 1_000_000n): void {
    const j = signTestJob({
      provider,
      renter,
      outcome,
      preemptible,
      at: time,
      pricePaidMicroUsd: price,
      durationMs: 3600_000
    })
    this.append(provider, LedgerEntry.BodyKind.ATTESTATION, j.attestation, time)
    this.append(renter, LedgerEntry.BodyKind.RECEIPT, j.receipt, time)
  }

  summary (provider: Signer, start: number, end: number, availableMs: number, upMs: number, busyPpm = 0): void {
    const body = HeartbeatSummary.encode({
      periodStart: BigInt(start),
      periodEnd: BigInt(end),
      heartbeatsSent: Math.ceil(upMs / 10_000),
      intervalMs: 10_000,
      availableMs: BigInt(availableMs),
      upMs: BigInt(upMs),
      slotsTotal: 1,
      busyPpm
    })
    this.append(provider, LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, body, end)
  }
}

const NOW = 1_800_000_000_000
const DAY = 24 * 3600_000

describe('ledger reputation', () => {
  let provider: Signer
  let other: Signer
  let renters: Signer[]

  before(async () => {
    provider = await signer()
    other = await signer()
    renters = await Promise.all(Array.from({ length: 12 }, signer))
  })

  it('a provider nobody knows gets the market\'s neutral prior (0.5)', () => {
    const rep = computeReputation(collectEvidence([]), provider.peerId.toString(), NOW)
    assert.equal(rep.score, 0.5)
    assert.equal(rep.jobs, 0)
    assert.equal(rep.slashed, false)
  })

  it('successes raise and failures lower the score; old evidence decays with the half-life', () => {
    const feeds = new Feeds()
    for (let i = 0; i < 3; i++) feeds.job(provider, renters[i], NOW - DAY)
    feeds.job(other, renters[0], NOW - DAY, 'failed')
    feeds.job(other, renters[1], NOW - DAY, 'timeout')
    const ev = collectEvidence(feeds.records)
    const good = computeReputation(ev, provider.peerId.toString(), NOW)
    const bad = computeReputation(ev, other.peerId.toString(), NOW)
    assert.equal(good.jobs, 3)
    assert.equal(good.ok, 3)
    assert.ok(good.score > 0.5 && bad.score < 0.5, `${good.score} > 0.5 > ${bad.score}`)
    // the same evidence a half-life later weighs half as much
    const later = computeReputation(ev, provider.peerId.toString(), NOW - DAY + DEFAULT_REPUTATION.halfLifeMs + DAY)
    assert.ok(Math.abs(later.successWeight - good.successWeight / 2) < 1e-9, `${later.successWeight} is half of ${good.successWeight}`)
    assert.ok(later.score < good.score && later.score > 0.5)
  })

  it('is deterministic: the same entries in any order give exactly the same reputation; duplicates change nothing', () => {
    const feeds = new Feeds()
    for (let i = 0; i < 6; i++) feeds.job(provider, renters[i % 4], NOW - i * DAY, i === 5 ? 'bad-output' : 'ok')
    feeds.summary(provider, NOW - 2 * DAY, NOW - DAY, DAY, DAY * 0.9)
    const a = computeReputation(collectEvidence(feeds.records), provider.peerId.toString(), NOW)
    const shuffled = [...feeds.records].reverse()
    const b = computeReputation(collectEvidence([...shuffled, ...feeds.records]), provider.peerId.toString(), NOW)
    assert.deepEqual(b, a)
  })

  it('ten fake renters receipting one provider move its score by no more than the per-counterparty cap each', () => {
    const bound = maxLiftPerCounterparty()
    assert.ok(bound > 0 && bound < 0.2, `the cap is a small lift (${bound})`)
    const feeds = new Feeds()
    // an honest history: three renters, a failure among them
    feeds.job(provider, renters[10], NOW - 3 * DAY)
    feeds.job(provider, renters[11], NOW - 3 * DAY, 'failed')
    let previous = computeReputation(collectEvidence(feeds.records), provider.peerId.toString(), NOW).score
    const baseline = previous
    for (let k = 0; k < 10; k++) {
      // each fake renter receipts 20 OK jobs
      for (let i = 0; i < 20; i++) feeds.job(provider, renters[k], NOW - 1000 * i)
      const score = computeReputation(collectEvidence(feeds.records), provider.peerId.toString(), NOW).score
      assert.ok(score - previous <= bound + 1e-12, `renter ${k} lifted the score by ${score - previous} > cap ${bound}`)
      previous = score
    }
    const rep = computeReputation(collectEvidence(feeds.records), provider.peerId.toString(), NOW)
    assert.equal(rep.jobs, 202)
    assert.ok(rep.score - baseline <= 10 * bound, 'ten renters lift it by at most ten caps')
    // 200 receipts count for what 10 × cap receipts do
    const capped = new Feeds()
    capped.job(provider, renters[10], NOW - 3 * DAY)
    capped.job(provider, renters[11], NOW - 3 * DAY, 'failed')
    for (let k = 0; k < 10; k++) {
      for (let i = 0; i < DEFAULT_REPUTATION.counterpartyCap; i++) capped.job(provider, renters[k], NOW)
    }
    assert.ok(
      Math.abs(
        computeReputation(collectEvidence(capped.records), provider.peerId.toString(), NOW).score - rep.score
      ) < 1e-6
    )
    for (const c of rep.counterparties.filter(c => c.jobs === 20)) {
      assert.equal(c.cappedSuccesses, DEFAULT_REPUTATION.counterpartyCap)
    }
  })

  it('a receipt counts only with the attestation it names, by the renter that attestation names', async () => {
    const feeds = new Feeds()
    const j = signTestJob({ provider, renter: renters[0], at: NOW })
    // the receipt without the attestation
    feeds.append(renters[0], LedgerEntry.BodyKind.RECEIPT, j.receipt, NOW)
    assert.equal(computeReputation(collectEvidence(feeds.records), provider.peerId.toString(), NOW).jobs, 0)
    feeds.append(provider, LedgerEntry.BodyKind.ATTESTATION, j.attestation, NOW)
    assert.equal(computeReputation(collectEvidence(feeds.records), provider.peerId.toString(), NOW).jobs, 1)
    // a second renter receipting the same attestation adds nothing
    const stranger = await signer()
    const forged = signTestJob({ provider, renter: stranger, at: NOW, jobId: j.jobId })
    feeds.append(stranger, LedgerEntry.BodyKind.RECEIPT, forged.receipt, NOW)
    assert.equal(computeReputation(collectEvidence(feeds.records), provider.peerId.toString(), NOW).jobs, 1)
  })

  it('breaking a non-preemptible job costs more than a failure; preempting a preemptible one costs nothing', () => {
    const score = (outcome: TestOutcome, preemptible: boolean): number => {
      const feeds = new Feeds()
      feeds.job(provider, renters[0], NOW, 'ok')
      feeds.job(provider, renters[1], NOW, outcome, preemptible)
      return computeReputation(collectEvidence(feeds.records), provider.peerId.toString(), NOW).score
    }
    const okOnly = (() => {
      const f = new Feeds()
      f.job(provider, renters[0], NOW)
      return computeReputation(collectEvidence(f.records), provider.peerId.toString(), NOW).score
    })()
    assert.equal(score('preempted', true), okOnly)
    assert.ok(score('preempted', false) < score('failed', false))
  })

  it('uptime from heartbeat summaries lowers the score of a provider that was down in its windows; overlapping summaries count once', () => {
    const up = new Feeds()
    up.summary(provider, NOW - 2 * DAY, NOW - DAY, DAY, DAY)
    const down = new Feeds()
    down.summary(provider, NOW - 2 * DAY, NOW - DAY, DAY, DAY / 4)
    const upRep = computeReputation(collectEvidence(up.records), provider.peerId.toString(), NOW)
    const downRep = computeReputation(collectEvidence(down.records), provider.peerId.toString(), NOW)
    assert.ok(upRep.uptime > 0.99)
    assert.ok(downRep.uptime < 0.3)
    assert.ok(downRep.score < upRep.score)
    // the same period claimed again does not count twice
    down.summary(provider, NOW - 2 * DAY, NOW - DAY, DAY, DAY)
    assert.equal(computeReputation(collectEvidence(down.records), provider.peerId.toString(), NOW).summaries, 1)
  })

  it('a slashed provider scores zero', () => {
    const feeds = new Feeds()
    for (let i = 0; i < 5; i++) feeds.job(provider, renters[i], NOW)
    const a = sealEntry(provider.key, provider.peerId, { seq: 99, prevHash: sha256('a'), time: NOW, kind: LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, body: new Uint8Array(0) })
    const b = sealEntry(provider.key, provider.peerId, { seq: 99, prevHash: sha256('b'), time: NOW, kind: LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, body: new Uint8Array(0) })
    feeds.append(
      renters[0],
      LedgerEntry.BodyKind.FRAUD_PROOF,
      buildEquivocationProof({ privateKey: renters[0].key, peerId: renters[0].peerId }, a, b, NOW),
      NOW
    )
    const rep = computeReputation(collectEvidence(feeds.records), provider.peerId.toString(), NOW)
    assert.equal(rep.slashed, true)
    assert.equal(rep.score, 0)
  })

  it('earnings and fill rate come from the provider\'s paid jobs and summaries', () => {
    const feeds = new Feeds()
    feeds.job(provider, renters[0], NOW, 'ok', false, 2_000_000n)
    feeds.job(provider, renters[1], NOW, 'ok', false, 1_000_000n)
    feeds.job(provider, renters[2], NOW, 'failed')
    feeds.summary(provider, NOW - 10 * 3600_000, NOW, 8 * 3600_000, 8 * 3600_000, 250_000)
    const e = computeEarnings(collectEvidence(feeds.records), provider.peerId.toString())
    assert.equal(e.paidJobs, 2)
    assert.equal(e.earnedMicroUsd, 3_000_000, 'one hour each at 2 and 1 USD/GPU-h')
    assert.equal(e.jobHours, 2)
    assert.equal(e.availableHours, 8)
    assert.equal(e.fillRate, 0.25)
    assert.equal(e.busyShare, 0.25)
  })

  it('reputation changes the auction\'s winner as price / reliability^w predicts', () => {
    // two providers bid; the cheaper one has a worse record
    const cheap = provider
    const dear = other
    const feeds = new Feeds()
    for (let i = 0; i < 5; i++) feeds.job(dear, renters[i], NOW)
    for (let i = 0; i < 3; i++) feeds.job(cheap, renters[i], NOW, 'failed')
    const evidence = collectEvidence(feeds.records)
    const reputation = { reliability: (id: string) => computeReputation(evidence, id, NOW).score }
    const renter = renters[11]
    const job: JobRequest = toJobRequest(parseJobSpec({ runtime: { image: 'ghcr.io/acme/eval:1' } }), { renter: renter.peerId.toMultihash().bytes, now: Date.now() })
    const bid = (p: Signer, usd: number): Signed<Bid> => signedTestBid(p, job, usd)
    const bids = [bid(cheap, 1.0), bid(dear, 1.3)]
    const rCheap = reputation.reliability(cheap.peerId.toString())
    const rDear = reputation.reliability(dear.peerId.toString())
    // with the neutral prior the cheaper bid wins
    const neutral = rankBids(bids, job, { reputation: { reliability: () => 0.5 } })
    assert.equal(neutral[0].provider, cheap.peerId.toString())
    // with the ledger's reputation the formula decides: 1.0 / rCheap^2 against 1.3 / rDear^2
    const ranked = rankBids(bids, job, { reputation })
    const predicted = 1.0 / rCheap ** 2 < 1.3 / rDear ** 2 ? cheap : dear
    assert.equal(predicted, dear, `the record should outweigh 30 % in price (${rCheap} vs ${rDear})`)
    assert.equal(ranked[0].provider, predicted.peerId.toString())
    // the ranking uses reliability in whole ppm, as awards carry it
    assert.ok(Math.abs(ranked[0].reliability - rDear) <= 5e-7)
  })
})
