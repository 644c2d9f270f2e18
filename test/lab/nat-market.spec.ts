/**
 * Issue 37: `idlegrid` processes in the NAT lab (test/lab/nat-lab.ts) trade as their users
 * would: a bootstrap on the public segment, providers and renters at home behind NAT routers
 * that drop unsolicited inbound connections, nobody forwarding a port. Each row submits a job.
 * A NAT'd pair meets through the bootstrap's circuit relay (src/node/relay.ts), and the auction
 * runs over its limited circuit. The job then takes a direct path (src/node/direct-path.ts):
 * through two endpoint-independent NATs a hole punch; through a symmetric NAT there is none,
 * and the job runs over the relay only when its operator carries jobs (relay.unlimited), and
 * otherwise fails saying so. Needs root, iproute2 and nftables; elsewhere it skips and says why.
 */
import { strict as assert } from 'node:assert'
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { BIN_PATH, spawnNode, tempDir, waitFor, type NodeProcess } from '../utils/index.js'
import { submitJob, type Submitted } from '../exec/fixtures.js'
import { createNatLab, natLabUnavailable, type LabHost, type NatLab } from './nat-lab.js'

const PORT = 4001

function jobFile (name: string): string {
  return [
    `name: ${name}`, 'tier: silver', 'workload: evaluation',
    'runtime:', '  command: [/bin/sh, -c, "tr a-z A-Z < inputs/words.txt > outputs/upper.txt"]',
    'inputs: [words.txt]', 'estimatedMinutes: 1',
    'auction:', '  bidWindowMs: 1500', '  acceptTimeoutMs: 5000'
  ].join('\n') + '\n'
}

/** A lab with one bootstrap (a relay, with `relayConfig` as its config file), four EIM homes, a symmetric one (homes[4]) and one whose router offers UPnP (homes[5]). */
function useNatNetwork (relayConfig: string): { start: (role: 'provider' | 'renter', host: (l: NatLab) => LabHost) => Promise<NodeProcess>, lab: () => NatLab, dir: () => string } {
  let lab: NatLab | undefined
  let dir: { path: string, cleanup: () => Promise<void> } | undefined
  let bootstrap: NodeProcess | undefined
  const nodes: NodeProcess[] = []
  before(async function () {
    const why = natLabUnavailable({ upnp: true })
    if (why != null) {
      console.log(`    (skipped: ${why})`)
      this.skip()
    }
    lab = await createNatLab({ publicHosts: 3, homes: [{ nat: 'eim', hosts: 1 }, { nat: 'eim', hosts: 1 }, { nat: 'eim', hosts: 1 }, { nat: 'eim', hosts: 1 }, { nat: 'symmetric', hosts: 1 }, { nat: 'upnp', hosts: 1 }] })
    dir = await tempDir('idlegrid-nat-market-')
    await writeFile(join(dir.path, 'words.txt'), 'hello idlegrid\n')
    await writeFile(join(dir.path, 'job.yaml'), jobFile('nat'))
    await writeFile(join(dir.path, 'relay.yaml'), relayConfig)
    const p0 = lab.publicHosts[0]
    // a public node's listen address is announced only once verified (libp2p 2): the operator says it
    bootstrap = await spawnNode('bootstrap', { dataDir: join(dir.path, 'bootstrap'), args: ['--config', join(dir.path, 'relay.yaml'), '--listen', `/ip4/${p0.address}/tcp/${PORT}`, '--announce', `/ip4/${p0.address}/tcp/${PORT}`, '--heartbeat-seconds', '1'], prefix: p0.prefix })
    nodes.push(bootstrap)
  })
  after(async () => {
    await Promise.all(nodes.map(async n => await n.stop('SIGTERM', 5_000)))
    await lab?.cleanup()
    await dir?.cleanup()
  })
  let k = 0
  return {
    lab: () => lab as NatLab,
    dir: () => (dir as { path: string }).path,
    start: async (role, pick) => {
      const l = lab as NatLab
      const host = pick(l)
      const publicHost = l.publicHosts.includes(host)
      const boot = (bootstrap as NodeProcess).addrs[0]
      assert.ok(boot?.includes('/tcp/'), `the bootstrap's address: ${(bootstrap as NodeProcess).addrs.join(', ')}`)
      const args = ['--listen', `/ip4/0.0.0.0/tcp/${PORT}`, ...(publicHost ? ['--announce', `/ip4/${host.address}/tcp/${PORT}`] : []), '--heartbeat-seconds', '1', '--bootstrap', boot]
      const extra = role === 'provider' ? ['--runner', 'process', '--simulate-gpu', 'H100:80', '--region', 'eu-west', '--price-floor', '1.00'] : []
      const node = await spawnNode(role, { dataDir: join((dir as { path: string }).path, `${role}-${k++}`), args: [...args, ...extra], prefix: host.prefix })
      nodes.push(node)
      return node
    }
  }
}

interface DirectPathCounts { asked: { direct: number, failed: number }, served: { direct: number, failed: number, refused: number } }

/** A running node's status (`idlegrid status --json`, over its control socket). */
async function statusOf (node: NodeProcess): Promise<{ directPath: DirectPathCounts, reachability: { how: string, via?: string, addrs: string[] } }> {
  return await new Promise((resolve, reject) => {
    execFile(process.execPath, [BIN_PATH, 'status', '--json', '--data-dir', node.dataDir], { timeout: 30_000 }, (err, out) => {
      if (err != null) { reject(err); return }
      resolve(JSON.parse(out))
    })
  })
}

async function trade (net: ReturnType<typeof useNatNetwork>, provider: (l: NatLab) => LabHost, renter: (l: NatLab) => LabHost, ready?: (provider: NodeProcess) => Promise<void>): Promise<{ got: Submitted, provider: NodeProcess, paths: { renter: DirectPathCounts, provider: DirectPathCounts } }> {
  const p = await net.start('provider', provider)
  const r = await net.start('renter', renter)
  try {
    await ready?.(p)
    const got = await submitJob(r.dataDir, net.dir(), 'job.yaml', ['--max-attempts', '1'])
    return { got, provider: p, paths: { renter: (await statusOf(r)).directPath, provider: (await statusOf(p)).directPath } }
  } finally {
    await Promise.all([p.stop('SIGTERM', 5_000), r.stop('SIGTERM', 5_000)])
  }
}

const said = (got: Submitted): string => `${JSON.stringify(got.summary).slice(0, 700)} ${got.stderr.slice(-400)}`

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
