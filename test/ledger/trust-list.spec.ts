/**
 * Trust lists (src/ledger/anchors): bounded decoding and every refusal, each with its typed
 * reason; adoption keeps the highest sequence per operator; the view's seeds follow the lists'
 * expiry.
 */
import * as assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { MAX_CLOCK_SKEW_MS, MAX_LIFETIME_MS } from '../../protocols/codec.js'
import { DOMAIN } from '../../protocols/ids.js'
import { TrustList } from '../../protocols/trust.js'
import { sealEnvelope } from '../../src/identity/index.js'
import { loadTrustLists, TrustAnchors } from '../../src/ledger/reputation/anchors/adopt.js'
import { MAX_TRUST_LIST_BYTES, MAX_TRUST_LIST_PEERS, openTrustList, sealTrustList, type TrustListContent, type TrustListRejection } from '../../src/ledger/reputation/anchors/list.js'
import { isTrustListError } from '../../src/ledger/errors.js'
import { ReputationView } from '../../src/ledger/reputation/view.js'
import { tempDir } from '../utils/index.js'
import { newSigner, signers } from './feeds.js'
import type { Signer } from '../../src/ledger/dev.js'
import type { PeerId } from '@libp2p/interface'

const NOW = 1_800_000_000_000
const DAY = 86_400_000

describe('trust lists: decoding, verification and adoption', () => {
  let operator: Signer
  let peers: PeerId[]
  const accepted = (): { operators: Set<string>, now: number } => ({
    operators: new Set([operator.peerId.toString()]),
    now: NOW
  })
  const seal = (content: Partial<TrustListContent> = {}, by: Signer = operator): Uint8Array =>
    sealTrustList(by.key as any, by.peerId, { name: 'ops', sequence: 1n, issuedAt: NOW - DAY, expiresAt: NOW + 30 * DAY, peers, ...content })
  /** A list whose payload is written by hand (fields sealTrustList would never produce), properly signed. */
  const raw = (list: Partial<TrustList>): Uint8Array =>
    sealEnvelope(
      operator.key as any,
      operator.peerId,
      DOMAIN.trustList,
      TrustList.encode({
        name: 'ops',
        sequence: 1n,
        issuedAt: BigInt(NOW - DAY),
        expiresAt: BigInt(NOW + DAY),
        peers: peers.map(p => p.toMultihash().bytes),
        ...list
      })
    )
  const refusal = (bytes: Uint8Array, opts = accepted()): TrustListRejection => {
    try {
      openTrustList(bytes, opts)
    } catch (err) {
      assert.ok(isTrustListError(err), `a LedgerError ERR_TRUST_LIST, not ${String(err)}`)
      assert.equal(err.code, 'ERR_TRUST_LIST')
      assert.ok(err.message.length > 10)
      return err.reason
    }
    assert.fail('the list was adopted')
  }

  before(async () => {
    operator = await newSigner()
    peers = (await signers(3)).map(s => s.peerId)
  })

  it('opens a valid list: operator, sequence, times and peers as signed', () => {
    const list = openTrustList(seal({ sequence: 7n }), accepted())
    assert.equal(list.operator, operator.peerId.toString())
    assert.equal(list.sequence, 7n)
    assert.equal(list.expiresAt, NOW + 30 * DAY)
    assert.deepEqual(list.peers, peers.map(p => p.toString()))
  })

  it('refuses a forged or altered list (bad-signature)', () => {
    const bytes = seal()
    const forged = Uint8Array.from(bytes)
    forged[forged.length - 1] ^= 0x01
    assert.equal(refusal(forged), 'bad-signature')
    // a peer id swapped inside the signed payload: the signature no longer covers it
    const altered = Uint8Array.from(bytes)
    const at = Buffer.from(altered).indexOf(Buffer.from(peers[0].toMultihash().bytes))
    altered[at + 10] ^= 0x01
    assert.equal(refusal(altered), 'bad-signature')
  })

  it('refuses a list signed by a key the node does not accept, and one for another domain', async () => {
    assert.equal(refusal(seal({}, await newSigner())), 'operator-not-accepted')
    const other = sealEnvelope(operator.key as any, operator.peerId, DOMAIN.heartbeat, TrustList.encode({ name: 'ops', sequence: 1n, issuedAt: BigInt(NOW), expiresAt: BigInt(NOW + DAY), peers: [peers[0].toMultihash().bytes] }))
    assert.equal(refusal(other), 'malformed')
  })

  it('refuses expired, not yet valid and too long-lived lists', () => {
    assert.equal(refusal(seal({ issuedAt: NOW - 10 * DAY, expiresAt: NOW })), 'expired')
    assert.equal(refusal(seal({ issuedAt: NOW + MAX_CLOCK_SKEW_MS + 1, expiresAt: NOW + DAY })), 'not-yet-valid')
    // within the skew it opens
    openTrustList(seal({ issuedAt: NOW + MAX_CLOCK_SKEW_MS, expiresAt: NOW + DAY }), accepted())
    assert.equal(refusal(seal({ issuedAt: NOW - DAY, expiresAt: NOW - DAY + MAX_LIFETIME_MS.trustList + 1 })), 'too-long-lived')
  })

  it('decodes with bounds: more than 256 peers, or more bytes than the bound, is oversized, refused unread', async () => {
    const many = (await signers(MAX_TRUST_LIST_PEERS + 1)).map(s => s.peerId)
    assert.equal(refusal(seal({ peers: many })), 'oversized')
    openTrustList(seal({ peers: many.slice(0, MAX_TRUST_LIST_PEERS) }), accepted())
    assert.equal(refusal(new Uint8Array(MAX_TRUST_LIST_BYTES + 1)), 'oversized')
  })

  it('refuses malformed lists: no sequence, no peers, duplicates, a peer that is not an Ed25519 id, a long name, bad times, garbage', () => {
    assert.equal(refusal(raw({ sequence: 0n })), 'malformed')
    assert.equal(refusal(raw({ peers: [] })), 'malformed')
    assert.equal(refusal(raw({ peers: [peers[0].toMultihash().bytes, peers[0].toMultihash().bytes] })), 'malformed')
    assert.equal(refusal(raw({ peers: [new Uint8Array([0, 4, 1, 2, 3, 4])] })), 'malformed')
    assert.equal(refusal(raw({ name: 'x'.repeat(65) })), 'malformed')
    assert.equal(refusal(raw({ expiresAt: BigInt(NOW - 2 * DAY) })), 'malformed')
    assert.equal(refusal(raw({ issuedAt: 0n })), 'malformed')
    assert.equal(refusal(new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f])), 'malformed')
  })

  it('adopts the highest sequence of each operator; the others are refused as superseded, with every reason kept', async () => {
    const anchors = TrustAnchors.adopt([
      { source: 'a', bytes: seal({ sequence: 2n, peers: [peers[0]] }) },
      { source: 'b', bytes: seal({ sequence: 5n, peers: [peers[1]] }) },
      { source: 'c', bytes: seal({ sequence: 3n, peers: [peers[2]] }) },
      { source: 'd', bytes: seal({}, await newSigner()) }
    ], accepted())
    assert.deepEqual(anchors.lists.map(l => l.source), ['b'])
    assert.deepEqual(anchors.refused.map(r => `${r.source}:${r.reason}`).sort(), ['a:superseded', 'c:superseded', 'd:operator-not-accepted'])
    assert.deepEqual(anchors.peersAt(NOW), [peers[1].toString()])
    assert.deepEqual(anchors.peersAt(NOW + 31 * DAY), [], 'an expired list seeds nothing')
    assert.deepEqual(anchors.allPeers(), [peers[1].toString()])
  })

  it('loads from files: a missing file is unreadable, an over-bound file is refused unread', async () => {
    const dir = await tempDir('idlegrid-trust-list-')
    try {
      const good = join(dir.path, 'good.trust')
      const big = join(dir.path, 'big.trust')
      await writeFile(good, seal())
      await writeFile(big, new Uint8Array(MAX_TRUST_LIST_BYTES + 1))
      const anchors = loadTrustLists([good, big, join(dir.path, 'missing.trust')], [operator.peerId.toString()], NOW)
      assert.deepEqual(anchors.lists.map(l => l.source), [good])
      assert.deepEqual(anchors.refused.map(r => r.reason), ['oversized', 'unreadable'])
    } finally {
      await dir.cleanup()
    }
  })

  it('the view seeds its trust from the adopted lists while they are valid', async () => {
    const self = (await newSigner()).peerId.toString()
    const anchors = TrustAnchors.adopt([{ source: 'f', bytes: seal() }], accepted())
    const view = new ReputationView({}, { selfId: self, trustedPeers: [], anchors })
    assert.equal(view.seedsAt(NOW).size, 1 + peers.length)
    assert.equal(view.seedsAt(NOW + 31 * DAY).size, 1)
    const explain = view.explain(peers[0].toString(), NOW)
    assert.equal(explain.anchors.lists[0]?.status, 'counting')
    assert.equal(view.explain(peers[0].toString(), NOW + 31 * DAY).anchors.lists[0]?.status, 'expired')
  })
})
