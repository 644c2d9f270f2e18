import * as assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import * as lp from 'it-length-prefixed'
import { pipe } from 'it-pipe'
import { CAPABILITY_SERVICE, type CapabilityAdvertiser } from '../../src/capability/advertising/advertiser.js'
import { DISCOVERY_SERVICE, type CapabilityDiscovery } from '../../src/capability/discovery/discovery-service.js'
import type { DiscoveryResult } from '../../src/capability/discovery/discovery.js'
import { isFetchFailure, type RecordFetchError } from '../../src/capability/errors.js'
import { parsePolicy } from '../../src/capability/policy/policy.js'
import { providerProfile, type ProviderProfile } from '../../src/capability/policy/profile.js'
import { buildCapabilityRecord, sealCapabilityRecord } from '../../src/capability/record/record.js'
import { fetchRecordDirect, MAX_FETCH_REQUEST_BYTES } from '../../src/capability/record/record-fetch.js'
import { capabilityServices } from '../../src/capability/role-services.js'
import { parseSimulatedGpus } from '../../src/capability/gpu/simulated-gpus.js'
import { PROTOCOL } from '../../protocols/ids.js'
import { ProviderCandidates, type CandidateComponents } from '../../src/market/renter/provider-candidates.js'
import { requestOnce, type IdlegridNode } from '../../src/node/index.js'
import { connectionManagerOf, recordAttack, startInProcessNetwork, waitFor, type InProcessNetwork } from '../utils/index.js'
import { defaultLogger } from '@libp2p/logger'
import type { StreamHandler } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'

/** provider 1 is mallory: found under gpu/h-100 like provider 0, its direct answers are the attacks */
const PROFILES: Array<{ policy: Record<string, unknown>, gpus: string[] }> = [
  { policy: { region: 'eu-west', priceFloor: 2.5 }, gpus: ['H100 80GB:80:2'] },
  { policy: { region: 'eu-central', priceFloor: 1.5 }, gpus: ['H100 80GB:80:1'] },
  { policy: { region: 'us-east', priceFloor: 0.4 }, gpus: ['RTX 4090:24'] }
]
const H100 = { gpus: ['h100'] }
/** a fresh answer from every provider (no cached record) */
const ASK = { timeoutMs: 10_000, maxRecordAgeMs: 0 }

function profileOf (i: number, gpus?: string[]): ProviderProfile {
  const p = PROFILES[i]
  return providerProfile(parsePolicy(p.policy), parseSimulatedGpus(gpus ?? p.gpus))
}

function service<T> (node: IdlegridNode, name: string): T {
  return (node.libp2p.services as Record<string, unknown>)[name] as T
}

describe('capability records fetched from the providers themselves (/idlegrid/cap/1.0.0)', function () {
  this.timeout(90_000)
  let net: InProcessNetwork
  let renter: IdlegridNode
  let honest: IdlegridNode
  let mallory: IdlegridNode

  const discover = async (opts: Record<string, unknown> = ASK): Promise<DiscoveryResult> =>
    await service<CapabilityDiscovery>(renter, DISCOVERY_SERVICE).discover(H100, opts)
  /** the renter's connection manager (libp2p keeps its components on the node) */
  const connections = (): ConnectionManager => connectionManagerOf(renter)
  const fetchFrom = async (peer: IdlegridNode, timeoutMs = 5_000): Promise<unknown> =>
    await fetchRecordDirect(connections(), peer.peerId, { signal: AbortSignal.timeout(timeoutMs) })
  /** mallory answers the record protocol with `handler` from now on */
  const malloryAnswers = async (handler: StreamHandler): Promise<void> => {
    await mallory.libp2p.unhandle(PROTOCOL.capability)
    await mallory.libp2p.handle(PROTOCOL.capability, handler)
  }
  /** mallory answers one frame of its choosing */
  const malloryServes = async (bytes: Uint8Array): Promise<void> => {
    await malloryAnswers(({ stream }) => { void pipe([bytes], (s) => lp.encode(s), stream).catch(() => {}) })
  }
  /** discovery still lists mallory, with its own DHT record, and the honest provider */
  const assertHonestServiceContinues = (r: DiscoveryResult): void => {
    assert.deepEqual(
      r.providers.map(p => p.peerId).sort(),
      [honest.peerId.toString(), mallory.peerId.toString()].sort()
    )
    const listed = r.providers.find(p => p.peerId === mallory.peerId.toString())
    assert.equal(listed?.region, 'eu-central', 'mallory is listed with the record it signed into the DHT')
    assert.ok(r.recordsFrom.dht >= 1, 'mallory\'s record came from the DHT')
  }
  /** why mallory's direct answer was refused (the honest provider's answer is not judged here) */
  const malloryFailures = (r: DiscoveryResult): string[] =>
    r.directFailures.filter(f => f.peerId === mallory.peerId.toString()).map(f => f.reason)

  before(async () => {
    net = await startInProcessNetwork({
      providers: PROFILES.length,
      extensions: (role, i) => capabilityServices(role === 'provider' ? { profile: profileOf(i) } : {})
    })
    renter = net.renters[0]
    honest = net.providers[0]
    mallory = net.providers[1]
    await waitFor(() => net.providers.every(p => service<CapabilityAdvertiser>(p, CAPABILITY_SERVICE).lastPublished() != null), { timeoutMs: 30_000, what: 'every provider to publish its record' })
    await waitFor(async () => (await discover()).providers.length === 2, { timeoutMs: 20_000, what: 'both H100 providers discovered' })
  })

  after(async () => { await net?.stop() })

  it('finds providers through the index key and takes their records from them, then from its cache', async () => {
    const r = await discover()
    assert.deepEqual(
      r.providers.map(p => p.peerId).sort(),
      [honest.peerId.toString(), mallory.peerId.toString()].sort()
    )
    assert.deepEqual(r.recordsFrom, { cache: 0, direct: 2, dht: 0 })
    assert.deepEqual(r.directFailures, [])
    assert.ok(r.dhtMessages > 0 && r.dhtMessages <= 24, `${r.dhtMessages} DHT messages: the lookup budget is 24`)
    const again = await discover({ timeoutMs: 10_000 })
    assert.deepEqual(again.recordsFrom, { cache: 2, direct: 0, dht: 0 })
    assert.deepEqual(again.providers.map(p => p.sequence), r.providers.map(p => p.sequence))
  })

  it('red team: a provider serving another peer\'s record is refused (wrong-signer) and its own DHT record used', async () => {
    const victim = service<CapabilityAdvertiser>(net.providers[2], CAPABILITY_SERVICE).current().envelope
    await malloryServes(victim)
    await assert.rejects(fetchFrom(mallory), (err: RecordFetchError) => isFetchFailure(err) && err.reason === 'wrong-signer')
    const r = await discover()
    assert.deepEqual(malloryFailures(r), ['wrong-signer'])
    assertHonestServiceContinues(r)
    assert.ok(r.providers.every(p => p.region !== 'us-east'), 'the victim\'s record is not listed under mallory (nor matched h100)')
    recordAttack({ issue: '15.4', attack: 'provider answers the record fetch with another peer\'s signed record', got: `refused (${malloryFailures(r).join(', ')}); listed with its own DHT record`, limit: 'signer = peer asked = record.peer_id' })
  })

  it('red team: an expired record served directly is refused (expired)', async () => {
    const issuedAt = Date.now() - 120_000
    const expired = sealCapabilityRecord(
      mallory.privateKey,
      mallory.peerId,
      buildCapabilityRecord(profileOf(1), {
        peerId: mallory.peerId,
        sequence: BigInt(Date.now()) * 2n,
        issuedAt,
        ttlMs: 60_000
      })
    )
    await malloryServes(expired.envelope)
    await assert.rejects(fetchFrom(mallory), (err: RecordFetchError) => err.reason === 'expired')
    const r = await discover()
    assert.deepEqual(malloryFailures(r), ['expired'])
    assertHonestServiceContinues(r)
    recordAttack({ issue: '15.4', attack: 'provider answers the record fetch with its own expired record', got: `refused (${malloryFailures(r).join(', ')})`, limit: 'expires_at > now on every use' })
  })

  it('red team: a valid record that does not match the filter is removed by the filter, not trusted for the index key', async () => {
    const other = sealCapabilityRecord(mallory.privateKey, mallory.peerId, buildCapabilityRecord(profileOf(1, ['RTX 4090:24']), { peerId: mallory.peerId, sequence: BigInt(Date.now()) * 2n, ttlMs: 60_000 }))
    await malloryServes(other.envelope)
    const r = await discover()
    assert.deepEqual(r.providers.map(p => p.peerId), [honest.peerId.toString()])
    assert.deepEqual(r.removedBy, { gpu: 1 })
    recordAttack({ issue: '15.4', attack: 'provider found under gpu/h-100 serves a record with no H100', got: `not listed (removed by filter: ${Object.keys(r.removedBy).join(', ')})`, limit: 'every filter applied to the verified record' })
  })

  it('red team: garbage and an oversized reply are refused unread, then the DHT record is used', async () => {
    await malloryServes(randomBytes(300))
    await assert.rejects(fetchFrom(mallory), (err: RecordFetchError) => err.reason === 'malformed')
    const garbage = await discover()
    assert.deepEqual(malloryFailures(garbage), ['malformed'])
    assertHonestServiceContinues(garbage)

    // a frame announcing 64 MiB, then bytes that never end: the renter reads the length only
    let sent = 0
    await malloryAnswers(({ stream }) => {
      void stream.sink((async function * () {
        yield Uint8Array.from([0x80, 0x80, 0x80, 0x20]) // varint 64 MiB
        for (let i = 0; i < 64 && stream.status === 'open'; i++) { sent += 64 * 1024; yield new Uint8Array(64 * 1024) }
      })()).catch(() => {})
    })
    await assert.rejects(fetchFrom(mallory), (err: RecordFetchError) => err.reason === 'oversized')
    const big = await discover()
    assert.deepEqual(malloryFailures(big), ['oversized'])
    assertHonestServiceContinues(big)
    recordAttack({ issue: '15.4', attack: 'provider answers the record fetch with garbage / a frame announcing 64 MiB', got: `refused (${malloryFailures(garbage).join(', ')} / ${malloryFailures(big).join(', ')}), mallory pushed ${Math.round(sent / 1024)} KiB before the stream was aborted`, limit: 'reply bound 8 KiB + 256 B, checked on the length prefix' })
  })

  it('red team: a provider that never answers costs the deadline, then its DHT record is used', async () => {
    await malloryAnswers(() => {}) // accepts the stream, reads nothing, answers nothing
    await assert.rejects(fetchFrom(mallory, 400), (err: RecordFetchError) => err.reason === 'timeout')
    const r = await discover({ ...ASK, directTimeoutMs: 1_000 })
    assert.deepEqual(malloryFailures(r), ['timeout'])
    assertHonestServiceContinues(r)
    recordAttack({ issue: '15.4', attack: 'provider accepts the record fetch and never answers', got: `query answered in ${r.elapsedMs} ms with its DHT record (direct deadline 1000 ms)`, limit: 'per-fetch direct deadline, then DHT fallback; per-query deadline' })
  })

  it('a node that does not serve records is "unsupported"; an oversized request is refused and the provider keeps serving', async () => {
    await assert.rejects(fetchFrom(net.bootstrap), (err: RecordFetchError) => err.reason === 'unsupported')
    const cm = connections()
    await assert.rejects(
      requestOnce(cm, honest.peerId, {
        protocol: PROTOCOL.capability,
        request: new Uint8Array(MAX_FETCH_REQUEST_BYTES + 1),
        maxResponseBytes: 16 * 1024,
        signal: AbortSignal.timeout(5_000)
      })
    )
    const record = await fetchRecordDirect(cm, honest.peerId, { signal: AbortSignal.timeout(5_000) })
    assert.ok(record.signer.equals(honest.peerId))
  })

  it('the market renter takes its candidates\' records from the providers, then its cache, and a provider\'s DHT record when it does not serve one', async () => {
    await mallory.libp2p.unhandle(PROTOCOL.capability)
    const components: CandidateComponents = {
      dht: renter.libp2p.services.dht,
      connectionManager: connections(),
      peerStore: renter.libp2p.peerStore,
      heartbeats: renter.libp2p.services.heartbeats
    }
    const candidates = new ProviderCandidates(components, defaultLogger().forComponent('test'))
    const everyone = net.providers.map(p => p.peerId.toString()).sort()
    const found = await candidates.find(AbortSignal.timeout(10_000))
    assert.deepEqual(found.filter(id => everyone.includes(id)).sort(), everyone, 'every advertised provider is a candidate')
    // mallory does not serve its record: it comes from the DHT; the others answered themselves
    assert.deepEqual(candidates.lastRecordsFrom, { cache: 0, direct: everyone.length - 1, dht: 1 })
    await candidates.find(AbortSignal.timeout(10_000))
    assert.deepEqual(candidates.lastRecordsFrom, { cache: everyone.length, direct: 0, dht: 0 })
  })
})
