/**
 * An emulated internet in network namespaces (issue 37): a public segment (one bridge in a
 * switch namespace) with public hosts on it, and home networks, each behind a Linux router
 * whose WAN side is on the public segment and whose LAN is a bridge of its own. The routers
 * drop every unsolicited inbound connection and translate outbound ones:
 *
 * - `eim`: endpoint-independent mapping (nftables `masquerade`, which keeps a connection's
 *   source port when it is free: one local port maps to one public port whatever the peer),
 *   address-and-port-dependent filtering (only replies get in). What most home routers do.
 * - `upnp`: the same, plus an Internet Gateway Device: Debian's `miniupnpd` (UPnP IGD and
 *   NAT-PMP) on the LAN, which maps a port a LAN host asks for.
 * - `symmetric`: endpoint-dependent mapping (`masquerade fully-random`: every connection a
 *   fresh random public port), as carrier-grade and some corporate NATs do.
 *
 * Public addresses are one per /8, as peers on the internet are: public host i is
 * <11 + i>.0.0.10 and home router k's WAN side <128 + k>.0.0.1, all on the one segment with an
 * on-link default route. AutoNAT counts one answer per /8 (its "network segment"), so with every
 * host in one /24 a single failed dial-back (a loaded CI runner's) left an address unconfirmed
 * for good. No address is in a block libp2p counts as private (the documentation blocks
 * TEST-NET-1..3 are), and the namespaces have no route to the real internet. Home LANs are
 * 192.168.<home>.0/24 with the router at .1. Built with ip(8) and nft(8); miniupnpd only for
 * an `upnp` home. Needs root; see labUnavailable() and natLabUnavailable().
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { addBridge, inNamespace, ip, labUnavailable, Namespaces, plug } from './namespaces.js'

export type NatKind = 'eim' | 'upnp' | 'symmetric'

export interface LabHost {
  /** the namespace the host's processes run in */
  readonly ns: string
  /** its address on its own segment (public, or its home LAN) */
  readonly address: string
  /** the command prefix that runs a process on this host */
  readonly prefix: string[]
}

export interface LabHome {
  readonly nat: NatKind
  /** the router's namespace, its public (WAN) address and its LAN address (the hosts' gateway) */
  readonly router: { ns: string, wan: string, lan: string }
  readonly hosts: LabHost[]
}

export interface NatLab {
  readonly publicHosts: LabHost[]
  readonly homes: LabHome[]
  /** Ends every process in the lab (miniupnpd and whatever a spec started) and removes it all. */
  cleanup(): Promise<void>
}

export interface NatLabOptions {
  /** hosts on the public segment (bootstraps, relays, public providers) */
  publicHosts: number
  /** home networks, each with its router's NAT and its number of hosts */
  homes: Array<{ nat: NatKind, hosts: number }>
}

/** first octets: public hosts 11 … 90, routers 128 … 177 (none of them a private or special block) */
const PUBLIC_FIRST_OCTET = 11
const ROUTER_FIRST_OCTET = 128
/** one switch holds every public port; a home's LAN bridge lives in its router */
const MAX_PUBLIC_HOSTS = 80
const MAX_HOMES = 50
const MAX_HOSTS_PER_HOME = 50

/** Why this host cannot build a NAT lab, or undefined. `upnp`: whether miniupnpd is needed too. */
export function natLabUnavailable (opts: { upnp?: boolean } = {}): string | undefined {
  const base = labUnavailable()
  if (base != null) return base
  const missing = (cmd: string, args: string[]): boolean => {
    try { execFileSync(cmd, args, { stdio: 'ignore' }); return false } catch { return true }
  }
  if (missing('nft', ['--version'])) return 'nftables (nft) is not installed'
  if (opts.upnp === true && missing('miniupnpd', ['--version'])) return 'miniupnpd is not installed (Debian: miniupnpd-nftables)'
  return undefined
}

/** Builds the lab; throws (after undoing what it made) if the host refuses. */
export async function createNatLab (opts: NatLabOptions): Promise<NatLab> {
  if (opts.publicHosts < 0 || opts.publicHosts > MAX_PUBLIC_HOSTS) throw new RangeError(`0 to ${MAX_PUBLIC_HOSTS} public hosts`)
  if (opts.homes.length > MAX_HOMES) throw new RangeError(`at most ${MAX_HOMES} homes`)
  if (opts.homes.some(h => h.hosts < 1 || h.hosts > MAX_HOSTS_PER_HOME)) throw new RangeError(`1 to ${MAX_HOSTS_PER_HOME} hosts per home`)
  const spaces = new Namespaces()
  const daemons: ChildProcess[] = []
  let workDir: string | undefined
  const cleanup = async (): Promise<void> => {
    for (const d of daemons) d.kill('SIGKILL')
    await spaces.cleanup()
    if (workDir != null) await rm(workDir, { recursive: true, force: true })
  }
  try {
    const sw = await spaces.add('sw')
    await addBridge(sw, 'inet')
    const publicHosts: LabHost[] = []
    for (let i = 0; i < opts.publicHosts; i++) {
      const ns = await spaces.add(`p${i}`)
      const address = `${PUBLIC_FIRST_OCTET + i}.0.0.10`
      await plug({ ns, ifname: 'eth0', address: `${address}/32`, switchNs: sw, bridge: 'inet', port: `p${i}` })
      await ip('-n', ns, 'route', 'add', 'default', 'dev', 'eth0')
      publicHosts.push({ ns, address, prefix: ['ip', 'netns', 'exec', ns] })
    }
    const homes: LabHome[] = []
    for (const [k, home] of opts.homes.entries()) {
      const router = await spaces.add(`r${k}`)
      const wan = `${ROUTER_FIRST_OCTET + k}.0.0.1`
      const lan = `192.168.${k + 1}.1`
      await plug({ ns: router, ifname: 'wan', address: `${wan}/32`, switchNs: sw, bridge: 'inet', port: `r${k}` })
      await ip('-n', router, 'route', 'add', 'default', 'dev', 'wan')
      await addBridge(router, 'lan')
      await ip('-n', router, 'addr', 'add', `${lan}/24`, 'dev', 'lan')
      await inNamespace(router, 'sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1'])
      await inNamespace(router, 'nft', ['-f', '-'], { input: routerRules(home.nat) })
      const hosts: LabHost[] = []
      for (let j = 0; j < home.hosts; j++) {
        const ns = await spaces.add(`h${k}x${j}`)
        const address = `192.168.${k + 1}.${10 + j}`
        await plug({ ns, ifname: 'eth0', address: `${address}/24`, switchNs: router, bridge: 'lan', port: `h${j}` })
        await ip('-n', ns, 'route', 'add', 'default', 'via', lan)
        hosts.push({ ns, address, prefix: ['ip', 'netns', 'exec', ns] })
      }
      if (home.nat === 'upnp') {
        workDir ??= await mkdtemp(join(tmpdir(), 'idlegrid-natlab-'))
        daemons.push(await startMiniupnpd(router, join(workDir, `r${k}`), `192.168.${k + 1}.0/24`))
      }
      homes.push({ nat: home.nat, router: { ns: router, wan, lan }, hosts })
    }
    return { publicHosts, homes, cleanup }
  } catch (err) {
    await cleanup()
    throw err
  }
}

/**
 * A home router's whole ruleset: forward only what the LAN starts and its replies (and, for
 * `upnp`, what miniupnpd's chains open), translate outbound. The chain names are the ones
 * miniupnpd's nftables backend fills (its defaults: table inet "filter").
 */
function routerRules (nat: NatKind): string {
  const masquerade = nat === 'symmetric' ? 'masquerade fully-random' : 'masquerade'
  return `
table inet filter {
  chain input {
    type filter hook input priority 0; policy accept;
    # dropped, not refused: a home router answers no stranger (a reset would also kill the
    # early SYN of a simultaneous open that arrives before the LAN host's own went out)
    iifname "wan" ct state new drop
  }
  chain forward {
    type filter hook forward priority 0; policy drop;
    ct state established,related accept
    iifname "lan" oifname "wan" accept
    jump miniupnpd
  }
  chain miniupnpd {
  }
  chain prerouting {
    type nat hook prerouting priority -100; policy accept;
    jump prerouting_miniupnpd
  }
  chain postrouting {
    type nat hook postrouting priority 100; policy accept;
    jump postrouting_miniupnpd
    oifname "wan" ${masquerade}
  }
  chain prerouting_miniupnpd {
  }
  chain postrouting_miniupnpd {
  }
}
`
}

/** Starts miniupnpd (UPnP IGD and NAT-PMP) in a router; resolves once it listens. */
async function startMiniupnpd (router: string, dir: string, lanNet: string): Promise<ChildProcess> {
  const conf = join(`${dir}.conf`)
  await writeFile(conf, [
    'ext_ifname=wan',
    'listening_ip=lan',
    'enable_natpmp=yes',
    'enable_upnp=yes',
    // LAN hosts map ports for themselves only, never below 1024
    'secure_mode=yes',
    `allow 1024-65535 ${lanNet} 1024-65535`,
    'deny 0-65535 0.0.0.0/0 0-65535',
    'upnp_table_name=filter',
    'upnp_nat_table_name=filter',
    'system_uptime=yes',
    'notify_interval=60',
    `uuid=${randomUUID()}`,
    ''
  ].join('\n'))
  // -d: in the foreground, logging to stderr; -P: a pid file of its own (not /run's, shared by every instance)
  const child = spawn('ip', ['netns', 'exec', router, 'miniupnpd', '-d', '-f', conf, '-P', `${dir}.pid`], { stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error(`miniupnpd did not start within 10 s: ${log.slice(-500)}`)) }, 10_000)
    child.stderr?.on('data', (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-4096)
      if (/HTTP listening on port|Listening for NAT-PMP/.test(log)) { clearTimeout(timer); resolve() }
    })
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`miniupnpd exited (${String(code)}): ${log.slice(-500)}`)) })
  })
  child.stderr?.resume()
  return child
}
