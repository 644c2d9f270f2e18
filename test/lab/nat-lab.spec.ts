/**
 * The NAT lab itself (issue 37 item 1), checked with plain TCP before any node runs in it:
 * home hosts reach the public segment and are seen there as their router; nothing unsolicited
 * gets in; the endpoint-independent router keeps a local port's mapping for every peer (so two
 * hosts behind such routers can open a TCP connection to each other at once) and the symmetric
 * one does not; the UPnP router maps a port on request; cleanup leaves nothing behind.
 * Needs root, iproute2, nftables and miniupnpd; elsewhere it skips and says why.
 */
import { strict as assert } from 'node:assert'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createNatLab, natLabUnavailable, type LabHost, type NatLab } from './nat-lab.js'

const run = promisify(execFile)
const PROBE = fileURLToPath(new URL('./probe.js', import.meta.url))
const PORT = 4500

/** Runs the probe on `host`; resolves with its output's first line, or rejects with its error. */
async function probe (host: LabHost, ...args: Array<string | number>): Promise<string> {
  const [cmd, ...prefix] = host.prefix
  const { stdout } = await run(cmd, [...prefix, process.execPath, PROBE, ...args.map(String)], { timeout: 15_000 })
  return stdout.trim()
}

async function fails (p: Promise<unknown>): Promise<boolean> {
  try { await p; return false } catch { return true }
}

describe('NAT lab (network namespaces)', function () {
  this.timeout(120_000)
  let lab: NatLab | undefined
  const servers: ChildProcess[] = []

  /** Starts a probe server on `host` at `port`; resolves once it listens. */
  async function serve (host: LabHost, port: number): Promise<void> {
    const [cmd, ...prefix] = host.prefix
    const child = spawn(cmd, [...prefix, process.execPath, PROBE, 'serve', String(port)], { stdio: ['ignore', 'pipe', 'inherit'] })
    servers.push(child)
    await new Promise<void>((resolve, reject) => {
      child.stdout?.once('data', () => { resolve() })
      child.once('exit', (code) => { reject(new Error(`probe server on ${host.address}:${port} exited (${String(code)})`)) })
    })
  }

  before(async function () {
    const why = natLabUnavailable({ upnp: true })
    if (why != null) {
      console.log(`    (skipped: ${why})`)
      this.skip()
    }
    lab = await createNatLab({ publicHosts: 2, homes: [{ nat: 'eim', hosts: 1 }, { nat: 'upnp', hosts: 1 }, { nat: 'symmetric', hosts: 1 }, { nat: 'eim', hosts: 1 }] })
    for (const p of lab.publicHosts) await serve(p, PORT)
    for (const home of lab.homes) await serve(home.hosts[0], PORT)
  })

  after(async () => {
    for (const s of servers) s.kill('SIGKILL')
    await lab?.cleanup()
  })

  it('a home host reaches the public segment and is seen there as its router\'s public address', async () => {
    const l = lab as NatLab
    for (const home of l.homes) {
      const seen = await probe(home.hosts[0], 'connect', l.publicHosts[0].address, PORT)
      assert.equal(seen.split(':')[0], home.router.wan, `${home.nat}: translated to the router's address`)
    }
  })

  it('puts no link on the host: the host\'s firewall (a FORWARD policy of DROP, bridge netfilter) never sees a lab frame', async () => {
    const l = lab as NatLab
    const { stdout } = await run('ip', ['-o', 'link', 'show'])
    const hostLinks = stdout.split('\n').map(line => line.split(': ')[1]?.split('@')[0]).filter(Boolean)
    assert.ok(hostLinks.length > 0)
    const inSwitch = (await run('ip', ['-n', l.homes[0].router.ns.replace(/r0$/, 'sw'), '-o', 'link', 'show'])).stdout
    for (const port of ['inet', 'p0', 'p1', 'r0', 'r1']) {
      assert.ok(inSwitch.includes(`: ${port}`), `${port} is in the lab's switch namespace`)
      assert.ok(!hostLinks.includes(port), `${port} is not on the host`)
    }
  })

  it('drops unsolicited inbound connections: a public host cannot reach a home host\'s server', async () => {
    const l = lab as NatLab
    await Promise.all(l.homes.map(async home => {
      assert.ok(await fails(probe(l.publicHosts[0], 'connect', home.router.wan, PORT)), `${home.nat}: the router's port ${PORT} is closed`)
      assert.ok(await fails(probe(l.publicHosts[0], 'connect', home.hosts[0].address, PORT)), `${home.nat}: the LAN address is not routed`)
    }))
  })

  it('endpoint-independent NAT keeps a local port\'s public port for every peer; symmetric NAT does not', async () => {
    const l = lab as NatLab
    const [p0, p1] = l.publicHosts
    const mapped = async (host: LabHost, local: number): Promise<number[]> => [
      Number((await probe(host, 'connect', p0.address, PORT, local)).split(':')[1]),
      Number((await probe(host, 'connect', p1.address, PORT, local)).split(':')[1])
    ]
    const eim = await mapped(l.homes[0].hosts[0], 40_001)
    assert.deepEqual(eim, [40_001, 40_001], 'eim: the same public port (the local one) towards both peers')
    const symmetric = await mapped(l.homes[2].hosts[0], 40_002)
    assert.notEqual(symmetric[0], symmetric[1], `symmetric: a different public port per peer (${symmetric.join(', ')})`)
  })

  it('two hosts behind endpoint-independent NATs open a TCP connection to each other at once (simultaneous open)', async () => {
    const l = lab as NatLab
    const [a, b] = [l.homes[0], l.homes[3]]
    const local = 40_100
    // each knows the other's public address and port (the local port, kept by its NAT)
    const both = await Promise.all([
      probe(a.hosts[0], 'punch', b.router.wan, local, local),
      probe(b.hosts[0], 'punch', a.router.wan, local, local)
    ])
    assert.deepEqual(both, ['connected', 'connected'])
    // and an outsider still cannot use that hole
    assert.ok(await fails(probe(l.publicHosts[1], 'connect', a.router.wan, local)), 'the hole is for the peer only')
  })

  it('the UPnP router maps a port a LAN host asks for (NAT-PMP), and a public host reaches the home server through it', async () => {
    const l = lab as NatLab
    const home = l.homes[1]
    const port = Number(await probe(home.hosts[0], 'natpmp', home.router.lan, PORT))
    assert.ok(port > 0, `a public port (${port})`)
    const seen = await probe(l.publicHosts[0], 'connect', home.router.wan, port)
    assert.equal(seen.split(':')[0], l.publicHosts[0].address, 'the home server answered the public host')
    // the other routers run no gateway service
    assert.ok(await fails(probe(l.homes[0].hosts[0], 'natpmp', l.homes[0].router.lan, PORT)), 'no NAT-PMP on the plain router')
  })

  it('cleanup ends the lab\'s processes and removes every namespace', async () => {
    const l = lab as NatLab
    const before = (await run('ip', ['netns', 'list'])).stdout
    const ours = before.split('\n').map(line => line.split(' ')[0]).filter(ns => ns.startsWith(l.homes[0].router.ns.slice(0, 10)))
    assert.ok(ours.length >= 4 + 2 + 4 + 1, `the lab's namespaces exist (${ours.length})`)
    const inRouter = (await run('ip', ['netns', 'pids', l.homes[1].router.ns])).stdout.split('\n').filter(Boolean).map(Number)
    assert.ok(inRouter.length > 0, 'miniupnpd runs in the UPnP router')
    for (const s of servers) s.kill('SIGKILL')
    await l.cleanup()
    const after = (await run('ip', ['netns', 'list'])).stdout
    for (const ns of ours) assert.ok(!after.includes(ns), `${ns} removed`)
    const alive = (pid: number): boolean => { try { process.kill(pid, 0); return true } catch { return false } }
    await new Promise(resolve => setTimeout(resolve, 200))
    assert.deepEqual(inRouter.filter(alive), [], 'no process of the lab left')
  })
})
