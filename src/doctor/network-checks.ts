/**
 * Checks against the network: each bootstrap peer is dialled and pinged from a throw-away
 * peer (its own key in a temp dir, so a node running on the data directory is not disturbed),
 * and the clock is compared with the send times of the signed heartbeats it hears.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { multiaddr } from '@multiformats/multiaddr'
import { waitUntil, TimeoutError } from '../common/index.js'
import { missingBootstrap, resolveConfig, type NodeConfig } from '../config/index.js'
import { buildNode } from '../compose/index.js'
import { fail, ok, oneLine, warn, type CheckResult } from './check.js'
import type { PeerPresence } from '../node/index.js'

/** Beyond this, peers reject each other's heartbeats and ledger entries (MAX_CLOCK_SKEW_MS is 30 s). */
export const SKEW_LIMITS = { warnMs: 2_000, failMs: 10_000 } as const
const TIME_SYNC_FIX = 'turn on time sync: timedatectl set-ntp true (systemd-timesyncd or chrony)'

export interface NetworkCheckOptions {
  /** how long to listen for peers' heartbeats (default 12 s: one default heartbeat interval and gossip's join) */
  waitMs?: number
  /** per bootstrap peer: dial and ping bound (default 5 s) */
  dialTimeoutMs?: number
}

/** Reachability of every bootstrap peer, then clock skew from the heartbeats heard. */
export async function checkNetwork (config: NodeConfig, opts: NetworkCheckOptions = {}): Promise<CheckResult[]> {
  const missing = missingBootstrap(config)
  if (missing != null) return [warn('bootstrap-peers', missing.problem, missing.fix)]
  if (config.bootstrap.length === 0) return [ok('bootstrap-peers', 'a seed node with no other seeds configured')]
  const dir = await mkdtemp(join(tmpdir(), 'idlegrid-doctor-'))
  const probe = await buildNode(resolveConfig({
    role: 'renter',
    flags: { dataDir: dir, listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: config.bootstrap, privateAddresses: config.privateAddresses, heartbeatSeconds: 3600 }
  }))
  try {
    const results: CheckResult[] = []
    for (const addr of config.bootstrap) results.push(await checkPeer(probe, addr, opts.dialTimeoutMs ?? 5_000))
    const reached = results.some(r => r.status === 'ok')
    results.push(reached ? await checkClock(probe, opts.waitMs ?? 12_000) : warn('clock', 'not measured: no bootstrap peer answered', TIME_SYNC_FIX))
    return results
  } finally {
    await probe.stop()
    await rm(dir, { recursive: true, force: true })
  }
}

type Probe = Awaited<ReturnType<typeof buildNode>>

async function checkPeer (probe: Probe, addr: string, timeoutMs: number): Promise<CheckResult> {
  const id = `bootstrap ${addr}`
  try {
    const ma = multiaddr(addr)
    await probe.libp2p.dial(ma, { signal: AbortSignal.timeout(timeoutMs) })
    const rtt = await probe.libp2p.services.ping.ping(ma, { signal: AbortSignal.timeout(timeoutMs) })
    return ok(id, `reachable, round trip ${rtt} ms`)
  } catch (err: any) {
    const why = err?.name === 'TimeoutError' || err?.name === 'AbortError' ? `no answer within ${timeoutMs} ms` : oneLine(err?.message ?? err)
    return fail(id, `unreachable: ${why}`, 'check the address and peer id (the seed prints them at start), and that its port is open (firewall, NAT)')
  }
}

async function checkClock (probe: Probe, waitMs: number): Promise<CheckResult> {
  const heard = (): PeerPresence[] => probe.libp2p.services.heartbeats.presence()
  try {
    await waitUntil(() => heard().length > 0, { timeoutMs: waitMs, what: 'a peer heartbeat' })
  } catch (err) {
    if (!(err instanceof TimeoutError)) throw err
    return warn('clock', `not measured: no peer heartbeat heard within ${Math.round(waitMs / 1000)} s (a clock more than 30 s off makes them invalid)`,
      `${TIME_SYNC_FIX}; or wait longer: --wait-seconds 35 (seed nodes may beat every 30 s)`)
  }
  return judgeSkew(heard().map(p => ({ peerId: p.peerId, skewMs: p.sentAt - p.lastSeen })))
}

/**
 * Judges clock offsets (peer's send time minus our receive time: the peer's skew less the
 * delivery time) by their median, so one peer with a bad clock does not make ours look wrong.
 */
export function judgeSkew (samples: Array<{ peerId: string, skewMs: number }>): CheckResult {
  if (samples.length === 0) return warn('clock', 'not measured: no samples', TIME_SYNC_FIX)
  const sorted = samples.map(s => s.skewMs).sort((a, b) => a - b)
  const median = sorted[Math.floor(sorted.length / 2)]
  const text = `our clock is ${(Math.abs(median) / 1000).toFixed(1)} s ${median > 0 ? 'behind' : 'ahead of'} the median of ${samples.length} peer${samples.length === 1 ? '' : 's'}`
  if (Math.abs(median) > SKEW_LIMITS.failMs) return fail('clock', `${text} (peers reject times beyond 30 s)`, TIME_SYNC_FIX)
  if (Math.abs(median) > SKEW_LIMITS.warnMs) return warn('clock', text, TIME_SYNC_FIX)
  return ok('clock', text)
}
