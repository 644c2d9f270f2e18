/**
 * A local network of idlegrid nodes on 127.0.0.1: a bootstrap node, then providers and
 * renters pointed at it, each a real `idlegrid <role>` process (the demo plays on it, the
 * end-to-end tests too), and the bounded wait until the nodes have found each other. The
 * shape, the options and the mesh check are shared with the in-process variant in
 * test/utils/network.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sleep } from '../common/index.js'
import { callControl } from '../control/index.js'
import type { Role } from '../config/index.js'
import type { NodeStatus } from '../node/index.js'

/** The `idlegrid` entry point, run with the current Node (so children get Node 22 too). */
export const BIN_PATH = fileURLToPath(new URL('../cli/bin.js', import.meta.url))

/** Pause between two looks at the mesh. */
const MESH_POLL_MS = 250

/** What the mesh check needs of a node, whether a process or in this process. */
export interface MeshNode {
  readonly role: Role
  /** the node's status (a process answers on its control socket) */
  status(): Promise<NodeStatus>
}

/** A network's nodes by role, bootstrap first in `all`. */
export interface NetworkNodes<T> {
  bootstrap: T
  providers: T[]
  renters: T[]
  /** bootstrap, providers, renters */
  all: T[]
}

/** How many nodes of each role a local network has, and their heartbeat period. */
export interface NetworkShape {
  providers: number
  /** default 1 */
  renters?: number
  /** default 1 */
  heartbeatSeconds?: number
}

export interface NodeProcess extends MeshNode {
  role: Role
  dataDir: string
  peerId: string
  addrs: string[]
  child: ChildProcess
  /** everything the process wrote to stderr so far */
  stderr(): string
  /** sends `signal` and waits (bounded) for the exit; resolves with the exit code (null if killed by a signal) */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>
}

export interface SpawnOptions {
  dataDir: string
  args?: string[]
  env?: NodeJS.ProcessEnv
  readyTimeoutMs?: number
  /** a command the node runs under, e.g. ['ip', 'netns', 'exec', NAME] (it must exec the node, so signals reach it) */
  prefix?: string[]
}

const live = new Set<ChildProcess>()
let exitHookInstalled = false

/** Children must not outlive us, even when we crash. */
function installExitHook (): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.on('exit', () => { for (const child of live) child.kill('SIGKILL') })
}

/** Starts `idlegrid <role> --json` as a child process and waits for its ready line. */
export async function spawnNode (role: Role, opts: SpawnOptions): Promise<NodeProcess> {
  installExitHook()
  const args = [BIN_PATH, role, '--json', '--data-dir', opts.dataDir, ...(opts.args ?? [])]
  const env = { ...process.env, IDLEGRID_BOOTSTRAP: '', IDLEGRID_DATA_DIR: '', ...opts.env }
  const [command, ...commandArgs] = [...(opts.prefix ?? []), process.execPath, ...args]
  const child = spawn(command, commandArgs, { env, stdio: ['ignore', 'pipe', 'pipe'] })
  live.add(child)
  let stderr = ''
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { stderr = (stderr + chunk).slice(-64 * 1024) })
  const exited = new Promise<number | null>(resolve => child.once('exit', (code) => { live.delete(child); resolve(code) }))
  const ready = await new Promise<{ peerId: string, addrs: string[] }>((resolve, reject) => {
    const timeoutMs = opts.readyTimeoutMs ?? 30_000
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${role} did not become ready within ${timeoutMs} ms: ${stderr.trim()}`)) }, timeoutMs)
    let buffer = ''
    const onData = (chunk: string): void => {
      buffer += chunk
      for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
        const line = buffer.slice(0, at)
        buffer = buffer.slice(at + 1)
        try {
          const value = JSON.parse(line)
          if (typeof value?.peerId === 'string' && Array.isArray(value.addrs)) {
            clearTimeout(timer)
            child.stdout?.off('data', onData)
            child.stdout?.resume()
            resolve(value)
            return
          }
        } catch {}
      }
    }
    child.stdout?.setEncoding('utf8').on('data', onData)
    void exited.then(code => { clearTimeout(timer); reject(new Error(`${role} exited with code ${String(code)} before it was ready: ${stderr.trim()}`)) })
  })
  return {
    role,
    dataDir: opts.dataDir,
    peerId: ready.peerId,
    addrs: ready.addrs,
    child,
    status: async () => await callControl(opts.dataDir, 'status', {}, { timeoutMs: 5_000 }) as NodeStatus,
    stderr: () => stderr,
    stop: async (signal = 'SIGTERM', timeoutMs = 15_000) => {
      if (child.exitCode != null || child.signalCode != null) return child.exitCode
      child.kill(signal)
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
      const code = await exited
      clearTimeout(timer)
      return code
    }
  }
}

export interface LocalNetwork extends NetworkNodes<NodeProcess> {
  /** SIGTERMs every process; resolves with their exit codes in `all` order */
  stop(): Promise<Array<number | null>>
}

export interface LocalNetworkOptions extends NetworkShape {
  /** each node's data directory goes under it (bootstrap, provider-N, renter-N) */
  baseDir: string
  /**
   * extra arguments per provider index; default DEFAULT_PROVIDER_ARGS (a provider needs a
   * policy and GPUs: simulated ones on machines without NVIDIA GPUs)
   */
  providerArgs?: (index: number) => string[]
  renterArgs?: (index: number) => string[]
  /** extra arguments of the bootstrap */
  bootstrapArgs?: string[]
}

/** Policy and simulated GPUs for local providers given no arguments of their own. */
export const DEFAULT_PROVIDER_ARGS: readonly string[] = ['--simulate-gpu', 'H100:80', '--region', 'eu-west', '--price-floor', '1.00']

/** A bootstrap node, then providers and renters pointed at it, all on 127.0.0.1. */
export async function startLocalNetwork (opts: LocalNetworkOptions): Promise<LocalNetwork> {
  const common = ['--listen', '/ip4/127.0.0.1/tcp/0', '--heartbeat-seconds', String(opts.heartbeatSeconds ?? 1)]
  const started: NodeProcess[] = []
  try {
    const bootstrap = await spawnNode('bootstrap', { dataDir: join(opts.baseDir, 'bootstrap'), args: [...common, ...(opts.bootstrapArgs ?? [])] })
    started.push(bootstrap)
    const peerArgs = [...common, '--bootstrap', bootstrap.addrs[0]]
    // providers and renters start together: each process spends its first second loading code
    const providersStarting = Promise.all(Array.from({ length: opts.providers }, async (_, i) => {
      const node = await spawnNode('provider', { dataDir: join(opts.baseDir, `provider-${i + 1}`), args: [...peerArgs, ...(opts.providerArgs?.(i) ?? DEFAULT_PROVIDER_ARGS)] })
      started.push(node)
      return node
    }))
    const rentersStarting = Promise.all(Array.from({ length: opts.renters ?? 1 }, async (_, i) => {
      const node = await spawnNode('renter', { dataDir: join(opts.baseDir, `renter-${i + 1}`), args: [...peerArgs, ...(opts.renterArgs?.(i) ?? [])] })
      started.push(node)
      return node
    }))
    const [providers, renters] = await Promise.all([providersStarting, rentersStarting])
    const all = [bootstrap, ...providers, ...renters]
    return {
      bootstrap,
      providers,
      renters,
      all,
      stop: async () => await Promise.all(all.map(async n => await n.stop()))
    }
  } catch (err) {
    await Promise.all(started.map(async n => await n.stop('SIGKILL')))
    throw err
  }
}

export interface MeshView {
  /** true when every node knows every other: DHT routing tables, connections, heartbeats heard */
  complete: boolean
  /** what is still missing, one line per gap */
  missing: string[]
  statuses: NodeStatus[]
}

/** Which pairs must know each other; by default every pair. */
export type LinkFilter<T extends MeshNode = MeshNode> = (a: T, b: T) => boolean

export interface MeshCriteria<T extends MeshNode = MeshNode> {
  /** the pairs checked (default all) */
  needed?: LinkFilter<T>
  /** also require DHT servers in each other's routing tables (default true) */
  routing?: boolean
}

/** Asks every node for its status and checks that each has found all the others (or the pairs `needed` names). */
export async function inspectMesh<T extends MeshNode> (nodes: T[], criteria: MeshCriteria<T> = {}): Promise<MeshView> {
  const needed = criteria.needed ?? (() => true)
  const statuses = await Promise.all(nodes.map(async n => await n.status()))
  const missing: string[] = []
  const servers = new Set(statuses.filter(s => s.dhtMode === 'server').map(s => s.peerId))
  for (const [i, s] of statuses.entries()) {
    for (const [j, other] of statuses.entries()) {
      if (other.peerId === s.peerId || !needed(nodes[i], nodes[j])) continue
      const label = `${s.role} ${s.peerId.slice(-6)} → ${other.role} ${other.peerId.slice(-6)}`
      // DHT servers keep servers in their routing tables; client-mode renters are never added
      if (criteria.routing !== false && servers.has(other.peerId) && !s.routingTable.includes(other.peerId)) missing.push(`${label}: not in DHT routing table`)
      // heartbeats travel on the heartbeat stream to connected peers (the global topic is off): a
      // heartbeat heard means connected, identified, and the peer's streams answered
      if (!s.peers.some(p => p.peerId === other.peerId)) missing.push(`${label}: not connected`)
      if (!s.heard.some(h => h.peerId === other.peerId)) missing.push(`${label}: no heartbeat received`)
    }
  }
  return { complete: missing.length === 0, missing, statuses }
}

/** Polls inspectMesh until complete or `timeoutMs` passes; resolves with the last view either way. */
export async function waitForMesh<T extends MeshNode> (
  nodes: T[],
  timeoutMs: number,
  onProgress?: (view: MeshView) => void,
  criteria?: MeshCriteria<T>
): Promise<MeshView> {
  const deadline = Date.now() + timeoutMs
  let view = await inspectMesh(nodes, criteria)
  while (!view.complete && Date.now() < deadline) {
    onProgress?.(view)
    await sleep(Math.min(MESH_POLL_MS, Math.max(0, deadline - Date.now())))
    view = await inspectMesh(nodes, criteria)
  }
  return view
}
