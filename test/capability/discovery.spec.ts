import * as assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { capabilityAdvertiser, CAPABILITY_SERVICE, type CapabilityAdvertiser } from '../../src/capability/advertising/advertiser.js'
import { DISCOVERY_SERVICE, type CapabilityDiscovery } from '../../src/capability/discovery/discovery-service.js'
import type { DiscoveryFilters } from '../../src/capability/discovery/discovery-filters.js'
import type { DiscoveryOptions, DiscoveryResult } from '../../src/capability/discovery/discovery.js'
import { parseSimulatedGpus } from '../../src/capability/gpu/simulated-gpus.js'
import { parsePolicy } from '../../src/capability/policy/policy.js'
import { providerProfile, type ProviderProfile } from '../../src/capability/policy/profile.js'
import { buildCapabilityRecord, sealCapabilityRecord, openCapabilityRecord } from '../../src/capability/record/record.js'
import { capabilityKey } from '../../src/capability/record/record-key.js'
import { capabilityServices } from '../../src/capability/role-services.js'
import { startInProcessNetwork, waitFor, type InProcessNetwork } from '../utils/index.js'
import type { IdlegridNode } from '../../src/node/index.js'

const PROFILES: Array<{ policy: Record<string, unknown>, gpus: string[] }> = [
  { policy: { region: 'eu-west', priceFloor: 2.5 }, gpus: ['H100 80GB:80:2'] },
  { policy: { region: 'us-east', priceFloor: 1.1, tiers: ['silver', 'bronze'] }, gpus: ['A100 40GB:40:8'] },
  { policy: { region: 'eu-central', priceFloor: 0.4, workloads: ['inference'] }, gpus: ['RTX 4090:24'] }
]
/** the last provider's record lives briefly, so its expiry can be watched */
const SHORT_TTL_MS = 6_000

function profileOf (i: number): ProviderProfile {
  const p = PROFILES[i]
  return providerProfile(parsePolicy(p.policy), parseSimulatedGpus(p.gpus))
}

function advertiser (node: IdlegridNode): CapabilityAdvertiser {
  return (node.libp2p.services as Record<string, unknown>)[CAPABILITY_SERVICE] as CapabilityAdvertiser
}

function discovery (node: IdlegridNode): CapabilityDiscovery {
  return (node.libp2p.services as Record<string, unknown>)[DISCOVERY_SERVICE] as CapabilityDiscovery
}

async function discoverProviders (
  node: IdlegridNode,
  filters: DiscoveryFilters,
  opts: DiscoveryOptions
): Promise<DiscoveryResult> {
  return await discovery(node).discover(filters, opts)
}

let detectedGpus = parseSimulatedGpus(PROFILES[0].gpus)

describe('capability discovery (in-process network)', function () {
  this.timeout(90_000)
  let net: InProcessNetwork
  let renter: IdlegridNode

  before(async () => {
    net = await startInProcessNetwork({
      providers: PROFILES.length,
      extensions: (role, i) => {
        const ext = capabilityServices(role === 'provider'
          ? { profile: profileOf(i), recordTtlMs: i === PROFILES.length - 1 ? SHORT_TTL_MS : undefined }
          : {})
        // provider 0 re-detects its GPUs often, from a list the test changes
        if (role === 'provider' && i === 0) ext.services[CAPABILITY_SERVICE] = capabilityAdvertiser({ profile: profileOf(0), gpuCheck: { detect: async () => detectedGpus, intervalMs: 300 } })
        return ext
      }
    })
    renter = net.renters[0]
    await waitFor(() => net.providers.every(p => advertiser(p).lastPublished() != null), { timeoutMs: 30_000, what: 'every provider to publish its record' })
  })

  after(async () => { await net?.stop() })

  const ids = (result: { providers: Array<{ peerId: string }> }): string[] => result.providers.map(p => p.peerId).sort()
  const providerIds = (...indexes: number[]): string[] => indexes.map(i => net.providers[i].peerId.toString()).sort()

  it('finds every provider without filters, with verified records', async () => {
    const result = await waitFor(async () => {
      const r = await discoverProviders(renter, {}, { timeoutMs: 10_000 })
      return r.providers.length === PROFILES.length ? r : undefined
    }, { timeoutMs: 20_000, what: 'all providers discovered' })
    assert.deepEqual(ids(result), providerIds(0, 1, 2))
    const h100 = result.providers.find(p => p.peerId === net.providers[0].peerId.toString())
    assert.deepEqual(h100?.gpus, [{ model: 'h100-80gb', vramGb: 80, vramMib: 81920, count: 2, simulated: true }])
    assert.equal(h100?.priceFloor, 2.5)
    assert.equal(h100?.residency, 'eu')
    assert.ok((h100?.addrs.length ?? 0) > 0, 'the record carries listen addresses')
    assert.ok(result.dhtMessages > 0)
    assert.deepEqual(result.indexKeys, ['any/all'])
  })

  it('applies every filter through the narrowest index key', async () => {
    const check = async (
      filters: Parameters<typeof discoverProviders>[1],
      expected: number[],
      indexKey?: string
    ): Promise<void> => {
      const r = await discoverProviders(renter, filters, { timeoutMs: 10_000 })
      assert.deepEqual(ids(r), providerIds(...expected), JSON.stringify(filters))
      if (indexKey != null) assert.equal(r.indexKeys[0], indexKey)
    }
    await check({ gpus: ['h100'] }, [0], 'gpu/h-100')
    await check({ gpus: ['a100', 'rtx4090'] }, [1, 2])
    await check({ minVramGb: 40 }, [0, 1], 'vram/40')
    await check({ residency: 'eu' }, [0, 2], 'residency/eu')
    await check({ region: 'us-east' }, [1], 'region/us-east')
    await check({ tier: 'gold' }, [0, 2])
    await check({ workload: 'training' }, [0, 1])
    await check({ excludeSimulated: true }, [])
  })

  it('says which filter removed how many', async () => {
    const r = await discoverProviders(renter, { residency: 'eu', tier: 'gold', workload: 'training' }, { timeoutMs: 10_000 })
    assert.deepEqual(ids(r), providerIds(0))
    assert.equal(r.candidates, 2)
    assert.deepEqual(r.removedBy, { workload: 1 })
  })

  it('bumps the sequence and republishes at once when the profile changes', async () => {
    const adv = advertiser(net.providers[1])
    const before = adv.current().message.sequence
    const changed = providerProfile(
      parsePolicy({ ...PROFILES[1].policy, priceFloor: 0.9 }),
      parseSimulatedGpus(PROFILES[1].gpus)
    )
    const report = await adv.update(changed)
    assert.ok(report != null && report.sequence > before)
    // a query that takes no cached record asks the provider, which serves the new one at once
    const r = await discoverProviders(renter, { region: 'us-east' }, { timeoutMs: 10_000, maxRecordAgeMs: 0 })
    assert.equal(r.providers[0]?.priceFloor, 0.9)
    assert.equal(r.providers[0]?.sequence, report.sequence.toString())
  })

  it('republishes at once with a new sequence when its GPUs change', async () => {
    const adv = advertiser(net.providers[0])
    const before = adv.current().message.sequence
    detectedGpus = parseSimulatedGpus(['H100 80GB:80:3'])
    const r = await waitFor(async () => {
      const found = await discoverProviders(renter, { region: 'eu-west' }, { timeoutMs: 10_000, maxRecordAgeMs: 0 })
      return found.providers[0]?.gpus[0]?.count === 3 ? found : undefined
    }, { timeoutMs: 20_000, intervalMs: 300, what: 'the third GPU to be advertised' })
    assert.ok(BigInt(r.providers[0]?.sequence ?? 0) > before)
  })

  it('refuses a record put under a provider key by another peer', async () => {
    const mallory = net.renters[0]
    const victim = net.providers[0].peerId
    const key = await generateKeyPair('Ed25519')
    const forgedBy = peerIdFromPrivateKey(key)
    const forged = sealCapabilityRecord(
      key,
      forgedBy,
      buildCapabilityRecord(profileOf(0), { peerId: forgedBy, sequence: 10n ** 15n, ttlMs: 60_000 })
    ).envelope
    for await (const event of net.providers[2].libp2p.services.dht.put(capabilityKey(victim), forged, {
      signal: AbortSignal.timeout(10_000)
    })) {
      void event
    }
    // kad-dht peers answer a PUT_VALUE either way; their validators say whether they stored it
    assert.equal(discovery(net.bootstrap).reasonFor(capabilityKey(victim))?.reason, 'wrong-signer', 'the bootstrap refused to store the forged record')
    let value: Uint8Array | undefined
    for await (const event of mallory.libp2p.services.dht.get(capabilityKey(victim), {
      signal: AbortSignal.timeout(10_000)
    })) {
      if (event.name === 'VALUE') value = event.value
    }
    assert.ok(value != null)
    assert.ok(openCapabilityRecord(value, { key: capabilityKey(victim) }).signer.equals(victim), 'the provider\'s own record is still served')
  })

  it('drops a stopped provider once its record expires, saying why', async () => {
    const gone = net.providers[2]
    const id = gone.peerId.toString()
    await gone.stop()
    const r = await waitFor(async () => {
      const found = await discoverProviders(renter, { gpus: ['rtx-4090'] }, { timeoutMs: 8_000 })
      return found.providers.every(p => p.peerId !== id) ? found : undefined
    }, { timeoutMs: SHORT_TTL_MS + 20_000, intervalMs: 1_000, what: 'the stopped provider to disappear' })
    assert.equal(r.candidates, 1, 'its provider record still points at it')
    assert.equal(r.dropped.length, 1)
    assert.equal(r.dropped[0].peerId, id)
    assert.ok(['expired', 'invalid', 'not-found'].includes(r.dropped[0].reason), r.dropped[0].reason)
  })
})
