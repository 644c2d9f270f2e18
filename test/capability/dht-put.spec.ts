import * as assert from 'node:assert/strict'
import { equals } from 'uint8arrays/equals'
import { CapabilityRecord } from '../../protocols/capability.js'
import { DOMAIN } from '../../protocols/ids.js'
import { capabilityServices } from '../../src/capability/index.js'
import { openCapabilityRecord } from '../../src/capability/record/record.js'
import { capabilityKey } from '../../src/capability/record/record-key.js'
import { messageHash, sealEnvelope } from '../../src/identity/index.js'
import { cat, packedVarints, splitFields } from '../protocols/wire.js'
import { recordAttack, startInProcessNetwork, waitFor, type InProcessNetwork } from '../utils/index.js'
import type { IdlegridNode } from '../../src/node/index.js'

/** A record `node` signs for itself, `sequence` as given, valid for ten minutes. */
function recordOf (node: IdlegridNode, sequence: bigint, acceptedTiers: CapabilityRecord.Tier[]): CapabilityRecord {
  const now = BigInt(Date.now())
  return {
    peerId: node.peerId.toMultihash().bytes,
    sequence,
    issuedAt: now,
    expiresAt: now + 600_000n,
    gpus: [{ model: 'h100-80gb', vramMib: 81_559, count: 1, computeCapability: '', driverVersion: '', uuidHash: [], simulated: true }],
    region: 'eu-west',
    residency: 'eu',
    priceFloorMicroUsd: 2_000_000n,
    acceptedTiers,
    workloads: ['inference'],
    allowedImages: [],
    availability: [],
    timeZone: '',
    cachedDatasets: [],
    maxJobMinutes: 0,
    maxTemperatureC: 0,
    maxPowerWatts: 0,
    preemptionGraceMs: 0,
    listenAddrs: [],
    runner: ''
  }
}

const seal = (node: IdlegridNode, payload: Uint8Array): Uint8Array =>
  sealEnvelope(node.privateKey, node.peerId, DOMAIN.capability, payload)

/** the record's payload with accepted_tiers written packed, as proto3 encoders do */
function packedPayload (record: CapabilityRecord, tierNumbers: number[]): Uint8Array {
  return cat(
    ...splitFields(CapabilityRecord.encode(record))
      .filter(f => f.field !== 9)
      .map(f => f.bytes),
    packedVarints(9, tierNumbers)
  )
}

interface PutResult { responses: number, acks: number }

/** kad-dht's own put from `node`: peers that answered, and peers whose answer carried our value (kad-dht's "stored") */
async function put (node: IdlegridNode, key: Uint8Array, value: Uint8Array): Promise<PutResult> {
  const result = { responses: 0, acks: 0 }
  for await (const event of node.libp2p.services.dht.put(key, value, { signal: AbortSignal.timeout(20_000) })) {
    if (event.name !== 'PEER_RESPONSE' || event.messageName !== 'PUT_VALUE') continue
    result.responses++
    if (event.record != null && equals(event.record.value, value)) result.acks++
  }
  return result
}

/** every value other peers hand `node` for `key` (kad-dht validates each before yielding it) */
async function values (node: IdlegridNode, key: Uint8Array): Promise<Uint8Array[]> {
  const out: Uint8Array[] = []
  try {
    for await (const event of node.libp2p.services.dht.get(key, { signal: AbortSignal.timeout(20_000) })) {
      if (event.name === 'VALUE') out.push(event.value)
    }
  } catch (err: any) {
    if (err?.name !== 'NotFoundError') throw err
  }
  return out
}

function routingTableSize (node: IdlegridNode): number {
  return (node.libp2p.services.dht as unknown as { routingTable: { size: number } }).routingTable.size
}

describe('capability records in the DHT: no PUT is acknowledged unless stored (issue 14)', function () {
  this.timeout(120_000)
  let net: InProcessNetwork
  /** a foreign implementation's node: stores anything itself, so only the others' answers count */
  let stranger: IdlegridNode
  let observer: IdlegridNode
  /** the idlegrid DHT servers other than the stranger */
  let servers: IdlegridNode[]

  before(async () => {
    net = await startInProcessNetwork({
      providers: 3,
      renters: 1,
      extensions: (role, index) =>
        role === 'provider' && index === 0
          ? {
              dhtValidators: { idlegrid: async () => {} },
              dhtSelectors: { idlegrid: (_key, records) => records.length - 1 }
            }
          : capabilityServices()
    })
    stranger = net.providers[0]
    observer = net.renters[0]
    servers = [net.bootstrap, ...net.providers.slice(1)]
    await waitFor(async () => {
      for (const n of net.all) await n.libp2p.dial(net.bootstrap.libp2p.getMultiaddrs()[0]).catch(() => {})
      return servers.every(s => routingTableSize(s) > 0) && routingTableSize(stranger) >= servers.length
    }, { timeoutMs: 30_000, intervalMs: 300, what: 'DHT routing tables' })
  })

  after(async () => { await net?.stop() })

  it('a record with accepted_tiers packed is stored by every server and served back', async () => {
    const payload = packedPayload(recordOf(stranger, 5n, [CapabilityRecord.Tier.GOLD]), [1, 2])
    const value = seal(stranger, payload)
    const key = capabilityKey(stranger.peerId)
    const result = await waitFor(async () => { const r = await put(stranger, key, value); return r.acks === servers.length ? r : false }, { timeoutMs: 30_000, what: 'every server to store the packed record' })
    assert.equal(result.responses, servers.length)
    const got = await values(observer, key)
    assert.ok(got.length > 0 && got.every(v => equals(v, value)), 'GET returns the packed record as put')
    const opened = openCapabilityRecord(got[0], { key })
    assert.deepEqual(opened.message.acceptedTiers, [CapabilityRecord.Tier.GOLD, CapabilityRecord.Tier.SILVER])
    // verified and hashed over the packed bytes as signed, not over our (unpacked) re-encoding
    assert.deepEqual(opened.hash, messageHash(DOMAIN.capability, payload))
    assert.notDeepEqual(CapabilityRecord.encode(opened.message), payload, 'a re-encoding differs, so the check above can tell')
  })

  it('a record the validator rejects (empty accepted_tiers) is refused by every server: the putter is told, GET never returns it', async () => {
    const value = seal(stranger, CapabilityRecord.encode(recordOf(stranger, 9n, [])))
    const key = capabilityKey(stranger.peerId)
    const result = await put(stranger, key, value)
    assert.ok(result.responses >= servers.length, `servers answered (${result.responses})`)
    assert.equal(result.acks, 0, 'no server acknowledged a record it did not store')
    const got = await values(observer, key)
    assert.ok(got.every(v => !equals(v, value)), 'GET never returns the rejected record')
  })

  it('a key outside the idlegrid namespace is refused, not acknowledged', async () => {
    const result = await put(stranger, new TextEncoder().encode('/other/thing'), Uint8Array.of(1, 2, 3))
    assert.ok(result.responses > 0)
    assert.equal(result.acks, 0)
  })

  it('red team: a replayed older record does not displace the newer one a server holds', async () => {
    const key = capabilityKey(stranger.peerId)
    const older = seal(stranger, CapabilityRecord.encode(recordOf(stranger, 10n, [CapabilityRecord.Tier.SILVER])))
    const newer = seal(stranger, CapabilityRecord.encode(recordOf(stranger, 11n, [CapabilityRecord.Tier.GOLD])))
    await waitFor(async () => (await put(stranger, key, newer)).acks === servers.length, { timeoutMs: 30_000, what: 'every server to store seq 11' })
    const replay = await put(stranger, key, older)
    assert.ok(replay.responses >= servers.length)
    const got = await values(observer, key)
    const stored = got.filter(v => equals(v, older)).length
    recordAttack({ issue: '14.1', attack: 'DHT PUT of an older valid capability record over a newer one', got: `${replay.acks} of ${replay.responses} servers acknowledged, ${stored} served it`, limit: 'the selector runs on PUT: 0 stored' })
    assert.equal(replay.acks, 0, 'no server stored the older record')
    assert.equal(stored, 0)
    assert.ok(got.length > 0 && got.every(v => equals(v, newer)), 'every server still serves seq 11')
  })
})
