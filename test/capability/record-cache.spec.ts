import * as assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { parsePolicy } from '../../src/capability/policy/policy.js'
import { providerProfile } from '../../src/capability/policy/profile.js'
import { RecordCache } from '../../src/capability/record/record-cache.js'
import { buildCapabilityRecord, sealCapabilityRecord } from '../../src/capability/record/record.js'
import { dialAddrsFor } from '../../src/capability/record/record-fetch.js'
import { parseSimulatedGpus } from '../../src/capability/gpu/simulated-gpus.js'
import { recordAttack } from '../utils/index.js'
import type { CapabilityRecord } from '../../protocols/capability.js'
import type { Signed } from '../../src/identity/index.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

const PROFILE = providerProfile(parsePolicy({ region: 'eu-west', priceFloor: 1 }), parseSimulatedGpus(['H100 80GB:80']))
const T0 = 1_800_000_000_000

async function provider (): Promise<{ key: Ed25519PrivateKey, peerId: PeerId }> {
  const key = await generateKeyPair('Ed25519')
  return { key, peerId: peerIdFromPrivateKey(key) }
}

function record (
  p: { key: Ed25519PrivateKey, peerId: PeerId },
  sequence: bigint,
  issuedAt = T0,
  ttlMs = 60_000
): Signed<CapabilityRecord> {
  return sealCapabilityRecord(
    p.key,
    p.peerId,
    buildCapabilityRecord(PROFILE, { peerId: p.peerId, sequence, issuedAt, ttlMs })
  )
}

describe('capability record cache', () => {
  it('gives a record back while fresh and unexpired, never after expiry, never with max age 0', async () => {
    const p = await provider()
    const cache = new RecordCache()
    const r = record(p, 1n)
    cache.put(r, T0)
    const id = p.peerId.toString()
    assert.equal(cache.fresh(id, T0 + 1_000, 15_000), r.envelope)
    assert.equal(cache.fresh(id, T0 + 1_000, 0), undefined, 'max age 0 always asks again')
    assert.equal(cache.fresh(id, T0 + 20_000, 15_000), undefined, 'too old to reuse')
    assert.equal(cache.fresh(id, T0 + 60_000, Infinity), undefined, 'expired')
    assert.equal(cache.size, 0, 'an expired entry is forgotten')
  })

  it('red team: an older record (a stale DHT copy) does not replace a newer unexpired one', async () => {
    const p = await provider()
    const cache = new RecordCache()
    const newer = record(p, 5n)
    cache.put(newer, T0)
    cache.put(record(p, 4n), T0 + 1_000)
    cache.put(record(p, 5n, T0 - 1_000), T0 + 1_000)
    const kept = cache.fresh(p.peerId.toString(), T0 + 2_000, 15_000)
    assert.equal(kept, newer.envelope)
    recordAttack({ issue: '15.4', attack: 'stale DHT copy (lower sequence, or same sequence issued earlier) fed to a renter\'s record cache', got: kept === newer.envelope ? 'cache kept the newer record' : 'cache rolled back', limit: 'cache keeps the highest sequence, then the later issued_at' })
    const newest = record(p, 6n)
    cache.put(newest, T0 + 2_000)
    assert.equal(cache.fresh(p.peerId.toString(), T0 + 3_000, 15_000), newest.envelope)
  })

  it('is bounded: the oldest fetch is evicted first', async () => {
    const cache = new RecordCache(3)
    const peers = await Promise.all([0, 1, 2, 3].map(async () => await provider()))
    peers.forEach((p, i) => { cache.put(record(p, 1n), T0 + i) })
    assert.equal(cache.size, 3)
    assert.equal(cache.fresh(peers[0].peerId.toString(), T0 + 10, 15_000), undefined)
    assert.ok(cache.fresh(peers[3].peerId.toString(), T0 + 10, 15_000) != null)
  })
})

describe('dial addresses from untrusted provider answers', () => {
  it('keeps parseable addresses, names the peer in each, drops another peer\'s and bounds the count', async () => {
    const { peerId } = await provider()
    const other = await provider()
    const addrs = dialAddrsFor(peerId, [
      '/ip4/127.0.0.1/tcp/4001',
      `/ip4/127.0.0.1/tcp/4002/p2p/${peerId.toString()}`,
      `/ip4/127.0.0.1/tcp/4003/p2p/${other.peerId.toString()}`,
      'not a multiaddr',
      ...Array.from({ length: 20 }, (_, i) => `/ip4/10.0.0.${i}/tcp/1`)
    ])
    assert.equal(addrs.length, 8)
    assert.equal(addrs[0].toString(), `/ip4/127.0.0.1/tcp/4001/p2p/${peerId.toString()}`)
    assert.equal(addrs[1].toString(), `/ip4/127.0.0.1/tcp/4002/p2p/${peerId.toString()}`)
    assert.ok(addrs.every(a => a.getPeerId() === peerId.toString()))
  })
})
