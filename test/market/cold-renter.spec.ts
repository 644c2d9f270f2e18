import * as assert from 'node:assert/strict'
import { join } from 'node:path'
import { CAPABILITY_SERVICE, capabilityServices, type CapabilityAdvertiser } from '../../src/capability/index.js'
import { parseSimulatedGpus } from '../../src/capability/gpu/simulated-gpus.js'
import { parsePolicy } from '../../src/capability/policy/policy.js'
import { providerProfile } from '../../src/capability/policy/profile.js'
import { resolveConfig, type NodeConfig, type Role } from '../../src/config/index.js'
import { parseJobSpec } from '../../src/market/renter/job-spec.js'
import { marketRenter, MARKET_RENTER_SERVICE, type MarketRenterInit, type MarketRenterService } from '../../src/market/renter/renter-service.js'
import { createNode, type IdlegridNode, type NodeExtensions } from '../../src/node/index.js'
import { marketNodeServices, providerMarketServices } from './fixtures.js'
import { startInProcessNetwork, tempDir, waitFor, type InProcessNetwork } from '../utils/index.js'

const PROVIDERS = 6
/** The bench's window: a first auction must not need a longer one than later auctions. */
const WINDOW_MS = 400

function merge (...parts: NodeExtensions[]): NodeExtensions {
  return {
    services: Object.assign({}, ...parts.map(p => p.services)),
    dhtValidators: Object.assign({}, ...parts.map(p => p.dhtValidators)),
    dhtSelectors: Object.assign({}, ...parts.map(p => p.dhtSelectors))
  }
}

/** As the composition root builds them: capability discovery on every role, providers advertise. */
function extensions (role: Role, index: number, config: NodeConfig): NodeExtensions {
  if (role !== 'provider') return merge(capabilityServices(), marketNodeServices(role, index, config))
  const profile = providerProfile(parsePolicy({ region: 'eu-west', priceFloor: 1 + index * 0.25, images: ['*'] }), parseSimulatedGpus(['H100:80']))
  return merge(capabilityServices({ profile }), providerMarketServices(profile, { advertised: true }))
}

describe('market: a renter\'s first auction (issue 15 item 5)', function () {
  this.timeout(120_000)
  let net: InProcessNetwork

  before(async () => {
    net = await startInProcessNetwork({ providers: PROVIDERS, renters: 0, heartbeatSeconds: 30, extensions })
    const advertiser = (n: IdlegridNode): CapabilityAdvertiser =>
      (n.libp2p.services as Record<string, unknown>)[CAPABILITY_SERVICE] as CapabilityAdvertiser
    await waitFor(() => net.providers.every(p => advertiser(p).lastPublished() != null), { timeoutMs: 60_000, what: 'every provider to advertise' })
  })
  after(async () => { await net?.stop() })

  /** A renter node started now, and its first auction (every provider can serve it). */
  async function firstAuction (
    init: MarketRenterInit = {}
  ): Promise<{ bids: number, publishedTo?: number, accepted?: number }> {
    const dir = await tempDir()
    const config = resolveConfig({ role: 'renter', flags: { dataDir: join(dir.path, 'renter'), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [net.bootstrap.libp2p.getMultiaddrs()[0]?.toString() as string], heartbeatSeconds: 30 } })
    const ext = extensions('renter', 0, config)
    const node = await createNode(config, {
      ...ext,
      services: { ...ext.services, [MARKET_RENTER_SERVICE]: marketRenter(init) }
    })
    try {
      const renter = node.libp2p.services[MARKET_RENTER_SERVICE] as unknown as MarketRenterService
      const report = await renter.auction(parseJobSpec({ name: 'first', runtime: { image: 'ghcr.io/acme/first:1' }, auction: { bidWindowMs: WINDOW_MS } }))
      return {
        bids: report.received?.kept ?? 0,
        publishedTo: report.publishedTo,
        accepted: report.timings.publishToAcceptedMs
      }
    } finally {
      await node.stop()
      await dir.cleanup()
    }
  }

  // without readying, the job went to the bootstrap alone (the renter knew no provider's
  // subscription yet) and every bid needed a new connection made inside the window: 0-1 of 12
  // bids in the window, and the bench's first 3-8 auctions without award
  it('a renter started just now sends its first job straight to every provider, gets every bid inside the window and the job awarded', async () => {
    const first = await firstAuction()
    assert.ok((first.publishedTo ?? 0) >= PROVIDERS, `the job went straight to ${String(first.publishedTo)} peers: ${JSON.stringify(first)}`)
    assert.equal(first.bids, PROVIDERS, `bids kept in the window: ${JSON.stringify(first)}`)
    assert.ok(first.accepted != null, `first auction not awarded: ${JSON.stringify(first)}`)
  })
})
