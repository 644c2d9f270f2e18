/**
 * NAT benchmark (issue 37 item 6): `idlegrid` processes in the NAT lab (test/lab/nat-lab.ts),
 * a bootstrap on the public segment relaying with `relay.unlimited` (so a job with no direct
 * path still completes, and its relay cost can be measured), nobody forwarding a port.
 *
 * - pairs: one provider and one renter per row (public–public, EIM–EIM, UPnP-router–EIM,
 *   symmetric–EIM), NAT_BENCH_JOBS jobs each (default 3), every job shipping an
 *   NAT_BENCH_INPUT_MIB input (default 8) and getting it back as output. Per row: jobs
 *   completed, submit → first bid (median), and where the bytes went: the renter's traffic on its
 *   router's WAN port (its eth0 when public) against what the relay's host received in the same
 *   time. "direct share" is 1 − relay bytes / renter bytes, so it counts every byte the relay
 *   saw (heartbeats and DHT of every node included) against the direct path: a floor. The
 *   relay's CPU (its process, /proc) and bytes per job, for the relayed row.
 * - scale: NAT_BENCH_PROVIDERS NAT'd providers (default 20: most behind EIM routers, two behind
 *   UPnP routers, two behind symmetric NATs) and NAT_BENCH_RENTERS NAT'd renters (default 5),
 *   each renter submitting NAT_BENCH_SCALE_JOBS jobs (default 2) at once with the others: how
 *   many complete, and how many took a direct path.
 *
 * Needs root, nftables and miniupnpd (as the lab); elsewhere it reports why it skipped.
 */
import { randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { submitJob, type Submitted } from '../exec/fixtures.js'
import { createNatLab, natLabUnavailable, type LabHost, type NatKind } from '../lab/nat-lab.js'
import { inNamespace } from '../lab/namespaces.js'
import { statusOf, type LabStatus } from '../lab/nat-network.js'
import { spawnNode, tempDir, waitFor, type NodeProcess } from '../utils/index.js'
import { threadCpuMs } from './process-usage.js'
import { percentile } from './stats.js'

const PORT = 4001
const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback)

function jobFile (): string {
  return [
    'name: nat-bench', 'tier: silver', 'workload: evaluation',
    'runtime:', '  command: [/bin/sh, -c, "cp inputs/big.bin outputs/big.bin"]',
    'inputs: [big.bin]', 'estimatedMinutes: 1',
    'auction:', '  bidWindowMs: 1500', '  acceptTimeoutMs: 5000'
  ].join('\n') + '\n'
}

/** Bytes received and sent on `dev` in namespace `ns` (/proc/net/dev). */
async function ifBytes (ns: string, dev: string): Promise<number> {
  const text = await inNamespace(ns, 'cat', ['/proc/net/dev'])
  const line = text.split('\n').find(l => l.trim().startsWith(`${dev}:`))
  if (line == null) throw new Error(`no ${dev} in ${ns}`)
  const fields = line.slice(line.indexOf(':') + 1).trim().split(/\s+/).map(Number)
  return fields[0] + fields[8]
}

async function rxBytes (ns: string, dev: string): Promise<number> {
  const text = await inNamespace(ns, 'cat', ['/proc/net/dev'])
  const line = text.split('\n').find(l => l.trim().startsWith(`${dev}:`)) ?? ''
  return Number(line.slice(line.indexOf(':') + 1).trim().split(/\s+/)[0])
}

const cpuMs = (pid: number): number => [...threadCpuMs(pid).values()].reduce((a, b) => a + b, 0)

const directPathOf = async (node: NodeProcess): Promise<LabStatus['directPath']> => (await statusOf(node)).directPath

/** The job's shard (no residency, no VRAM floor): a renter is ready once it is connected and knows a peer on it. */
const SHARD = '/idlegrid/3/jobs/any/vram-0'

async function marketReady (node: NodeProcess): Promise<void> {
  await waitFor(async () => {
    const s = await statusOf(node)
    return s.peers.length > 0 && (s.topics[SHARD]?.length ?? 0) > 0
  }, { timeoutMs: 120_000, intervalMs: 1_000, what: `${node.role} connected and on the job shard` })
}

export default async function natBench (): Promise<Record<string, unknown>> {
  const why = natLabUnavailable({ upnp: true })
  if (why != null) return { skipped: why }
  const jobsPerPair = env('NAT_BENCH_JOBS', 3)
  const inputMib = env('NAT_BENCH_INPUT_MIB', 8)
  const providers = env('NAT_BENCH_PROVIDERS', 20)
  const renters = env('NAT_BENCH_RENTERS', 5)
  const scaleJobs = env('NAT_BENCH_SCALE_JOBS', 2)
  const scaleKinds: NatKind[] = Array.from({ length: providers }, (_, i) => i < 2 ? 'upnp' : i < 4 ? 'symmetric' : 'eim')
  const pairHomes: NatKind[] = ['eim', 'eim', 'upnp', 'symmetric']
  const lab = await createNatLab({
    publicHosts: 3,
    homes: [...pairHomes, ...scaleKinds, ...Array<NatKind>(renters).fill('eim')].map(nat => ({ nat, hosts: 1 }))
  })
  const dir = await tempDir('idlegrid-nat-bench-')
  const nodes: NodeProcess[] = []
  try {
    await writeFile(join(dir.path, 'big.bin'), randomBytes(inputMib * 1024 * 1024))
    await writeFile(join(dir.path, 'job.yaml'), jobFile())
    await writeFile(join(dir.path, 'relay.yaml'), 'relay:\n  unlimited: true\n')
    const p0 = lab.publicHosts[0]
    const bootstrap = await spawnNode('bootstrap', { dataDir: join(dir.path, 'bootstrap'), args: ['--config', join(dir.path, 'relay.yaml'), '--listen', `/ip4/${p0.address}/tcp/${PORT}`, '--announce', `/ip4/${p0.address}/tcp/${PORT}`], prefix: p0.prefix })
    nodes.push(bootstrap)
    let k = 0
    const start = async (role: 'provider' | 'renter', host: LabHost): Promise<NodeProcess> => {
      const isPublic = lab.publicHosts.includes(host)
      const args = ['--listen', `/ip4/0.0.0.0/tcp/${PORT}`, ...(isPublic ? ['--announce', `/ip4/${host.address}/tcp/${PORT}`] : []), '--bootstrap', bootstrap.addrs[0]]
      const extra = role === 'provider' ? ['--runner', 'process', '--simulate-gpu', 'H100:80', '--region', 'eu-west', '--price-floor', '1.00'] : []
      const node = await spawnNode(role, { dataDir: join(dir.path, `${role}-${k++}`), args: [...args, ...extra], prefix: host.prefix, readyTimeoutMs: 60_000 })
      nodes.push(node)
      return node
    }
    /** every provider heard on the shard by the bootstrap (the job's way to it), and reachable from outside */
    const providersJoined = async (list: NodeProcess[]): Promise<void> => {
      await waitFor(async () => {
        const subscribers = (await statusOf(bootstrap)).topics[SHARD] ?? []
        return list.every(p => subscribers.includes(p.peerId))
      }, { timeoutMs: 180_000, intervalMs: 2_000, what: 'every provider on the job shard' })
      for (const p of list) {
        await waitFor(async () => ['direct', 'relayed'].includes((await statusOf(p)).reachability.how), { timeoutMs: 120_000, intervalMs: 2_000, what: `provider ${p.peerId} reachable` })
      }
    }
    const stop = async (list: NodeProcess[]): Promise<void> => {
      await Promise.all(list.map(async n => { await n.stop('SIGTERM', 5_000); nodes.splice(nodes.indexOf(n), 1) }))
    }
    /** the renter's side of the wire: its router's WAN port, or its own eth0 when public */
    const trafficOf = (host: LabHost): { ns: string, dev: string } => {
      const home = lab.homes.find(h => h.hosts.includes(host))
      return home != null ? { ns: home.router.ns, dev: 'wan' } : { ns: host.ns, dev: 'eth0' }
    }

    const pairs: Array<[string, LabHost, LabHost]> = [
      ['public-public', lab.publicHosts[1], lab.publicHosts[2]],
      ['eim-eim', lab.homes[1].hosts[0], lab.homes[0].hosts[0]],
      ['upnp-eim', lab.homes[2].hosts[0], lab.homes[0].hosts[0]],
      ['symmetric-eim', lab.homes[3].hosts[0], lab.homes[0].hosts[0]]
    ]
    const rows: Array<Record<string, unknown>> = []
    for (const [name, providerHost, renterHost] of pairs) {
      const provider = await start('provider', providerHost)
      const renter = await start('renter', renterHost)
      // both joined before the clock starts: the figure is submit to first bid, not a node's start
      await providersJoined([provider])
      await marketReady(renter)
      const wire = trafficOf(renterHost)
      const firstBids: number[] = []
      let completed = 0
      let renterBytes = 0
      let relayBytes = 0
      let relayCpu = 0
      const details: string[] = []
      for (let j = 0; j < jobsPerPair; j++) {
        const before = { renter: await ifBytes(wire.ns, wire.dev), relay: await rxBytes(p0.ns, 'eth0'), cpu: cpuMs(bootstrap.child.pid as number) }
        const got: Submitted = await submitJob(renter.dataDir, dir.path, 'job.yaml', ['--max-attempts', '1'])
        renterBytes += await ifBytes(wire.ns, wire.dev) - before.renter
        relayBytes += await rxBytes(p0.ns, 'eth0') - before.relay
        relayCpu += cpuMs(bootstrap.child.pid as number) - before.cpu
        if (got.summary.status === 'ok') completed++
        else details.push(String(got.summary.history?.[0]?.detail ?? got.summary.status ?? got.stderr.slice(-200)))
        if (typeof got.summary.firstBidMs === 'number') firstBids.push(got.summary.firstBidMs)
      }
      const paths = await directPathOf(renter)
      firstBids.sort((a, b) => a - b)
      rows.push({
        pair: `${name} (provider-renter)`,
        completed: `${completed}/${jobsPerPair}`,
        firstBidMsMedian: firstBids.length > 0 ? percentile(firstBids, 50) : null,
        renterMiBPerJob: +(renterBytes / jobsPerPair / 2 ** 20).toFixed(2),
        relayRxMiBPerJob: +(relayBytes / jobsPerPair / 2 ** 20).toFixed(2),
        directShareFloor: renterBytes > 0 ? +Math.max(0, 1 - relayBytes / renterBytes).toFixed(3) : null,
        relayCpuMsPerJob: Math.round(relayCpu / jobsPerPair),
        directPaths: { ...paths.asked, ...(paths.lastFailure != null ? { lastFailure: paths.lastFailure } : {}) },
        ...(details.length > 0 ? { failures: details.slice(0, 3) } : {})
      })
      await stop([provider, renter])
    }

    // scale: every provider and renter behind NAT at once
    const started = Date.now()
    const scaleProviders: NodeProcess[] = []
    for (let i = 0; i < providers; i += 5) {
      scaleProviders.push(...await Promise.all(lab.homes.slice(4 + i, 4 + Math.min(i + 5, providers)).map(async h => await start('provider', h.hosts[0]))))
    }
    const scaleRenters = await Promise.all(lab.homes.slice(4 + providers, 4 + providers + renters).map(async h => await start('renter', h.hosts[0])))
    await providersJoined(scaleProviders)
    await Promise.all(scaleRenters.map(marketReady))
    const startedMs = Date.now() - started
    const submitted = Date.now()
    const results = (await Promise.all(scaleRenters.map(async r => await Promise.all(Array.from({ length: scaleJobs }, async () => await submitJob(r.dataDir, dir.path, 'job.yaml', ['--max-attempts', '3'], 300_000)))))).flat()
    const jobsMs = Date.now() - submitted
    const counts = await Promise.all(scaleRenters.map(directPathOf))
    const scale = {
      providers: `${providers} (${scaleKinds.filter(k => k === 'eim').length} EIM, ${scaleKinds.filter(k => k === 'upnp').length} UPnP router, ${scaleKinds.filter(k => k === 'symmetric').length} symmetric)`,
      renters: `${renters} (EIM)`,
      completed: `${results.filter(r => r.summary.status === 'ok').length}/${results.length}`,
      attempts: results.reduce((a, r) => a + Number(r.summary.attempts ?? 0), 0),
      directPathsMade: counts.reduce((a, c) => a + c.asked.direct, 0),
      directPathsFailed: counts.reduce((a, c) => a + c.asked.failed, 0),
      lastPathFailures: counts.flatMap(c => c.lastFailure != null ? [c.lastFailure] : []).slice(0, 3),
      startS: Math.round(startedMs / 1000),
      jobsWallS: Math.round(jobsMs / 1000),
      failures: results.filter(r => r.summary.status !== 'ok').map(r => `${String(r.summary.status)}: ${String(r.summary.history?.at(-1)?.detail ?? r.summary.detail ?? r.stderr.slice(-200))}`).slice(0, 3)
    }
    const natNat = rows.filter(r => String(r.pair).startsWith('eim-eim') || String(r.pair).startsWith('upnp-eim') || String(r.pair).startsWith('symmetric-eim'))
    return {
      inputMiB: inputMib,
      jobsPerPair,
      pairs: rows,
      natToNatCompleted: `${natNat.reduce((a, r) => a + Number(String(r.completed).split('/')[0]), 0)}/${natNat.length * jobsPerPair}`,
      firstBidMs: { publicPublic: rows[0].firstBidMsMedian, eimEim: rows[1].firstBidMsMedian },
      scale
    }
  } finally {
    await Promise.all(nodes.map(async n => await n.stop('SIGTERM', 5_000)))
    await lab.cleanup()
    await dir.cleanup()
  }
}
