import * as assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { logger } from '@libp2p/logger'
import { jobShardOf } from '../../protocols/ids.js'
import { MarketError } from '../../src/market/errors.js'
import { isCoded } from '../../src/common/index.js'
import { MAX_READY_PEERS, readinessFilters, ShardReadiness, type ReadinessComponents } from '../../src/market/renter/shard-readiness.js'
import { recordAttack } from '../utils/index.js'
import type { PeerId } from '@libp2p/interface'

const SHARD = jobShardOf(undefined)
const JOB = { constraints: undefined }

/**
 * A renter's view of the network: who is connected, subscribed, and has gossipsub's outbound
 * stream; dials succeed for `dialable`.
 */
function fakeNetwork (dialable: (id: string) => boolean = () => true): {
  components: ReadinessComponents
  connected: Set<string>
  subscribed: Set<string>
  outbound: Set<string>
  dials: string[]
} {
  const connected = new Set<string>()
  const subscribed = new Set<string>()
  const outbound = new Set<string>()
  const dials: string[] = []
  const components = {
    connectionManager: {
      getConnections: (peer: PeerId) => connected.has(peer.toString()) ? [{}] : [],
      openConnection: async (peer: PeerId) => {
        dials.push(peer.toString())
        if (!dialable(peer.toString())) throw new Error('unreachable')
        connected.add(peer.toString())
        return {}
      }
    },
    pubsub: {
      getSubscribers: () => [...subscribed].map(id => ({ toString: () => id })),
      streamsOutbound: { has: (id: string) => outbound.has(id) }
    }
  } as unknown as ReadinessComponents
  return { components, connected, subscribed, outbound, dials }
}

async function peers (n: number): Promise<string[]> {
  return await Promise.all(Array.from({ length: n }, async () => peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString()))
}

describe('market: shard readiness (a renter\'s first auction)', () => {
  const log = logger('test:readiness')

  it('dials the providers found, waits for their subscription and gossipsub\'s stream, then skips the shard until it goes stale', async () => {
    const ids = await peers(3)
    const net = fakeNetwork()
    let finds = 0
    const readiness = new ShardReadiness(net.components, async () => { finds++; return ids }, log, 5_000)
    // gossipsub hears each one a little after the connection
    const timer = setInterval(() => {
      for (const id of net.connected) {
        net.subscribed.add(id)
        net.outbound.add(id)
      }
    }, 20)
    try {
      const report = await readiness.ready(SHARD, JOB, AbortSignal.timeout(10_000))
      assert.deepEqual(
        { found: report.found, ready: report.ready, skipped: report.skipped },
        { found: 3, ready: 3, skipped: false }
      )
      assert.deepEqual(net.dials.sort(), [...ids].sort())
      const again = await readiness.ready(SHARD, JOB, AbortSignal.timeout(10_000))
      assert.equal(again.skipped, true)
      assert.equal(finds, 1)
    } finally {
      clearInterval(timer)
    }
  })

  it('auctions starting together on a cold shard share one readying', async () => {
    const ids = await peers(2)
    const net = fakeNetwork()
    let finds = 0
    const readiness = new ShardReadiness(net.components, async () => { finds++; return ids }, log, 5_000)
    const timer = setInterval(() => {
      for (const id of net.connected) {
        net.subscribed.add(id)
        net.outbound.add(id)
      }
    }, 20)
    try {
      const reports = await Promise.all(
        [1, 2, 3].map(async () => await readiness.ready(SHARD, JOB, AbortSignal.timeout(10_000)))
      )
      assert.equal(finds, 1)
      assert.deepEqual(reports.map(r => r.skipped).sort(), [false, true, true])
      assert.equal(net.dials.length, 2)
    } finally {
      clearInterval(timer)
    }
  })

  it('a subscriber gossipsub has no stream to yet is waited for (a publish would skip it)', async () => {
    const [id] = await peers(1) as [string]
    const net = fakeNetwork()
    net.connected.add(id)
    net.subscribed.add(id)
    const readiness = new ShardReadiness(net.components, async () => [id], log, 150)
    const report = await readiness.ready(SHARD, JOB, AbortSignal.timeout(10_000))
    assert.equal(report.ready, 0)
    assert.ok(report.elapsedMs >= 100, `returned before gossipsub could send to the peer: ${report.elapsedMs} ms`)
  })

  it('red team: providers that connect and never subscribe, or cannot be reached, hold the renter only to the bound, once', async () => {
    const ids = await peers(MAX_READY_PEERS + 8)
    const silent = new Set(ids.slice(0, 10))
    const net = fakeNetwork(id => silent.has(id))
    let finds = 0
    const readiness = new ShardReadiness(net.components, async () => { finds++; return ids }, log, 200)
    const report = await readiness.ready(SHARD, JOB, AbortSignal.timeout(10_000))
    assert.equal(report.found, MAX_READY_PEERS, 'more providers than the bound were taken')
    assert.equal(report.ready, 0)
    assert.ok(net.dials.length <= MAX_READY_PEERS)
    // the next auction does not pay it again
    assert.equal((await readiness.ready(SHARD, JOB, AbortSignal.timeout(10_000))).skipped, true)
    assert.equal(finds, 1)
    recordAttack({
      issue: '15.5',
      attack: `${ids.length} advertised providers that never subscribe (10 connect, the rest cannot be reached) stall a renter's first auction`,
      got: `${report.elapsedMs} ms held once, ${net.dials.length} dials; the next auction ${String(finds === 1 ? 'skips readying' : 'readies again')}`,
      limit: `${MAX_READY_PEERS} providers per shard, the readying bound (8 s, 200 ms here), once per 10 s when nobody got ready`
    })
  })

  it('a cancelled auction stops readying with "auction cancelled"', async () => {
    const ids = await peers(1)
    const net = fakeNetwork()
    const readiness = new ShardReadiness(net.components, async () => ids, log, 10_000)
    const controller = new AbortController()
    setTimeout(() => { controller.abort() }, 50)
    await assert.rejects(readiness.ready(SHARD, JOB, controller.signal), (err: Error) => isCoded(err, MarketError, 'ERR_AUCTION') && /cancelled/.test(err.message))
  })

  it('asks discovery for the providers the job\'s residency and memory allow', () => {
    assert.deepEqual(readinessFilters({ constraints: undefined }), {})
    const c = { minVramMib: 40 * 1024, gpuModels: [], regions: [], residency: 'eu', maxPriceMicroUsd: 0n, maxLatencyMs: 0, minReliabilityPpm: 0, preemptible: false, minPreemptionNoticeMs: 0, excludeSimulated: false }
    assert.deepEqual(readinessFilters({ constraints: c }), { residency: 'eu', minVramGb: 40 })
  })
})
