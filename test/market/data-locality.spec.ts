import * as assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { parsePolicy } from '../../src/capability/policy/policy.js'
import { providerProfile } from '../../src/capability/policy/profile.js'
import { buildCapabilityRecord } from '../../src/capability/record/record.js'
import { parseSimulatedGpus } from '../../src/capability/gpu/simulated-gpus.js'
import { toHex } from '../../src/common/index.js'
import { BidEngine } from '../../src/market/provider/bid-engine.js'
import { parseJobSpec, toJobRequest } from '../../src/market/renter/job-spec.js'
import { signBid, usdToMicro } from '../../src/market/shared/messages.js'
import { localityOf, rankBids } from '../../src/market/shared/ranking.js'
import { fixedReputation } from '../../src/market/shared/reputation.js'
import { checkSubmission, withInputDatasets } from '../../src/submit/payload.js'
import { tempDir } from '../utils/index.js'
import type { Bid, JobRequest } from '../../protocols/market.js'
import type { CapacitySource } from '../../src/capability/index.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

const MiB = 1024 * 1024

interface Party { key: Ed25519PrivateKey, peerId: PeerId, bytes: Uint8Array }

async function party (): Promise<Party> {
  const key = await generateKeyPair('Ed25519')
  const peerId = peerIdFromPrivateKey(key)
  return { key, peerId, bytes: peerId.toMultihash().bytes }
}

describe('market: data-aware placement (issue 39)', () => {
  const profile = providerProfile(parsePolicy({ region: 'eu-west', priceFloor: 1, images: ['*'] }), parseSimulatedGpus(['H100:80']))
  const digestA = createHash('sha256').update('a').digest()
  const digestB = createHash('sha256').update('b').digest()

  function job (renter: Uint8Array, datasetBytes?: number): JobRequest {
    const spec = parseJobSpec({ runtime: { image: 'ghcr.io/acme/eval:1' }, datasets: [toHex(digestA), toHex(digestB)] })
    return toJobRequest({ ...spec, ...(datasetBytes != null ? { datasetBytes } : {}) }, { renter })
  }

  it('the locality term is the share of the job\'s named bytes held, capped at 1; by digests when the job states no bytes', () => {
    const j = job(new Uint8Array(34), 1000 * MiB)
    assert.equal(localityOf(j, { cachedDatasets: 1, cachedBytes: BigInt(900 * MiB) }), 0.9)
    assert.equal(localityOf(j, { cachedDatasets: 2, cachedBytes: BigInt(5000 * MiB) }), 1, 'a claim above the job\'s bytes counts as all of them')
    assert.equal(localityOf(j, { cachedDatasets: 2 }), 0, 'with bytes stated, a count alone earns nothing')
    assert.equal(localityOf(job(new Uint8Array(34)), { cachedDatasets: 1 }), 0.5)
  })

  it('a bidder holding the job\'s bytes outranks a cheaper one that holds none, within the locality weight', async () => {
    const [renter, holder, cheap] = await Promise.all([party(), party(), party()])
    const j = job(renter.bytes, 1000 * MiB)
    const now = Date.now()
    const bid = (p: Party, usd: number, extra: Partial<Bid>): ReturnType<typeof signBid> => signBid(p.key, p.peerId, {
      jobId: j.jobId, provider: p.bytes, priceMicroUsd: usdToMicro(usd), gpuModel: 'h100-80gb', vramMib: 81920, region: 'eu-west', residency: 'eu', createdAt: BigInt(now), expiresAt: BigInt(now + 60_000), capabilitySeq: 0n, jobNonce: j.nonce, simulated: true, cachedDatasets: 0, addrs: [], ...extra
    })
    const rep = fixedReputation({}, 1)
    // default weight 0.2: holding everything divides the score by 0.8, so 2.40 (score 3.0) beats 2.50
    const ranked = rankBids(
      [bid(holder, 2.4, { cachedDatasets: 2, cachedBytes: BigInt(1000 * MiB) }), bid(cheap, 2.5, {})],
      j,
      { reputation: rep }
    )
    assert.equal(ranked[0]?.provider, holder.peerId.toString())
    assert.equal(ranked[0]?.locality, 1)
    const dearer = rankBids(
      [bid(holder, 3.2, { cachedDatasets: 2, cachedBytes: BigInt(1000 * MiB) }), bid(cheap, 2.5, {})],
      j,
      { reputation: rep }
    )
    assert.equal(dearer[0]?.provider, cheap.peerId.toString(), 'locality never outweighs more than 25 % of price')
  })

  it('the bid engine claims what the input cache holds for this renter', async () => {
    const renter = await party()
    const asked: Array<{ renter: string, digests: number }> = []
    const capacity: CapacitySource = {
      freeSlots: () => 1,
      preemptibleSlots: () => 0,
      totalSlots: () => 1,
      thermalOk: () => true,
      heldInputs: (who, digests) => {
        asked.push({ renter: who, digests: digests.length })
        return { count: 1, bytes: 700 * MiB }
      }
    }
    const engine = new BidEngine({ profile: () => profile, capacity })
    const j = job(renter.bytes, 1000 * MiB)
    const decision = engine.decide(j)
    assert.equal(decision.bid, true)
    if (!decision.bid) return
    const built = engine.buildBid(j, decision, { provider: new Uint8Array(34) })
    assert.equal(built.cachedBytes, BigInt(700 * MiB))
    assert.equal(built.cachedDatasets, 1)
    assert.deepEqual(asked, [{ renter: toHex(renter.bytes), digests: 2 }])
  })

  it('a provider record names its cache\'s public entries after the policy\'s datasets, each once, within 64', async () => {
    const { peerId } = await party()
    const withPolicy = providerProfile(parsePolicy({ region: 'eu-west', priceFloor: 1, images: ['*'], datasets: [toHex(digestA)] }), parseSimulatedGpus(['H100:80']))
    const held = [digestA, digestB, ...Array.from({ length: 70 }, (_, i) => createHash('sha256').update(`c${i}`).digest())]
    const record = buildCapabilityRecord(withPolicy, { peerId, sequence: 1n, ttlMs: 60_000, heldDatasets: held })
    assert.equal(record.cachedDatasets.length, 64)
    assert.deepEqual(record.cachedDatasets.slice(0, 2).map(d => toHex(d)), [toHex(digestA), toHex(digestB)])
  })

  it('the renter names its inputs of 1 MiB and more as datasets, with their bytes; publicInputs are inputs marked public', async () => {
    const tmp = await tempDir('idlegrid-locality-')
    try {
      await mkdir(join(tmp.path, 'd'), { recursive: true })
      const big = Buffer.alloc(2 * MiB, 1)
      const weights = Buffer.alloc(MiB, 2)
      await writeFile(join(tmp.path, 'd', 'big.bin'), big)
      await writeFile(join(tmp.path, 'd', 'weights.bin'), weights)
      await writeFile(join(tmp.path, 'd', 'small.txt'), 'x')
      const spec = parseJobSpec({ runtime: { command: ['true'] }, inputs: ['d/big.bin', 'd/small.txt'], publicInputs: ['d/weights.bin'] }, tmp.path)
      assert.equal(spec.inputs.length, 3)
      const { payload } = checkSubmission(spec)
      assert.deepEqual(payload.inputs.filter(i => i.public === true).map(i => i.path), ['weights.bin'])
      const named = await withInputDatasets(spec, payload)
      assert.deepEqual(new Set(named.spec.datasets), new Set([createHash('sha256').update(big).digest('hex'), createHash('sha256').update(weights).digest('hex')]))
      assert.equal(named.spec.datasetBytes, 3 * MiB)
      assert.equal(named.payload.manifest?.length, 3, 'the inputs are hashed once, for every attempt')
      assert.equal(toJobRequest(named.spec, { renter: new Uint8Array(34) }).datasetBytes, BigInt(3 * MiB))
    } finally {
      await tmp.cleanup()
    }
  })
})
