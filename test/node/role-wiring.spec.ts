import * as assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { PROTOCOL, isJobShardTopic, jobShardTopic } from '../../protocols/ids.js'
import { equals } from 'uint8arrays/equals'
import { CAPABILITY_SERVICE, loadProviderSetup, type CapabilityAdvertiser } from '../../src/capability/index.js'
import { roleExtensions } from '../../src/compose/index.js'
import { MARKET_RENTER_SERVICE, parseJobSpec, type MarketRenterService } from '../../src/market/index.js'
import type { IdlegridNode } from '../../src/node/index.js'
import { startInProcessNetwork, waitFor, waitForTopicMesh, type InProcessNetwork } from '../utils/index.js'

/** What libp2p and every idlegrid node speak (protocols/README.md §1 and §2); gossipsub only, no floodsub. */
// circuit relay v2's stop: every node takes relayed connections (src/node/connectivity/relay.ts);
// punch: every node answers a direct-path request (src/node/connectivity/direct-path.ts)
const CORE_PROTOCOLS = ['/ipfs/id/1.0.0', '/ipfs/ping/1.0.0', '/libp2p/circuit/relay/0.2.0/stop', PROTOCOL.kad, '/meshsub/1.2.0', '/meshsub/1.1.0', '/meshsub/1.0.0', PROTOCOL.ledgerSync, PROTOCOL.heartbeat, PROTOCOL.punch, PROTOCOL.autonat]
/** What a provider adds: accept, explain, the job stream, its own capability record and its leases' requests. */
const PROVIDER_PROTOCOLS = [
  PROTOCOL.accept,
  PROTOCOL.explain,
  PROTOCOL.job,
  PROTOCOL.jobCached,
  PROTOCOL.capability,
  PROTOCOL.serve,
  PROTOCOL.serveV1
]
/** What a renter adds: the bids sent to it and their audit. */
const RENTER_PROTOCOLS = [PROTOCOL.bid, PROTOCOL.bidsAudit, PROTOCOL.usage]
/** circuit relay v2's hop, served by bootstraps (src/node/connectivity/relay.ts) */
const RELAY_PROTOCOLS = ['/libp2p/circuit/relay/0.2.0/hop']

describe('node wiring as the composition root builds it (issue 14 items 5 and 6)', function () {
  this.timeout(120_000)
  let net: InProcessNetwork
  const provider = (): IdlegridNode => net.providers[0] as IdlegridNode
  const renter = (): IdlegridNode => net.renters[0] as IdlegridNode

  before(async () => {
    const { profile } = await loadProviderSetup({ raw: {}, flags: { region: 'eu-west', 'price-floor': '1.00' }, simulateGpu: ['H100:80'] })
    net = await startInProcessNetwork({
      providers: 1,
      renters: 1,
      extensions: (role, _i, config) => roleExtensions(config, role === 'provider' ? { provider: { profile, runner: 'process' } } : {})
    })
    for (const n of [provider(), renter()]) await n.libp2p.dial(net.bootstrap.libp2p.getMultiaddrs()[0]).catch(() => {})
    await renter().libp2p.dial(provider().libp2p.getMultiaddrs()[0])
  })

  after(async () => { await net?.stop() })

  it('every role advertises exactly the spec\'s protocols, and no /floodsub/1.0.0', async () => {
    // renters run the DHT in client mode: they query it but do not serve /idlegrid/kad/1.0.0
    const expected = (n: IdlegridNode): string[] => [
      ...CORE_PROTOCOLS.filter(p => n !== renter() || p !== PROTOCOL.kad),
      ...(n === provider() ? PROVIDER_PROTOCOLS : []),
      ...(n === renter() ? RENTER_PROTOCOLS : []),
      ...(n === net.bootstrap ? RELAY_PROTOCOLS : [])
    ].sort()
    const table = await specRoleTable()
    for (const n of net.all) {
      assert.deepEqual([...n.libp2p.getProtocols()].sort(), expected(n), `${n.config.role} registers`)
      assert.deepEqual([...n.libp2p.getProtocols()].sort(), table[n.config.role], `${n.config.role}: protocols/README.md "Who serves what"`)
    }
    // and what identify tells a peer
    for (const n of [net.bootstrap, provider()]) {
      const seen = await waitFor(async () => {
        const protocols = (await renter().libp2p.peerStore.get(n.peerId)).protocols
        return protocols.length > 0 ? protocols : false
      }, { timeoutMs: 20_000, what: 'identify to complete' })
      assert.ok(!seen.includes('/floodsub/1.0.0'), 'floodsub is not advertised')
      assert.deepEqual([...seen].sort(), expected(n), `the renter learns the ${n.config.role}'s protocols`)
    }
  })

  it("a provider's heartbeats report its real GPU slots (one GPU: 1 total, 0 busy)", async () => {
    const heard = await waitFor(() => renter().libp2p.services.heartbeats.presence().find(p => p.peerId === provider().peerId.toString()), { timeoutMs: 30_000, what: 'the provider\'s heartbeat' })
    assert.equal(heard.role, 'provider')
    assert.equal(heard.slotsTotal, 1)
    assert.equal(heard.slotsBusy, 0)
    const bootstrap = await waitFor(
      () =>
        renter()
          .libp2p.services.heartbeats.presence()
          .find(p => p.peerId === net.bootstrap.peerId.toString()),
      { timeoutMs: 30_000 }
    )
    assert.equal(bootstrap.slotsTotal, 0, 'other roles report no slots')
  })

  it('a bid carries the sequence of the capability record the provider advertises', async () => {
    // the provider joins the shards it serves; the bootstrap relays every shard to the renter
    await waitFor(() => provider().libp2p.services.pubsub.getTopics().some(isJobShardTopic) &&
      renter().libp2p.services.pubsub.getSubscribers(jobShardTopic('any', 0)).length > 0, { timeoutMs: 30_000, what: 'the provider on its shards, the renter knowing a relay' })
    await waitForTopicMesh([net.bootstrap, provider()], jobShardTopic('any', 0))
    // the record sealed at start may lack our listen addresses; once libp2p reports them it is
    // sealed anew (a new sequence): bid after that, or the two sequences race
    const advertiser = (provider().libp2p.services as unknown as Record<string, CapabilityAdvertiser>)[
      CAPABILITY_SERVICE
    ]
    await waitFor(() => advertiser.current().message.listenAddrs.length > 0, { timeoutMs: 10_000, what: 'the provider\'s record to carry its listen addresses' })
    // bids come straight to the renter: the auction's report holds them as received
    const market = (renter().libp2p.services as unknown as Record<string, MarketRenterService>)[MARKET_RENTER_SERVICE]
    const report = await market.auction(parseJobSpec({ name: 'seq-probe', runtime: { command: ['true'] }, auction: { bidWindowMs: 2_000, acceptTimeoutMs: 1_500 } }))
    const bid = report.signed?.bids
      .map(b => b.message)
      .find(b => equals(b.provider, provider().peerId.toMultihash().bytes))
    assert.ok(bid != null, `no bid from the provider: ${JSON.stringify(report.received)}`)
    const sequence = advertiser.current().message.sequence
    assert.ok(sequence > 0n)
    assert.equal(bid.capabilitySeq, sequence)
  })
})

/** protocols/README.md's "Who serves what": per role, the protocols marked "serves". */
async function specRoleTable (): Promise<Record<string, string[]>> {
  const text = await readFile(new URL('../../../protocols/README.md', import.meta.url), 'utf8')
  const section = text.slice(text.indexOf('### Who serves what'), text.indexOf('### Gossip topics'))
  const rows = section.split('\n').filter(l => l.startsWith('| `'))
  const roles = ['bootstrap', 'provider', 'renter']
  const out: Record<string, string[]> = { bootstrap: [], provider: [], renter: [] }
  for (const row of rows) {
    const cells = row.split('|').slice(1, -1).map(c => c.trim())
    const ids = [...cells[0].matchAll(/`([^`]+)`/g)].map(m => m[1])
    roles.forEach((role, i) => { if (cells[i + 1] === 'serves') out[role].push(...ids) })
  }
  for (const role of roles) out[role].sort()
  return out
}
