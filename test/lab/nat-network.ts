/**
 * The NAT lab as the market specs use it (issue 37): `idlegrid` processes in network namespaces
 * (nat-lab.ts), a bootstrap relay (or several) on the public segment, providers and renters
 * started on the hosts a spec picks; `trade` runs one job between them and reads both nodes'
 * direct-path counters.
 */
import { strict as assert } from 'node:assert'
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { BIN_PATH, spawnNode, tempDir, waitFor, type NodeProcess } from '../utils/index.js'
import { isJobShardTopic } from '../../protocols/ids.js'
import { submitJob, type Submitted } from '../exec/fixtures.js'
import { createNatLab, natLabUnavailable, type LabHost, type NatLab } from './nat-lab.js'

export const PORT = 4001

function jobFile (name: string): string {
  return [
    `name: ${name}`, 'tier: silver', 'workload: evaluation',
    'runtime:', '  command: [/bin/sh, -c, "tr a-z A-Z < inputs/words.txt > outputs/upper.txt"]',
    'inputs: [words.txt]', 'estimatedMinutes: 1',
    'auction:', '  bidWindowMs: 1500', '  acceptTimeoutMs: 5000'
  ].join('\n') + '\n'
}

export interface NatNetwork {
  /** `announce: false`: a public host gives no --announce (its address is confirmed by AutoNAT) */
  start: (role: 'provider' | 'renter', host: (l: NatLab) => LabHost, opts?: { announce?: boolean }) => Promise<NodeProcess>
  lab: () => NatLab
  dir: () => string
  /** the bootstraps, each a relay, on publicHosts[0], [1] … */
  relays: () => NodeProcess[]
}

/**
 * Registers hooks that build a lab with `relays` bootstraps (each a relay, with `relayConfig`
 * as its config file; default one), four EIM homes, a symmetric one (homes[4]) and one whose
 * router offers UPnP (homes[5]). Public hosts: the relays', then two more.
 */
export function useNatNetwork (relayConfig: string, opts: { relays?: number } = {}): NatNetwork {
  const relayCount = opts.relays ?? 1
  let lab: NatLab | undefined
  let dir: { path: string, cleanup: () => Promise<void> } | undefined
  const bootstraps: NodeProcess[] = []
  const nodes: NodeProcess[] = []
  before(async function () {
    const why = natLabUnavailable({ upnp: true })
    if (why != null) {
      console.log(`    (skipped: ${why})`)
      this.skip()
    }
    lab = await createNatLab({ publicHosts: relayCount + 2, homes: [{ nat: 'eim', hosts: 1 }, { nat: 'eim', hosts: 1 }, { nat: 'eim', hosts: 1 }, { nat: 'eim', hosts: 1 }, { nat: 'symmetric', hosts: 1 }, { nat: 'upnp', hosts: 1 }] })
    dir = await tempDir('idlegrid-nat-market-')
    await writeFile(join(dir.path, 'words.txt'), 'hello idlegrid\n')
    await writeFile(join(dir.path, 'job.yaml'), jobFile('nat'))
    await writeFile(join(dir.path, 'relay.yaml'), relayConfig)
    for (let i = 0; i < relayCount; i++) {
      const host = lab.publicHosts[i]
      // a public node's listen address is announced only once verified (libp2p 2): the operator says it
      const node = await spawnNode('bootstrap', { dataDir: join(dir.path, `bootstrap-${i}`), args: ['--config', join(dir.path, 'relay.yaml'), '--listen', `/ip4/${host.address}/tcp/${PORT}`, '--announce', `/ip4/${host.address}/tcp/${PORT}`, '--heartbeat-seconds', '1', ...bootstraps.flatMap(b => ['--bootstrap', b.addrs[0]])], prefix: host.prefix })
      bootstraps.push(node)
      nodes.push(node)
    }
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
    relays: () => bootstraps,
    start: async (role, pick, opts = {}) => {
      const l = lab as NatLab
      const host = pick(l)
      const publicHost = l.publicHosts.includes(host)
      const boot = bootstraps.map(b => b.addrs[0])
      assert.ok(boot.every(a => a?.includes('/tcp/')), `the bootstraps' addresses: ${bootstraps.map(b => b.addrs.join(', ')).join('; ')}`)
      const args = ['--listen', `/ip4/0.0.0.0/tcp/${PORT}`, ...(publicHost && opts.announce !== false ? ['--announce', `/ip4/${host.address}/tcp/${PORT}`] : []), '--heartbeat-seconds', '1', ...boot.flatMap(a => ['--bootstrap', a])]
      const extra = role === 'provider' ? ['--runner', 'process', '--simulate-gpu', 'H100:80', '--region', 'eu-west', '--price-floor', '1.00'] : []
      const node = await spawnNode(role, { dataDir: join((dir as { path: string }).path, `${role}-${k++}`), args: [...args, ...extra], prefix: host.prefix })
      nodes.push(node)
      return node
    }
  }
}

export interface DirectPathCounts {
  asked: { direct: number, failed: number }
  served: { direct: number, failed: number, refused: number }
  lastFailure?: string
}

export interface LabStatus {
  directPath: DirectPathCounts
  reachability: { how: string, via?: string, addrs: string[] }
  peers: Array<{ peerId: string }>
  topics: Record<string, string[]>
}

/** A running node's status (`idlegrid status --json`, over its control socket). */
export async function statusOf (node: NodeProcess): Promise<LabStatus> {
  return await new Promise((resolve, reject) => {
    execFile(process.execPath, [BIN_PATH, 'status', '--json', '--data-dir', node.dataDir], { timeout: 30_000 }, (err, out) => {
      if (err != null) { reject(err); return }
      resolve(JSON.parse(out))
    })
  })
}

/**
 * Waits until a job of `renter` can reach `provider` and its bid can come back: both can be
 * reached from outside (a public, mapped or relayed address; a job published before the renter
 * holds a relay slot names no address a NAT'd provider can dial), and each relay in `relays`
 * has heard the provider join a job shard and is connected to the renter (the job travels
 * renter → relay → provider). A node process that just printed its addresses is still joining:
 * on a loaded machine, seconds more.
 */
export async function readyToTrade (
  provider: NodeProcess,
  renter: NodeProcess,
  relays: NodeProcess[],
  timeoutMs = 60_000
): Promise<void> {
  const reachable = (s: LabStatus): boolean => s.reachability.how === 'direct' || s.reachability.how === 'relayed'
  await waitFor(async () => {
    const [p, r, ...rs] = await Promise.all([provider, renter, ...relays].map(statusOf))
    return reachable(p) && reachable(r) && rs.every(s =>
      Object.entries(s.topics).some(([t, subs]) => isJobShardTopic(t) && subs.includes(provider.peerId)) &&
      s.peers.some(x => x.peerId === renter.peerId))
  }, { timeoutMs, intervalMs: 1_000, what: `the ${provider.role} and the ${renter.role} joined the market through ${relays.length} relay(s)` })
}

export async function trade (
  net: NatNetwork,
  provider: (l: NatLab) => LabHost,
  renter: (l: NatLab) => LabHost,
  ready?: (provider: NodeProcess) => Promise<void>,
  providerOpts?: { announce?: boolean }
): Promise<{
  got: Submitted
  provider: NodeProcess
  paths: { renter: DirectPathCounts, provider: DirectPathCounts }
}> {
  const p = await net.start('provider', provider, providerOpts)
  const r = await net.start('renter', renter)
  try {
    await ready?.(p)
    await readyToTrade(p, r, net.relays())
    const got = await submitJob(r.dataDir, net.dir(), 'job.yaml', ['--max-attempts', '1'])
    return {
      got,
      provider: p,
      paths: { renter: (await statusOf(r)).directPath, provider: (await statusOf(p)).directPath }
    }
  } finally {
    await Promise.all([p.stop('SIGTERM', 5_000), r.stop('SIGTERM', 5_000)])
  }
}

export const said = (got: Submitted): string => `${JSON.stringify(got.summary).slice(0, 700)} ${got.stderr.slice(-400)}`
