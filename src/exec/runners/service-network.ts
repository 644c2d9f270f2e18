/**
 * A service lease's own Docker network: created `--internal` (the engine gives it no gateway
 * out and, where it manages the firewall, drops whatever would leave it), one per lease so a
 * lease never reaches another's port, with a bridge named here so that, where this provider
 * may (root), forwarding is also turned off on it. That second guard matters on an engine
 * started without its own firewall rules (`--iptables=false`, as scripts/docker-engine.sh
 * does): there an internal network's containers still get a default route through the host,
 * which would forward their packets to other networks and beyond.
 */
import { randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { ExecError } from '../errors.js'
import { dockerCall } from './docker-client.js'
import type { JobLauncher } from './launcher.js'
import type { ServiceEndpoint, ServiceNetwork } from './types.js'

/** Prefix of every lease network's name (and `igs` of its bridge's). */
export const SERVICE_NETWORK_PREFIX = 'idlegrid-svc-'

export interface EngineAccess { docker: string, env: Record<string, string>, launcher?: JobLauncher }

/** Makes a lease's network; throws ExecError ERR_RUNNER with the engine's words when it cannot. */
export async function createServiceNetwork (
  engine: EngineAccess,
  jobId: string,
  owner?: string
): Promise<ServiceNetwork> {
  const tag = randomBytes(6).toString('hex')
  const name = `${SERVICE_NETWORK_PREFIX}${jobId.slice(0, 16)}-${tag}`
  // Linux interface names are at most 15 characters
  const bridge = `igs${tag}`
  const made = await dockerCall(engine.docker, ['network', 'create', '--internal', '--driver', 'bridge',
    '--opt', `com.docker.network.bridge.name=${bridge}`, '--label', `idlegrid.lease=${jobId}`,
    ...(owner != null ? ['--label', `idlegrid.owner=${owner}`] : []), name], engine.env, engine.launcher)
  if (made.code !== 0) throw new ExecError('ERR_RUNNER', `could not make the service's network: ${made.stderr.trim().slice(0, 300) || `docker exited ${made.code}`}`)
  await noForwarding(bridge)
  return {
    name,
    remove: async () => { await dockerCall(engine.docker, ['network', 'rm', name], engine.env, engine.launcher) }
  }
}

/**
 * Turns IPv4 forwarding off for packets that arrive on `bridge`; without the right to, the engine's
 * own isolation is what holds.
 */
async function noForwarding (bridge: string): Promise<boolean> {
  try {
    await writeFile(`/proc/sys/net/ipv4/conf/${bridge}/forwarding`, '0')
    return true
  } catch {
    return false
  }
}

/** The address of container `name` on `network` (docker inspect), once the engine has given it one. */
export async function containerAddress (
  engine: EngineAccess,
  name: string,
  network: string
): Promise<string | undefined> {
  const r = await dockerCall(engine.docker, ['inspect', '--type', 'container', '--format', '{{json .NetworkSettings.Networks}}', name], engine.env, engine.launcher)
  if (r.code !== 0) return undefined
  try {
    const networks = JSON.parse(r.stdout) as Record<string, { IPAddress?: unknown }>
    const ip = networks[network]?.IPAddress
    return typeof ip === 'string' && /^\d{1,3}(\.\d{1,3}){3}$/.test(ip) ? ip : undefined
  } catch {
    return undefined
  }
}

export interface ServiceLookup {
  /** the service's container */
  name: string
  /** the lease's network */
  network: string
  port: number
  tries?: number
  intervalMs?: number
  /** true once the run ended: no address will come */
  stopped?: () => boolean
}

/**
 * Asks the engine for the service's address until it has one (the container is starting), bounded
 * in tries and time.
 */
export async function serviceEndpoint (engine: EngineAccess, opts: ServiceLookup): Promise<ServiceEndpoint> {
  const { name, network, port } = opts
  const tries = opts.tries ?? 60
  for (let i = 0; i < tries && opts.stopped?.() !== true; i++) {
    const host = await containerAddress(engine, name, network)
    if (host != null) return { host, port }
    await new Promise(resolve => setTimeout(resolve, opts.intervalMs ?? 250))
  }
  throw new ExecError('ERR_RUNNER', `the service's container had no address on ${network}`)
}

/**
 * Removes the containers and lease networks labelled with `owner` (what an earlier run of this
 * provider left when it died without cleaning up); bounded by the client calls' own time limit.
 */
export async function sweepOwner (
  engine: EngineAccess,
  owner: string
): Promise<{ containers: number, networks: number }> {
  const filter = ['--filter', `label=idlegrid.owner=${owner}`]
  const ids = (r: { code: number, stdout: string }): string[] => r.code === 0 ? r.stdout.split('\n').map(l => l.trim()).filter(l => l !== '').slice(0, 1000) : []
  const containers = ids(await dockerCall(engine.docker, ['ps', '-aq', ...filter], engine.env, engine.launcher))
  if (containers.length > 0) await dockerCall(engine.docker, ['rm', '--force', '--volumes', ...containers], engine.env, engine.launcher)
  const networks = ids(await dockerCall(engine.docker, ['network', 'ls', '-q', ...filter], engine.env, engine.launcher))
  if (networks.length > 0) await dockerCall(engine.docker, ['network', 'rm', ...networks], engine.env, engine.launcher)
  return { containers: containers.length, networks: networks.length }
}
