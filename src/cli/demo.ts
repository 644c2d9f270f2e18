import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startLocalNetwork, waitForMesh, type LocalNetwork } from './local-network.js'
import { shortId, type Output } from './output.js'

export interface DemoOptions {
  providers: number
  keep: boolean
  /** bound on the wait for every node to find every other */
  meshTimeoutMs?: number
}

export interface DemoSummary {
  ok: boolean
  nodes: Array<{ role: string, peerId: string, addrs: string[] }>
  /** ms from the first process start until every node knew every other */
  meshMs: number | null
  missing: string[]
  heartbeatsAccepted: number
  exitCodes: Array<number | null>
  dataDir: string
  kept: boolean
}

/**
 * The whole network on this machine: a bootstrap node, providers and a renter as separate
 * processes on 127.0.0.1 in a temporary data directory. It shows them find each other
 * (DHT, gossip topics, signed heartbeats), then stops them all and removes the directory.
 */
export async function runDemo (opts: DemoOptions, out: Output): Promise<DemoSummary> {
  const baseDir = await mkdtemp(join(tmpdir(), 'idlegrid-demo-'))
  const started = Date.now()
  out.info(`starting a bootstrap node, ${opts.providers} providers and a renter on 127.0.0.1 (data in ${baseDir})`)
  let network: LocalNetwork | undefined
  let interrupted = false
  const onSignal = (): void => { interrupted = true }
  process.once('SIGINT', onSignal)
  try {
    network = await startLocalNetwork({ baseDir, providers: opts.providers, renters: 1, heartbeatSeconds: 1 })
    for (const node of network.all) out.info(`  ${node.role.padEnd(9)} ${node.peerId}  ${node.addrs[0]}`)
    out.info('waiting for every node to find every other (DHT routing tables, gossip topics, signed heartbeats)…')
    let lastMissing = -1
    const view = await waitForMesh(network.all, opts.meshTimeoutMs ?? 30_000, (v) => {
      if (v.missing.length !== lastMissing) out.info(`  ${v.missing.length} links still missing`)
      lastMissing = v.missing.length
    })
    const meshMs = view.complete ? Date.now() - started : null
    if (view.complete) {
      out.info(`all ${network.all.length} nodes found each other in ${((meshMs ?? 0) / 1000).toFixed(1)} s`)
      for (const s of view.statuses) {
        out.info(`  ${s.role.padEnd(9)} ${shortId(s.peerId)}: ${s.peers.length} connections, ${s.routingTable.length} in routing table, heard ${s.heard.map(h => `${h.role} ${shortId(h.peerId)}`).join(', ')}`)
      }
    } else {
      out.warn(`the nodes did not all find each other in time:\n  ${view.missing.slice(0, 10).join('\n  ')}`)
    }
    const heartbeatsAccepted = view.statuses.reduce((sum, s) => sum + Object.values(s.gossip['/idlegrid/1/heartbeats'] ?? {}).reduce((a, b) => a + b, 0), 0)
    const nodes = network.all.map(n => ({ role: n.role, peerId: n.peerId, addrs: n.addrs }))
    if (opts.keep && !interrupted) {
      out.info('\nthe network keeps running (--keep). Talk to it with, for example:')
      out.info(`  idlegrid status --data-dir ${network.renters[0].dataDir}`)
      out.info(`  idlegrid renter --bootstrap ${network.bootstrap.addrs[0]}`)
      out.info(`stop it with: kill ${network.all.map(n => n.child.pid).join(' ')}; rm -rf ${baseDir}`)
      for (const n of network.all) { n.child.unref(); n.child.stdout?.destroy(); n.child.stderr?.destroy() }
      return { ok: view.complete, nodes, meshMs, missing: view.missing, heartbeatsAccepted, exitCodes: [], dataDir: baseDir, kept: true }
    }
    out.info('stopping every node…')
    const exitCodes = await network.stop()
    network = undefined
    const clean = exitCodes.every(c => c === 0)
    out.info(clean ? `all ${exitCodes.length} processes exited cleanly` : `exit codes: ${exitCodes.join(', ')}`)
    return { ok: view.complete && clean, nodes, meshMs, missing: view.missing, heartbeatsAccepted, exitCodes, dataDir: baseDir, kept: false }
  } finally {
    process.off('SIGINT', onSignal)
    if (network != null && !opts.keep) await network.stop()
    if (!opts.keep) await rm(baseDir, { recursive: true, force: true })
  }
}
