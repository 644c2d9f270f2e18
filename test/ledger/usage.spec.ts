/**
 * Usage statements in the ledger (issue 17.4), without a network: the statement rules, entries
 * carrying them as any peer would send them, and which statements count for earnings and
 * uptime whatever order they arrive in.
 */
import * as assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { UsageStatement } from '../../protocols/usage.js'
import { LedgerEntry, sealEntry } from '../../src/ledger/entries/entry.js'
import { collectEvidence } from '../../src/ledger/reputation/evidence.js'
import { computeEarnings } from '../../src/ledger/reputation/reputation.js'
import { encodeCoSigned, encodeStatement, isInvalidUsage, signStatement, usageAmount, type Usage } from '../../src/ledger/index.js'
import { verifyEntry } from '../../src/ledger/ingest/verify.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

interface Party { key: Ed25519PrivateKey, id: PeerId }
async function party (): Promise<Party> {
  const key = await generateKeyPair('Ed25519')
  return { key, id: peerIdFromPrivateKey(key) }
}

describe('ledger: co-signed usage statements (issue 17.4)', () => {
  let provider: Party
  let renter: Party
  let stranger: Party
  const leaseId = new Uint8Array(16).fill(7)
  const t0 = Date.now() - 3600_000

  before(async () => {
    [provider, renter, stranger] = await Promise.all([party(), party(), party()])
  })

  function statement (start: number, end: number, over: Partial<Usage> = {}): Uint8Array {
    return encodeStatement({
      leaseId,
      provider: provider.id.toMultihash().bytes,
      renter: renter.id.toMultihash().bytes,
      intervalStart: t0 + start,
      intervalEnd: t0 + end,
      requests: 10,
      gpuMs: end - start,
      bytesIn: 100,
      bytesOut: 1000,
      priceMicroUsdPerGpuHour: 3_600_000,
      ...over
    })
  }
  function coSigned (s: Uint8Array): Uint8Array {
    return encodeCoSigned(s, signStatement(provider.key, s), signStatement(renter.key, s))
  }
  function entry (
    author: Party,
    seq: number,
    body: Uint8Array,
    prevHash = new Uint8Array(seq === 1 ? 0 : 32)
  ): ReturnType<typeof sealEntry> {
    return sealEntry(author.key, author.id, { seq, prevHash, time: Date.now(), kind: LedgerEntry.BodyKind.USAGE, body })
  }
  async function rejection (body: Uint8Array, author = provider): Promise<string> {
    try {
      await verifyEntry(entry(author, 1, body).envelope)
    } catch (err) {
      if (isInvalidUsage(err)) return err.reason
      throw err
    }
    return 'accepted'
  }

  it('an entry by either party verifies; a third party, bad figures or a missing signature are refused with their reason', async () => {
    const good = coSigned(statement(0, 60_000))
    assert.equal(await rejection(good, provider), 'accepted')
    assert.equal(await rejection(good, renter), 'accepted')
    assert.equal(await rejection(good, stranger), 'not-a-party')
    const s = statement(0, 60_000)
    assert.equal(await rejection(encodeCoSigned(s, signStatement(provider.key, s), new Uint8Array(64))), 'bad-renter-signature')
    assert.equal(await rejection(encodeCoSigned(s, signStatement(stranger.key, s), signStatement(renter.key, s))), 'bad-provider-signature')
    // a statement whose amount is not gpu_ms × price / 3 600 000
    const wrongAmount = UsageStatement.encode({ ...UsageStatement.decode(s), amountMicroUsd: 10n ** 9n })
    assert.equal(await rejection(coSigned(wrongAmount)), 'amount-mismatch')
    assert.equal(await rejection(coSigned(statement(0, 25 * 3600_000, { gpuMs: 0 }))), 'bad-interval')
    assert.equal(await rejection(coSigned(statement(5, 5, { gpuMs: 0 }))), 'bad-interval')
    assert.equal(await rejection(coSigned(statement(0, 1000, { gpuMs: 65 * 1000 }))), 'over-bounds')
    assert.equal(await rejection(coSigned(statement(0, 1000, { leaseId: new Uint8Array(3) }))), 'bad-lease-id')
    assert.equal(await rejection(coSigned(statement(0, 1000, { renter: provider.id.toMultihash().bytes }))), 'bad-party')
    assert.equal(await rejection(new Uint8Array(1024)), 'oversized')
    assert.equal(await rejection(Uint8Array.of(0xff, 0xff)), 'malformed')
  })

  it('earnings and uptime come from counted statements: the copies in both feeds are one, an overlapping one counts once, in any order', () => {
    const a = coSigned(statement(0, 60_000))
    const b = coSigned(statement(60_000, 120_000))
    // a gap of a minute the renter never signed, then a third interval
    const c = coSigned(statement(180_000, 240_000))
    // both signed, but overlapping b: never paid twice
    const overlap = coSigned(statement(90_000, 150_000, { requests: 99 }))
    const feeds = [
      entry(provider, 1, a), entry(provider, 2, b), entry(provider, 3, c), entry(provider, 4, overlap),
      entry(renter, 1, a), entry(renter, 2, b), entry(renter, 3, c)
    ]
    const expectAmount = 3 * usageAmount(60_000, 3_600_000)
    for (const order of [feeds, [...feeds].reverse()]) {
      const e = computeEarnings(collectEvidence(order), provider.id.toString())
      assert.equal(e.service.statements, 3)
      assert.equal(e.service.ignored.overlap, 1)
      assert.equal(e.service.requests, 30)
      assert.equal(e.service.earnedMicroUsd, expectAmount)
      assert.equal(e.earnedMicroUsd, expectAmount)
      assert.equal(e.service.leases, 1)
      assert.equal(e.service.uptime, 180_000 / 240_000)
    }
    // the renter earns nothing from statements where it is the renter
    assert.equal(computeEarnings(collectEvidence(feeds), renter.id.toString()).service.statements, 0)
  })
})
