/**
 * Issue 37: `idlegrid` processes in the NAT lab (test/lab/nat-lab.ts) trade as their users
 * would: a bootstrap on the public segment, providers and renters at home behind NAT routers
 * that drop unsolicited inbound connections, nobody forwarding a port. Each row submits a job.
 * A NAT'd pair meets through the bootstrap's circuit relay (src/node/connectivity/relay.ts), and the auction
 * runs over its limited circuit. The job then takes a direct path (src/node/connectivity/direct-path.ts):
 * through two endpoint-independent NATs a hole punch; through a symmetric NAT there is none,
 * and the job runs over the relay only when its operator carries jobs (relay.unlimited), and
 * otherwise fails saying so. Needs root, iproute2 and nftables; elsewhere it skips and says why.
 */
import { strict as assert } from 'node:assert'
import { waitFor, type NodeProcess } from '../utils/index.js'
import { said, statusOf, trade, useNatNetwork } from './nat-network.js'

describe('NAT lab: jobs between homes behind NAT, through a relay with limits (issue 37)', function () {
  this.timeout(240_000)
  const net = useNatNetwork('# the bootstrap relays with the default limits\n')

  it('provider behind NAT, renter public: the job completes', async () => {
    const { got, provider } = await trade(net, l => l.homes[0].hosts[0], l => l.publicHosts[2])
    assert.equal(got.summary.status, 'ok', said(got))
    assert.equal(got.summary.provider, provider.peerId)
  })

  it('provider public, renter behind NAT: the job completes', async () => {
    const { got, provider } = await trade(net, l => l.publicHosts[1], l => l.homes[2].hosts[0])
    assert.equal(got.summary.status, 'ok', said(got))
    assert.equal(got.summary.provider, provider.peerId)
  })

  it('provider on a public address it does not announce, renter behind NAT: a peer dials the address back (AutoNAT), the provider announces it, and the renter dials it directly', async () => {
    const confirmed = async (p: NodeProcess): Promise<void> => {
      await waitFor(async () => { const s = await statusOf(p); return s.reachability.how === 'direct' && s.reachability.via === 'autonat' ? s : undefined }, { timeoutMs: 40_000, intervalMs: 1_000, what: 'the provider\'s public address dialed back' })
    }
    const { got, provider, paths } = await trade(
      net,
      l => l.publicHosts[1],
      l => l.homes[2].hosts[0],
      confirmed,
      { announce: false }
    )
    assert.equal(got.summary.status, 'ok', `${said(got)} paths ${JSON.stringify(paths)}`)
    assert.equal(got.summary.provider, provider.peerId)
    assert.equal(paths.renter.asked.failed, 0, JSON.stringify(paths))
  })

  it('provider behind a router that offers UPnP, renter behind NAT: the router forwards the provider\'s port, and the renter dials it directly', async () => {
    const mapped = async (p: NodeProcess): Promise<void> => {
      await waitFor(async () => { const s = await statusOf(p); return s.reachability.how === 'direct' && s.reachability.via === 'upnp' ? s : undefined }, { timeoutMs: 30_000, intervalMs: 1_000, what: 'the provider\'s UPnP mapping' })
    }
    const { got, provider, paths } = await trade(net, l => l.homes[5].hosts[0], l => l.homes[0].hosts[0], mapped)
    assert.equal(got.summary.status, 'ok', `${said(got)} paths ${JSON.stringify(paths)}`)
    assert.equal(got.summary.provider, provider.peerId)
    assert.equal(paths.renter.asked.failed, 0, JSON.stringify(paths))
  })

  it('provider behind NAT, renter behind NAT (both endpoint-independent): the auction runs over the relay, the job over a hole-punched direct connection', async () => {
    const { got, provider, paths } = await trade(net, l => l.homes[1].hosts[0], l => l.homes[3].hosts[0])
    assert.equal(got.summary.status, 'ok', `${said(got)} paths ${JSON.stringify(paths)}`)
    assert.equal(got.summary.provider, provider.peerId)
    assert.equal(paths.renter.asked.direct, 1, JSON.stringify(paths))
    assert.equal(paths.provider.served.direct, 1, JSON.stringify(paths))
  })

  it('provider behind a symmetric NAT, renter behind NAT: awarded over the relay; no direct path, so the job is not run over the limited circuit, and the renter is told why', async () => {
    const { got, provider, paths } = await trade(net, l => l.homes[4].hosts[0], l => l.homes[0].hosts[0])
    assert.equal(got.summary.provider, provider.peerId, `awarded over the relay: ${said(got)}`)
    assert.equal(got.summary.status, 'lost', said(got))
    const detail = String(got.summary.history?.[0]?.detail)
    assert.match(detail, /reachable only through a relay's limited circuit/)
    assert.match(detail, /no direct path/)
    assert.equal(paths.renter.asked.failed, 1, JSON.stringify(paths))
  })
})

describe('NAT lab: jobs between homes behind NAT, through a relay whose operator carries jobs (issue 37)', function () {
  this.timeout(240_000)
  const net = useNatNetwork('relay:\n  unlimited: true\n')

  it('provider behind a symmetric NAT, renter behind NAT: no direct path, the job completes over the relay', async () => {
    const { got, provider, paths } = await trade(net, l => l.homes[4].hosts[0], l => l.homes[3].hosts[0])
    assert.equal(got.summary.status, 'ok', `${said(got)} paths ${JSON.stringify(paths)}`)
    assert.equal(got.summary.provider, provider.peerId)
    assert.equal(paths.renter.asked.failed, 1, 'the direct path was tried first')
  })

  it('provider behind NAT, renter behind NAT (both endpoint-independent): the job takes the direct path, not the relay', async () => {
    const { got, paths } = await trade(net, l => l.homes[1].hosts[0], l => l.homes[2].hosts[0])
    assert.equal(got.summary.status, 'ok', said(got))
    assert.equal(paths.renter.asked.direct, 1, JSON.stringify(paths))
  })
})
