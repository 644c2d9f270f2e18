/**
 * Checks of this machine: Node version, GPUs (nvidia-smi), the Docker engine and its NVIDIA
 * runtime, the data directory, free disk and free listen ports. Each tool is run with a time
 * bound and its path can be given, so tests point them at recorded outputs.
 */
import { execFile } from 'node:child_process'
import { access, constants, stat, statfs } from 'node:fs/promises'
import { createServer } from 'node:net'
import { dirname } from 'node:path'
import { multiaddr } from '@multiformats/multiaddr'
import { detectGpus, groupGpus } from '../capability/index.js'
import { fail, ok, oneLine, warn, type CheckResult } from './check.js'

export const MIN_NODE_MAJOR = 22

export function checkNodeVersion (version = process.versions.node): CheckResult {
  const major = Number(version.split('.')[0])
  if (major >= MIN_NODE_MAJOR) return ok('node', `Node ${version}`)
  return fail('node', `Node ${version} is older than ${MIN_NODE_MAJOR}`, 'run idlegrid through npx or ./idlegrid (the project\'s Node 22), or install Node 22')
}

export async function checkGpus (nvidiaSmi?: string): Promise<CheckResult> {
  try {
    const gpus = await detectGpus({ nvidiaSmi, timeoutMs: 10_000 })
    if (gpus.length === 0) return fail('gpu', 'nvidia-smi lists no GPUs', 'check the driver (nvidia-smi -L); a provider without GPUs does not start')
    const groups = groupGpus(gpus).map(g => `${g.count}x ${g.model}`).join(', ')
    const driver = gpus[0].driverVersion
    return ok('gpu', `${groups}${driver != null ? `, driver ${driver}` : ''}`)
  } catch (err: any) {
    return fail('gpu', oneLine(err?.message ?? err), 'install the NVIDIA driver (ubuntu-drivers install; reboot), or for development run the provider with --simulate-gpu MODEL:VRAM_GB')
  }
}

interface ToolResult { code: number | string | null, stdout: string, stderr: string }

async function runTool (bin: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 10_000): Promise<ToolResult> {
  return await new Promise(resolve => {
    execFile(bin, args, { env, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 256 * 1024, encoding: 'utf8' }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { killed?: boolean }) | null
      resolve({ code: e == null ? 0 : e.killed === true ? 'timeout' : (e.code ?? null), stdout: String(stdout), stderr: String(stderr) })
    })
  })
}

export interface DockerCheckOptions {
  /** the docker CLI (default docker on PATH) */
  docker?: string
  /** --docker-host / provider.dockerHost (default $DOCKER_HOST) */
  host?: string
}

/** The engine answers (docker version), and has the NVIDIA runtime (docker info's runtimes, or CDI). */
export async function checkDocker (opts: DockerCheckOptions = {}): Promise<CheckResult[]> {
  const bin = opts.docker ?? 'docker'
  const env = { ...process.env, ...(opts.host != null ? { DOCKER_HOST: opts.host } : {}) }
  const version = await runTool(bin, ['version', '--format', '{{.Server.Version}}'], env)
  if (version.code === 'ENOENT') {
    return [fail('docker', 'the docker CLI is not installed', 'apt-get install docker.io (jobs run in containers), or run the provider with --runner process')]
  }
  if (version.code !== 0) {
    const why = version.code === 'timeout' ? 'docker did not answer within 10 s' : oneLine(version.stderr) || oneLine(version.stdout) || `exit ${String(version.code)}`
    return [fail('docker', `the Docker engine does not answer: ${why}`, 'start it (systemctl start docker) and let this user reach it (usermod -aG docker $USER, or --docker-host)')]
  }
  const results = [ok('docker', `Docker engine ${oneLine(version.stdout)}${opts.host != null ? ` at ${opts.host}` : ''}`)]
  const info = await runTool(bin, ['info', '--format', '{{json .Runtimes}} {{json .CDISpecDirs}}'], env)
  const runtimes = info.code === 0 ? info.stdout : ''
  if (/"nvidia"/.test(runtimes)) results.push(ok('docker.gpu-runtime', 'the engine has the nvidia runtime'))
  else {
    results.push(warn('docker.gpu-runtime', info.code === 0 ? 'the engine has no nvidia runtime: containers cannot see the GPUs' : `docker info failed: ${oneLine(info.stderr)}`,
      'install nvidia-container-toolkit, then nvidia-ctk runtime configure --runtime=docker && systemctl restart docker'))
  }
  return results
}

/** The nearest existing directory at or above `path`. */
async function existingAncestor (path: string): Promise<string> {
  let dir = path
  for (;;) {
    try {
      await stat(dir)
      return dir
    } catch {
      const up = dirname(dir)
      if (up === dir) return dir
      dir = up
    }
  }
}

/**
 * The node's rule (identity/keystore.ts), checked without creating anything: a directory this user
 * owns that nobody else can write.
 */
export async function checkDataDir (dataDir: string): Promise<CheckResult> {
  let info
  try {
    info = await stat(dataDir)
  } catch (err: any) {
    if (err?.code !== 'ENOENT') return fail('data-dir', `${dataDir} cannot be read (${String(err?.code ?? err)})`, 'pick another --data-dir')
    const parent = await existingAncestor(dataDir)
    try {
      await access(parent, constants.W_OK)
      return ok('data-dir', `${dataDir} does not exist yet; it will be created (mode 700)`)
    } catch {
      return fail('data-dir', `${dataDir} does not exist and ${parent} is not writable by this user`, `create it: sudo install -d -m 700 -o $USER ${dataDir}`)
    }
  }
  if (!info.isDirectory()) return fail('data-dir', `${dataDir} is not a directory`, 'pick another --data-dir')
  const uid = process.getuid?.()
  if (uid != null && info.uid !== uid) return fail('data-dir', `${dataDir} is owned by uid ${info.uid}, not by this user (uid ${uid})`, `sudo chown ${uid} ${dataDir} && chmod 700 ${dataDir}, or another --data-dir`)
  const mode = info.mode & 0o777
  if ((mode & 0o022) !== 0) return fail('data-dir', `${dataDir} is group- or world-writable (mode ${mode.toString(8)}): the node refuses it`, `chmod 700 ${dataDir}`)
  try {
    await access(dataDir, constants.W_OK | constants.X_OK)
  } catch {
    return fail('data-dir', `${dataDir} is not writable by this user (mode ${mode.toString(8)})`, `chmod 700 ${dataDir}`)
  }
  return ok('data-dir', `${dataDir} (mode ${mode.toString(8)})`)
}

export interface DiskLimits { failBelowBytes: number, warnBelowBytes: number }

const GIB = 1024 ** 3
/** A provider's jobs reserve 4 GiB inputs + 4 GiB outputs each (disk budget default 16 GiB per GPU). */
export const DISK_LIMITS: Record<'provider' | 'other', DiskLimits> = {
  provider: { failBelowBytes: 8 * GIB, warnBelowBytes: 32 * GIB },
  other: { failBelowBytes: 256 * 1024 * 1024, warnBelowBytes: 2 * GIB }
}

export async function checkDisk (dataDir: string, limits: DiskLimits): Promise<CheckResult> {
  const where = await existingAncestor(dataDir)
  let free: number
  try {
    const fs = await statfs(where)
    free = fs.bavail * fs.bsize
  } catch (err: any) {
    return warn('disk', `free space at ${where} unknown (${String(err?.code ?? err)})`, 'check with df -h')
  }
  const text = `${(free / GIB).toFixed(1)} GiB free at ${where}`
  if (free < limits.failBelowBytes) return fail('disk', `${text}, under ${(limits.failBelowBytes / GIB).toFixed(1)} GiB`, 'free space there or use a --data-dir (and --work-root) on a bigger disk')
  if (free < limits.warnBelowBytes) return warn('disk', `${text}, under ${(limits.warnBelowBytes / GIB).toFixed(1)} GiB`, 'free space or lower provider.diskBudgetGiB')
  return ok('disk', text)
}

/** Whether host:port can be bound now (closed at once). */
async function portFree (host: string, port: number): Promise<{ free: true } | { free: false, code: string }> {
  return await new Promise(resolve => {
    const server = createServer()
    server.once('error', (err: NodeJS.ErrnoException) => { resolve({ free: false, code: err.code ?? String(err) }) })
    server.listen({ host, port, exclusive: true }, () => { server.close(() => { resolve({ free: true }) }) })
  })
}

/**
 * Each fixed TCP listen port (port 0 = any) can be bound; `nodeRunning`: a node on this data dir
 * holds them, which is fine.
 */
export async function checkListenPorts (listen: string[], nodeRunning: boolean): Promise<CheckResult> {
  const fixed = listen.map(a => multiaddr(a)).flatMap(m => {
    try {
      const { host, port } = m.toOptions()
      return m.toString().includes('/tcp/') && port !== 0 ? [{ text: m.toString(), host, port }] : []
    } catch {
      return []
    }
  })
  if (fixed.length === 0) return ok('ports', 'listen ports are chosen by the system (tcp/0)')
  if (nodeRunning) return ok('ports', `a node is running on this data directory and holds ${fixed.map(f => f.port).join(', ')}`)
  const busy: string[] = []
  for (const f of fixed) {
    const r = await portFree(f.host, f.port)
    if (!r.free) busy.push(`${f.text} (${r.code})`)
  }
  if (busy.length > 0) return fail('ports', `cannot listen on ${busy.join(', ')}`, 'stop what holds the port (ss -ltnp) or pick another --listen port')
  return ok('ports', `free: ${fixed.map(f => f.text).join(', ')}`)
}
