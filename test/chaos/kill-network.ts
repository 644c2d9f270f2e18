/**
 * Helpers for the kill specs (issue 19 item 3): a process network whose nodes can be killed
 * and started again from the same data directory, job files for it, `idlegrid submit` as a
 * child that can itself be killed, and looks at what a provider runs (its `exec.jobs` records
 * and the job processes in /proc).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { sleep } from '../../src/common/index.js'
import { callControl } from '../../src/control/index.js'
import { BIN_PATH, spawnNode, startLocalNetwork, waitForMesh, type LocalNetwork, type NodeProcess } from '../utils/index.js'

/** Arguments of every node: loopback only, a heartbeat a second. */
export const COMMON_ARGS = ['--listen', '/ip4/127.0.0.1/tcp/0', '--heartbeat-seconds', '1']

/** Providers with the process runner on simulated GPUs, cheapest first, a short SIGTERM grace. */
export function providerArgs (index: number): string[] {
  return ['--runner', 'process', '--simulate-gpu', 'H100:80', '--region', 'eu-west', '--price-floor', String(1 + index), '--grace', '2']
}

export interface KillNetwork {
  net: LocalNetwork
  /** live nodes by role, replaced in place when one is restarted */
  providers: NodeProcess[]
  renter: NodeProcess
  bootstrap: NodeProcess
  /** starts provider `index` again from its data directory (after a kill) */
  restartProvider(index: number): Promise<NodeProcess>
  restartRenter(): Promise<NodeProcess>
  /** starts the bootstrap again from its data directory on the port it had */
  restartBootstrap(): Promise<NodeProcess>
  stop(): Promise<void>
}

function alive (node: NodeProcess): boolean {
  return node.child.exitCode == null && node.child.signalCode == null
}

/** A bootstrap, `providers` providers and one renter as processes, meshed. */
export async function startKillNetwork (baseDir: string, providers: number): Promise<KillNetwork> {
  const net = await startLocalNetwork({ baseDir, providers, renters: 1, providerArgs })
  const view = await waitForMesh(net.all, 120_000)
  if (!view.complete) {
    await net.stop()
    throw new Error(`mesh incomplete:\n${view.missing.join('\n')}`)
  }
  const bootAddr = net.bootstrap.addrs[0]
  const bootPort = /\/tcp\/(\d+)\//.exec(bootAddr)?.[1]
  const peerArgs = [...COMMON_ARGS, '--bootstrap', bootAddr]
  const self: KillNetwork = {
    net,
    providers: [...net.providers],
    renter: net.renters[0],
    bootstrap: net.bootstrap,
    restartProvider: async (index) => {
      const node = await spawnNode('provider', { dataDir: self.providers[index].dataDir, args: [...peerArgs, ...providerArgs(index)] })
      self.providers[index] = node
      return node
    },
    restartRenter: async () => {
      self.renter = await spawnNode('renter', { dataDir: self.renter.dataDir, args: peerArgs })
      return self.renter
    },
    restartBootstrap: async () => {
      if (bootPort == null) throw new Error(`no port in ${bootAddr}`)
      self.bootstrap = await spawnNode('bootstrap', {
        dataDir: self.bootstrap.dataDir,
        args: ['--listen', `/ip4/127.0.0.1/tcp/${bootPort}`, '--heartbeat-seconds', '1']
      })
      return self.bootstrap
    },
    stop: async () => {
      await Promise.all([self.bootstrap, ...self.providers, self.renter].filter(alive).map(async n => await n.stop()))
    }
  }
  return self
}

/** Writes words.txt and a job file `name`.yaml running `script` under /bin/sh; returns the file name. */
export async function writeJob (dir: string, name: string, script: string): Promise<string> {
  await writeFile(join(dir, 'words.txt'), 'hello idlegrid\n')
  const file = `${name}.yaml`
  await writeFile(join(dir, file), [
    `name: ${name}`, 'tier: silver', 'workload: evaluation',
    'runtime:', `  command: [/bin/sh, -c, ${JSON.stringify(script)}]`,
    'inputs: [words.txt]', 'estimatedMinutes: 1',
    'auction:', '  bidWindowMs: 700', '  acceptTimeoutMs: 3000'
  ].join('\n') + '\n')
  return file
}

export interface SubmitChild {
  child: ChildProcess
  /** the last JSON summary line and the exit code, once the command ended */
  done: Promise<{ code: number | null, signal: NodeJS.Signals | null, summary: Record<string, any>, stderr: string }>
}

/** `idlegrid submit FILE --json` against the renter at `dataDir`, as a child that can be killed. */
export function spawnSubmit (dataDir: string, cwd: string, jobFile: string): SubmitChild {
  const child = spawn(process.execPath, [BIN_PATH, 'submit', jobFile, '--json', '--data-dir', dataDir], {
    cwd, env: { ...process.env, IDLEGRID_BOOTSTRAP: '', IDLEGRID_DATA_DIR: '' }, stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout?.setEncoding('utf8').on('data', (d: string) => { stdout = (stdout + d).slice(-256 * 1024) })
  child.stderr?.setEncoding('utf8').on('data', (d: string) => { stderr = (stderr + d).slice(-64 * 1024) })
  const timer = setTimeout(() => child.kill('SIGKILL'), 240_000)
  const done = new Promise<{
    code: number | null
    signal: NodeJS.Signals | null
    summary: Record<string, any>
    stderr: string
  }>(resolve => {
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      const lines = stdout.trim().split('\n').filter(l => l.startsWith('{'))
      let summary: Record<string, any> = {}
      try { summary = JSON.parse(lines[lines.length - 1] ?? '{}') } catch {}
      resolve({ code, signal, summary, stderr })
    })
  })
  return { child, done }
}

export interface ProviderJob { state: string, jobId: string, status?: string, renter: string }

/** The provider's attempt records (`exec.jobs`); empty when it does not answer. */
export async function providerJobs (provider: NodeProcess): Promise<ProviderJob[]> {
  if (!alive(provider)) return []
  const view = await callControl(provider.dataDir, 'exec.jobs', {}, { timeoutMs: 5_000 }).catch(() => undefined) as { jobs: ProviderJob[] } | undefined
  return view?.jobs ?? []
}

/** The first live provider with a job running, if any. */
export async function runningOn (providers: NodeProcess[]): Promise<NodeProcess | undefined> {
  for (const p of providers) {
    if ((await providerJobs(p)).some(j => j.state === 'running')) return p
  }
  return undefined
}

/** Pids of live processes whose command line contains `marker` (the job's /bin/sh carries its script). */
export function processesWith (marker: string): number[] {
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
      if (state === 'Z' || state === 'X') continue
      if (readFileSync(`/proc/${name}/cmdline`).includes(marker)) found.push(Number(name))
    } catch {} // gone between the listing and the read
  }
  return found
}

/** Waits a random 0 to `maxMs` ms: where a kill lands, not a wait for something to happen. */
export async function sleepRandom (maxMs: number): Promise<void> {
  await sleep(Math.floor(Math.random() * maxMs))
}
