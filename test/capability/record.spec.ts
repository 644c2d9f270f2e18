import * as assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { fromString } from 'uint8arrays/from-string'
import { CapabilityRecord } from '../../protocols/capability.js'
import { DOMAIN } from '../../protocols/ids.js'
import { capabilityRecordValidator, selectCapabilityRecord } from '../../src/capability/record/dht-rules.js'
import { failedFilter, parseDiscoveryFilters, indexKeysFor } from '../../src/capability/discovery/discovery-filters.js'
import { CapabilityError, isRecordRejection, type CapabilityRejection } from '../../src/capability/errors.js'
import { gpuModelMatches } from '../../src/capability/gpu/gpu-model.js'
import { parseSimulatedGpus } from '../../src/capability/gpu/simulated-gpus.js'
import { recordIndexKeys, indexKeyText, indexCid, gpuIndexValue, gpuIndexValues, vramBucketsFor, vramBucketFor, vramAtLeast } from '../../src/capability/discovery/index-keys.js'
import { parsePolicy } from '../../src/capability/policy/policy.js'
import { providerProfile, loadProviderSetup, type ProviderProfile } from '../../src/capability/policy/profile.js'
import { buildCapabilityRecord, sealCapabilityRecord, openCapabilityRecord, MAX_RECORD_VALUE_BYTES } from '../../src/capability/record/record.js'
import { capabilityKey, peerIdFromCapabilityKey } from '../../src/capability/record/record-key.js'
import { isCoded } from '../../src/common/index.js'
import { ConfigError } from '../../src/config/index.js'
import { sealEnvelope } from '../../src/identity/index.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

const FAKE_SMI = fileURLToPath(new URL('../../../test/fixtures/nvidia-smi/fake-nvidia-smi.sh', import.meta.url))
const DIGEST = 'ab'.repeat(32)

interface Signer { key: Ed25519PrivateKey, peerId: PeerId }
async function signer (): Promise<Signer> {
  const key = await generateKeyPair('Ed25519')
  return { key, peerId: peerIdFromPrivateKey(key) }
}

function profile (policy: Record<string, unknown> = {}, gpus = ['H100 80GB:80:2']): ProviderProfile {
  return providerProfile(parsePolicy({ region: 'eu-west', priceFloor: 1.2, ...policy }), parseSimulatedGpus(gpus))
}

function rejects (reason: CapabilityRejection): (err: unknown) => boolean {
  return (err) => {
    assert.ok(isRecordRejection(err), `expected CapabilityError ERR_CAPABILITY_RECORD, got ${String(err)}`)
    assert.equal(err.reason, reason, err.message)
    assert.equal(err.code, 'ERR_CAPABILITY_RECORD')
    return true
  }
}

function record (s: Signer, overrides: Partial<CapabilityRecord> = {}, p = profile()): CapabilityRecord {
  return { ...buildCapabilityRecord(p, { peerId: s.peerId, sequence: 5n, ttlMs: 60_000 }), ...overrides }
}

describe('capability/record', () => {
  let a: Signer
  let b: Signer
  before(async () => { a = await signer(); b = await signer() })

  describe('build, seal and open', () => {
    it('round-trips every field from the profile, publishing only hashes of GPU UUIDs', () => {
      const p = profile({
        tiers: ['silver', 'bronze'],
        workloads: ['inference'],
        images: ['nvcr.io/nvidia/pytorch:*'],
        availability: { timeZone: 'Europe/Berlin', windows: ['mon-fri 19:00-07:00', 'weekends'] },
        maxJobMinutes: 120,
        power: { maxPowerWatts: 350 },
        datasets: [DIGEST]
      })
      const value = sealCapabilityRecord(a.key, a.peerId, record(a, {}, p)).envelope
      const opened = openCapabilityRecord(value, { key: capabilityKey(a.peerId) })
      const r = opened.message
      assert.ok(opened.signer.equals(a.peerId))
      assert.equal(r.sequence, 5n)
      assert.deepEqual(r.gpus.map(g => [g.model, g.vramMib, g.count, g.simulated, g.uuidHash.length]), [['h100-80gb', 81920, 2, true, 2]])
      assert.ok(r.gpus[0].uuidHash.every(h => h.byteLength === 32))
      assert.equal(r.region, 'eu-west')
      assert.equal(r.residency, 'eu')
      assert.equal(r.priceFloorMicroUsd, 1_200_000n)
      assert.deepEqual(r.acceptedTiers, [CapabilityRecord.Tier.SILVER, CapabilityRecord.Tier.BRONZE])
      assert.deepEqual(r.workloads, ['inference'])
      assert.deepEqual(r.allowedImages, ['nvcr.io/nvidia/pytorch:*'])
      assert.equal(r.availability.length, 2)
      assert.equal(r.timeZone, 'Europe/Berlin')
      assert.equal(r.cachedDatasets.length, 1)
      assert.equal(r.maxJobMinutes, 120)
      assert.equal(r.maxPowerWatts, 350)
      assert.equal(Number(r.expiresAt - r.issuedAt), 60_000)
      assert.equal(opened.hash.byteLength, 32)
    })

    it('leaves "always" windows and UTC implicit', () => {
      const r = record(a)
      assert.deepEqual(r.availability, [])
      assert.equal(r.timeZone, '')
    })

    it('rejects a record signed by another key than the one in its DHT key', () => {
      const value = sealCapabilityRecord(b.key, b.peerId, record(b)).envelope
      assert.throws(() => openCapabilityRecord(value, { key: capabilityKey(a.peerId) }), rejects('wrong-signer'))
    })

    it('rejects a record naming another peer than its signer', () => {
      const value = sealCapabilityRecord(b.key, b.peerId, record(a)).envelope
      assert.throws(() => openCapabilityRecord(value, { key: capabilityKey(b.peerId) }), rejects('peer-mismatch'))
    })

    it('rejects a tampered payload', () => {
      const value = sealCapabilityRecord(a.key, a.peerId, record(a)).envelope
      const at = Buffer.from(value).indexOf('eu-west') // inside the signed payload
      assert.ok(at > 0)
      const tampered = value.slice()
      tampered[at] ^= 0x01
      assert.throws(() => openCapabilityRecord(tampered, { key: capabilityKey(a.peerId) }), rejects('bad-signature'))
    })

    it('rejects an envelope for another domain', () => {
      const value = sealEnvelope(a.key, a.peerId, DOMAIN.bid, CapabilityRecord.encode(record(a)))
      assert.throws(() => openCapabilityRecord(value, { key: capabilityKey(a.peerId) }), rejects('wrong-domain'))
    })

    it('rejects an expired record, one from the future and one that lives too long', () => {
      const now = Date.now()
      const expired = sealCapabilityRecord(
        a.key,
        a.peerId,
        record(a, { issuedAt: BigInt(now - 120_000), expiresAt: BigInt(now - 1) })
      ).envelope
      assert.throws(() => openCapabilityRecord(expired, { key: capabilityKey(a.peerId), now }), rejects('expired'))
      const future = sealCapabilityRecord(
        a.key,
        a.peerId,
        record(a, { issuedAt: BigInt(now + 60_000), expiresAt: BigInt(now + 120_000) })
      ).envelope
      assert.throws(() => openCapabilityRecord(future, { key: capabilityKey(a.peerId), now }), rejects('from-future'))
      const long = sealCapabilityRecord(
        a.key,
        a.peerId,
        record(a, { issuedAt: BigInt(now), expiresAt: BigInt(now + 3 * 3600_000) })
      ).envelope
      assert.throws(() => openCapabilityRecord(long, { key: capabilityKey(a.peerId), now }), rejects('lifetime-too-long'))
    })

    it('rejects oversized and malformed values before trusting them', () => {
      assert.throws(() => openCapabilityRecord(new Uint8Array(MAX_RECORD_VALUE_BYTES + 1), { key: capabilityKey(a.peerId) }), rejects('oversized'))
      assert.throws(() => openCapabilityRecord(Uint8Array.of(0xff, 0xff, 0xff), { key: capabilityKey(a.peerId) }), rejects('malformed'))
      const junk = sealEnvelope(a.key, a.peerId, DOMAIN.capability, Uint8Array.of(0x0a, 0x7f))
      assert.throws(() => openCapabilityRecord(junk, { key: capabilityKey(a.peerId) }), rejects('malformed'))
    })

    it('rejects records with ill-formed fields', () => {
      const cases: Array<Partial<CapabilityRecord>> = [
        { gpus: [] },
        { residency: 'us' },
        { region: 'Europe' },
        { priceFloorMicroUsd: 0n },
        { acceptedTiers: [] },
        { workloads: ['mining'] },
        { timeZone: 'Mars/Olympus' },
        { cachedDatasets: [new Uint8Array(5)] },
        { runner: 'vm' }
      ]
      for (const c of cases) {
        const value = sealCapabilityRecord(a.key, a.peerId, record(a, c)).envelope
        assert.throws(() => openCapabilityRecord(value, { key: capabilityKey(a.peerId) }), rejects('bad-field'), JSON.stringify(Object.keys(c)))
      }
    })

    it('refuses to seal a record over its size bound', () => {
      const huge = record(a, { allowedImages: Array.from({ length: 60 }, (_, i) => `registry.example.com/${'x'.repeat(200)}/${i}`) })
      assert.throws(() => sealCapabilityRecord(a.key, a.peerId, huge).envelope, rejects('oversized'))
    })

    it('reads the peer id out of a record key and refuses other keys', () => {
      assert.ok(peerIdFromCapabilityKey(capabilityKey(a.peerId)).equals(a.peerId))
      assert.throws(() => peerIdFromCapabilityKey(fromString('/idlegrid/cap/not-a-peer')), rejects('bad-key'))
      assert.throws(() => peerIdFromCapabilityKey(fromString(`/idlegrid/other/${a.peerId.toString()}`)), rejects('bad-key'))
    })
  })

  describe('DHT validator', () => {
    it('accepts a valid record and rejects: another signer, expired, oversized; reporting each', async () => {
      const seen: string[] = []
      const validate = capabilityRecordValidator((_key, err) => { seen.push(err.reason) })
      const key = capabilityKey(a.peerId)
      await validate(key, sealCapabilityRecord(a.key, a.peerId, record(a)).envelope)
      await assert.rejects(validate(key, sealCapabilityRecord(b.key, b.peerId, record(b)).envelope), rejects('wrong-signer'))
      const now = Date.now()
      await assert.rejects(validate(key, sealCapabilityRecord(a.key, a.peerId, record(a, { issuedAt: BigInt(now - 10_000), expiresAt: BigInt(now - 5_000) })).envelope), rejects('expired'))
      await assert.rejects(validate(key, new Uint8Array(MAX_RECORD_VALUE_BYTES + 10)), rejects('oversized'))
      await assert.rejects(validate(fromString('/idlegrid/whatever'), sealCapabilityRecord(a.key, a.peerId, record(a)).envelope), rejects('bad-key'))
      assert.deepEqual(seen, ['wrong-signer', 'expired', 'oversized', 'bad-key'])
    })
  })

  describe('DHT selector', () => {
    it('prefers the highest sequence, then the later issued_at, then the smaller hash; never an invalid record', () => {
      const key = capabilityKey(a.peerId)
      const now = Date.now()
      const seal = (o: Partial<CapabilityRecord>): Uint8Array =>
        sealCapabilityRecord(
          a.key,
          a.peerId,
          record(a, { issuedAt: BigInt(now), expiresAt: BigInt(now + 60_000), ...o })
        ).envelope
      const seq5 = seal({ sequence: 5n })
      const seq7 = seal({ sequence: 7n })
      const seq6 = seal({ sequence: 6n })
      assert.equal(selectCapabilityRecord(key, [seq5, seq7, seq6]), 1)
      const later = seal({ sequence: 7n, issuedAt: BigInt(now + 1000), expiresAt: BigInt(now + 61_000) })
      assert.equal(selectCapabilityRecord(key, [seq7, later]), 1)
      const x = seal({ sequence: 9n, region: 'eu-north' })
      const y = seal({ sequence: 9n, region: 'eu-south' })
      const first = selectCapabilityRecord(key, [x, y])
      assert.equal(selectCapabilityRecord(key, [y, x]), 1 - first, 'the same record wins whatever the order')
      const forged = sealCapabilityRecord(b.key, b.peerId, record(b, { sequence: 99n })).envelope
      const expired = seal({ sequence: 100n, issuedAt: BigInt(now - 10_000), expiresAt: BigInt(now - 1) })
      assert.equal(selectCapabilityRecord(key, [forged, expired, seq5]), 2)
    })
  })

  describe('index keys', () => {
    it('covers any, region, residency, VRAM buckets, GPU model prefixes and datasets', () => {
      const r = record(a, {}, profile({ datasets: [DIGEST] }, ['H100 80GB:80', 'RTX 4090:24']))
      const texts = recordIndexKeys(r).map(indexKeyText)
      assert.deepEqual(texts, [
        'idlegrid/v1/any/all', 'idlegrid/v1/region/eu-west', 'idlegrid/v1/residency/eu',
        ...[40, 48, 80].map(b => `idlegrid/v1/vram/${b}`),
        'idlegrid/v1/gpu/h-100', 'idlegrid/v1/gpu/rtx', 'idlegrid/v1/gpu/rtx-4090',
        `idlegrid/v1/dataset/${DIGEST}`
      ])
      const cid = indexCid({ dim: 'any', value: 'all' })
      assert.equal(cid.version, 1)
      assert.equal(cid.code, 0x55)
      assert.equal(cid.multihash.code, 0x12)
    })

    it('counts real cards for their marketing VRAM bucket (93 %)', () => {
      assert.deepEqual(vramBucketsFor(81_559), [40, 48, 80])
      assert.deepEqual(vramBucketsFor(24_564), [])
      assert.deepEqual(vramBucketsFor(46_068), [40, 48])
      assert.deepEqual(vramBucketsFor(144_384), [40, 48, 80, 141])
      assert.ok(vramAtLeast(24_564, 24) && vramAtLeast(81_559, 80) && !vramAtLeast(81_559, 94))
      assert.equal(vramBucketFor(70), 48)
      assert.equal(vramBucketFor(24), undefined)
    })

    it('finds every model a filter matches through one GPU index value, with two values per model', () => {
      assert.deepEqual(gpuIndexValues('h100-80gb'), ['h-100'])
      assert.deepEqual(gpuIndexValues('rtx-6000-ada'), ['rtx', 'rtx-6000'])
      assert.deepEqual(gpuIndexValues('l40s'), ['l-40'])
      assert.equal(gpuIndexValue('h'), undefined)
      const models = ['h100-80gb', 'h100', 'h100-94gb', 'rtx-4090', 'rtx4090', 'rtx-6000-ada', 'l40s', 'l4', 'a100-40gb']
      const filters = ['H100', 'h100 80GB', 'RTX4090', 'rtx', 'L4', 'l40s', 'A100-40GB', 'a100']
      for (const f of filters) {
        for (const m of models) {
          const value = gpuIndexValue(f)
          assert.ok(value !== undefined)
          // every matching model provides the value the filter looks up (the index may be broader)
          if (gpuModelMatches(f, m)) assert.ok(gpuIndexValues(m).includes(value), `${f} vs ${m}`)
        }
      }
    })
  })

  describe('filters', () => {
    const now = Date.UTC(2025, 0, 6, 12, 0) // a Monday, 12:00 UTC

    it('reports the first filter a record fails', async () => {
      const s = await signer()
      const rec = buildCapabilityRecord(profile({ tiers: ['bronze'], workloads: ['inference'], availability: { windows: ['sat-sun'] }, datasets: [DIGEST] }, ['RTX 4090:24']), { peerId: s.peerId, sequence: 1n, ttlMs: 60_000 })
      const f = (raw: Record<string, unknown>): string | undefined => failedFilter(rec, parseDiscoveryFilters(raw), now)
      assert.equal(f({}), undefined)
      assert.equal(f({ gpus: ['rtx4090'], minVramGb: 24, region: 'eu-west', residency: 'eu', tier: 'bronze', workload: 'inference', datasets: [DIGEST] }), undefined)
      assert.equal(f({ excludeSimulated: true }), 'no-simulated')
      assert.equal(f({ gpus: ['h100', 'a100'] }), 'gpu')
      assert.equal(f({ minVramGb: 40 }), 'min-vram')
      assert.equal(f({ region: 'us-east' }), 'region')
      assert.equal(f({ residency: 'us' }), 'residency')
      assert.equal(f({ tier: 'gold' }), 'tier')
      assert.equal(f({ workload: 'training' }), 'workload')
      assert.equal(f({ datasets: ['cd'.repeat(32)] }), 'dataset')
      assert.equal(f({ availableNow: true }), 'available-now')
      assert.equal(failedFilter(rec, { availableNow: true }, Date.UTC(2025, 0, 11, 12, 0)), undefined)
    })

    it('validates filters, naming the flag', () => {
      assert.throws(() => parseDiscoveryFilters({ tier: 'platinum' }), (e: any) => e instanceof ConfigError && e.field === 'tier')
      assert.throws(() => parseDiscoveryFilters({ minVramGb: 'lots' }), (e: any) => e instanceof ConfigError && e.field === 'min-vram')
      assert.throws(() => parseDiscoveryFilters({ region: 'eu-west', residency: 'us' }), (e: any) => e instanceof ConfigError && e.field === 'residency')
      assert.throws(() => parseDiscoveryFilters({ datasets: ['xyz'] }), (e: any) => e instanceof ConfigError && e.field === 'dataset')
    })

    it('looks up the narrowest index key first', () => {
      const keys = (raw: Record<string, unknown>): string[] => indexKeysFor(parseDiscoveryFilters(raw)).map(g => g.map(k => `${k.dim}/${k.value}`).join('+'))
      assert.deepEqual(keys({}), ['any/all'])
      assert.deepEqual(keys({ gpus: ['H100', 'rtx 4090'], region: 'eu-west', minVramGb: 80 }), ['gpu/h-100+gpu/rtx-4090', 'region/eu-west', 'vram/80', 'any/all'])
      assert.deepEqual(keys({ residency: 'eu', minVramGb: 16 }), ['residency/eu', 'any/all'])
      assert.deepEqual(keys({ residency: 'eu', minVramGb: 50 }), ['vram/48', 'residency/eu', 'any/all'])
    })
  })

  describe('provider setup', () => {
    it('merges flags over the file, simulates GPUs and reads the record TTL', async () => {
      const setup = await loadProviderSetup({
        raw: { region: 'us-east', priceFloor: 2, tiers: ['gold'], recordTtlSeconds: 60, simulateGpu: ['A100:40:8'] },
        flags: { 'price-floor': '0.75', workloads: 'inference,evaluation' }
      })
      assert.equal(setup.profile.policy.region, 'us-east')
      assert.equal(setup.profile.policy.priceFloorMicroUsd, 750_000)
      assert.deepEqual(setup.profile.policy.tiers, ['gold'])
      assert.deepEqual(setup.profile.policy.workloads, ['inference', 'evaluation'])
      assert.deepEqual(setup.profile.groups.map(g => [g.modelKey, g.count]), [['a100', 8]])
      assert.equal(setup.profile.simulated, true)
      assert.equal(setup.recordTtlMs, 60_000)
      const flagged = await loadProviderSetup({ raw: { region: 'us-east', priceFloor: 2 }, simulateGpu: ['H100:80'], recordTtlSeconds: '10' })
      assert.equal(flagged.recordTtlMs, 10_000)
    })

    it('names the bad field', async () => {
      await assert.rejects(loadProviderSetup({ raw: { region: 'eu-west' }, simulateGpu: ['H100:80'] }), (e: any) => e instanceof ConfigError && e.field === 'provider.priceFloor')
      await assert.rejects(loadProviderSetup({ raw: { region: 'eu-west', priceFloor: 1 }, simulateGpu: ['H100:80'], recordTtlSeconds: '1' }), (e: any) => e instanceof ConfigError && e.field === 'record-ttl-seconds')
      await assert.rejects(loadProviderSetup({ raw: { region: 'eu-west', priceFloor: 1 }, simulateGpu: ['H100:eighty'] }), (e: any) => e instanceof ConfigError && e.field === 'simulateGpu')
    })

    it('detects GPUs with nvidia-smi, and refuses to advertise without any', async () => {
      const detected = await loadProviderSetup({ raw: { region: 'eu-west', priceFloor: 1 }, nvidiaSmi: FAKE_SMI })
      assert.equal(detected.profile.simulated, false)
      assert.equal(detected.profile.groups[0].modelKey, 'h100-80gb')
      await assert.rejects(loadProviderSetup({ raw: { region: 'eu-west', priceFloor: 1 }, nvidiaSmi: '/nonexistent/nvidia-smi' }),
        (e: any) => isCoded(e, CapabilityError, 'ERR_GPU_DETECTION') && /nvidia-smi not found.*--simulate-gpu/.test(e.message))
      const old = process.env.FAKE_NVIDIA_SMI_FIXTURE
      process.env.FAKE_NVIDIA_SMI_FIXTURE = 'driver-failure'
      try {
        await assert.rejects(loadProviderSetup({ raw: { region: 'eu-west', priceFloor: 1 }, nvidiaSmi: FAKE_SMI }),
          (e: any) => isCoded(e, CapabilityError, 'ERR_GPU_DETECTION') && /couldn't communicate with the NVIDIA driver/.test(e.message))
      } finally {
        if (old === undefined) delete process.env.FAKE_NVIDIA_SMI_FIXTURE
        else process.env.FAKE_NVIDIA_SMI_FIXTURE = old
      }
    })
  })
})
