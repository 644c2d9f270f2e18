/**
 * Network namespaces a test makes and removes itself, for the labs (nat-lab.ts, and
 * test/chaos/partition-lab.ts). Everything a lab builds lives inside namespaces of its own:
 * bridges too, in a "switch" namespace, so the host's firewall never sees a lab packet (on a
 * host where a stock Docker engine set the FORWARD policy to DROP with bridge netfilter on, a
 * bridge on the host dropped every frame between lab hosts). Names carry a random tag so runs
 * never collide; `cleanup` ends the processes started inside and deletes the namespaces (their
 * links and bridges go with them); a process exit hook does it too if the spec dies first.
 * Needs root (CAP_NET_ADMIN) and iproute2.
 */
import { execFile, execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** Runs one `ip` command on the host (10 s bound). */
export async function ip (...args: string[]): Promise<void> {
  await run('ip', args, { timeout: 10_000 })
}

/** Runs a command inside namespace `ns`; resolves with its stdout. */
export async function inNamespace (
  ns: string,
  cmd: string,
  args: string[],
  opts: { input?: string } = {}
): Promise<string> {
  if (opts.input == null) return (await run('ip', ['netns', 'exec', ns, cmd, ...args], { timeout: 10_000 })).stdout
  return execFileSync('ip', ['netns', 'exec', ns, cmd, ...args], { input: opts.input, timeout: 10_000, encoding: 'utf8' })
}

/** Why this host cannot run a lab (not root, no iproute2), or undefined when it can try. */
export function labUnavailable (): string | undefined {
  if (process.getuid?.() !== 0) return 'network namespaces need root'
  try {
    execFileSync('ip', ['-V'], { stdio: 'ignore' })
  } catch {
    return 'iproute2 (ip) is not installed'
  }
  return undefined
}

/** The namespaces of one lab: made with `add`, all removed by `cleanup`. */
export class Namespaces {
  /** a short random tag in every name: interface names are at most 15 bytes */
  readonly tag = randomBytes(3).toString('hex')
  private readonly made: string[] = []
  private cleaned = false
  private readonly cleanupSync = (): void => {
    if (this.cleaned) return
    this.cleaned = true
    for (const ns of this.made) {
      for (const pid of pidsIn(ns)) { try { process.kill(pid, 'SIGKILL') } catch {} }
      try { execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore' }) } catch {}
    }
  }

  constructor () {
    process.once('exit', this.cleanupSync)
  }

  /** the full name of the lab's namespace `name` */
  name (name: string): string {
    return `ig-${this.tag}-${name}`
  }

  /** every namespace made so far */
  get all (): readonly string[] {
    return this.made
  }

  /** Makes namespace `name` with its loopback up; returns its full name. */
  async add (name: string): Promise<string> {
    const ns = this.name(name)
    await ip('netns', 'add', ns)
    this.made.push(ns)
    await ip('-n', ns, 'link', 'set', 'lo', 'up')
    return ns
  }

  /** Ends every process inside the lab's namespaces (SIGKILL) and deletes them. Idempotent. */
  async cleanup (): Promise<void> {
    if (this.cleaned) return
    this.cleaned = true
    process.off('exit', this.cleanupSync)
    for (const ns of this.made) {
      for (const pid of pidsIn(ns)) { try { process.kill(pid, 'SIGKILL') } catch {} }
      // deleting a namespace deletes its veth ends (and so the pairs) and its bridges
      await ip('netns', 'del', ns).catch(() => {})
    }
  }
}

/** The processes running inside namespace `ns` (all started by the lab or its spec). */
function pidsIn (ns: string): number[] {
  try {
    return execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number).filter(p => p !== process.pid)
  } catch {
    return []
  }
}

/** Makes a bridge named `bridge` inside namespace `ns`, up. */
export async function addBridge (ns: string, bridge: string): Promise<void> {
  await ip('-n', ns, 'link', 'add', bridge, 'type', 'bridge')
  await ip('-n', ns, 'link', 'set', bridge, 'up')
}

/**
 * Links namespace `ns` to `bridge` in namespace `switchNs` by a veth pair: `ifname` inside `ns`
 * with `address` (CIDR), `port` on the bridge side.
 */
export async function plug (opts: {
  ns: string
  ifname: string
  address: string
  switchNs: string
  bridge: string
  port: string
}): Promise<void> {
  // made in the switch namespace, then one end moved: no link ever exists on the host
  await ip('-n', opts.switchNs, 'link', 'add', opts.port, 'type', 'veth', 'peer', 'name', opts.ifname, 'netns', opts.ns)
  await ip('-n', opts.switchNs, 'link', 'set', opts.port, 'master', opts.bridge)
  await ip('-n', opts.switchNs, 'link', 'set', opts.port, 'up')
  await ip('-n', opts.ns, 'addr', 'add', opts.address, 'dev', opts.ifname)
  await ip('-n', opts.ns, 'link', 'set', opts.ifname, 'up')
}
