import { asEnum, asNumber } from '../../config/index.js'
import { EXIT, UsageError } from '../errors.js'
import { oneShot } from '../one-shot.js'
import { COMMON_OPTIONS, NODE_OPTIONS, type OptionTable, type ParsedValues } from '../options.js'
import { type Output } from '../output.js'
import { shortPeerId } from '../../common/index.js'
import { MAX_VERIFIER_THREADS } from '../../identity/index.js'
import type { EntryView, FlushResult, HeadView, LedgerBuildOptions, LedgerStatus, SyncReport } from '../../ledger/index.js'
import type { CommandDefinition } from '../command.js'

/** Ledger flags of the role commands (provider, renter, bootstrap). */
export const LEDGER_ROLE_OPTIONS: OptionTable = {
  'ledger-summary-seconds': { type: 'string', valueName: 'S', description: 'providers: seconds between heartbeat-summary ledger entries (default 3600)' },
  'dev-ledger-methods': { type: 'boolean', description: 'development: offer ledger.appendTestJob (signed test jobs from real keys) on the control socket' },
  'ledger-gossip': { type: 'boolean', description: 'also join the legacy ledger topic /idlegrid/5/ledger (off by default: entries travel by announcement and sync)' },
  'ledger-replicate': { type: 'string', valueName: 'all|bounded', description: 'which feeds the ledger syncs: every feed (all: a bootstrap\'s default), or only its own, its counterparties\', the providers it may award and theirs within 2 hops (bounded: a renter\'s and a provider\'s default; config ledger.replicate)' },
  'ledger-retain': { type: 'string', valueName: 'horizon|all', description: 'what the ledger keeps of other nodes\' feeds: the last 224 days (horizon, the default: older entries no longer weigh in reputation), or everything (all: a seed serving the whole history; config ledger.retain)' },
  'ledger-horizon': { type: 'string', valueName: 'N', description: 'hops of the bounded scope from the node, its seeds and the providers it may award (0–4, default 2; 1 bounds a renter\'s disk in a well-mixed market; config ledger.horizon)' },
  'ledger-verifier-threads': { type: 'string', valueName: 'N', description: 'worker threads that verify ledger signatures (0–16; 0: on the main thread; default a worker per core, up to 4; a provider may keep cores for its jobs; config ledger.verifierThreads)' }
}

/** The role command's ledger flags as build options. */
export function ledgerBuildOptions (values: ParsedValues): LedgerBuildOptions {
  const seconds = values['ledger-summary-seconds']
  return {
    devMethods: values['dev-ledger-methods'] === true,
    gossip: values['ledger-gossip'] === true,
    replicate: values['ledger-replicate'] === undefined ? undefined : asEnum(values['ledger-replicate'], 'ledger-replicate', ['all', 'bounded'] as const),
    retain: values['ledger-retain'] === undefined ? undefined : asEnum(values['ledger-retain'], 'ledger-retain', ['horizon', 'all'] as const),
    horizon: values['ledger-horizon'] === undefined ? undefined : asNumber(values['ledger-horizon'], 'ledger-horizon', { integer: true, min: 0, max: 4 }),
    verifierThreads: values['ledger-verifier-threads'] === undefined ? undefined : asNumber(values['ledger-verifier-threads'], 'ledger-verifier-threads', { integer: true, min: 0, max: MAX_VERIFIER_THREADS }),
    summaryIntervalMs: seconds === undefined ? undefined : Math.round(1000 * asNumber(seconds, 'ledger-summary-seconds', { min: 1, max: 7 * 24 * 3600 }))
  }
}

const SUBCOMMANDS = ['status', 'show', 'earnings', 'flush', 'sync'] as const

export const ledgerCommand: CommandDefinition = {
  name: 'ledger',
  usage: 'idlegrid ledger status | show PEER [--limit N] | earnings [PEER] | flush | sync [options]',
  allowPositionals: true,
  options: {
    ...NODE_OPTIONS,
    limit: { type: 'string', valueName: 'N', description: 'show: the last N entries (default 20, at most 256)' },
    wait: { type: 'string', valueName: 'S', description: 'a short-lived peer first syncs with its peers for up to S seconds (default 0: the local ledger as it is; flush/sync: 10)' },
    ...COMMON_OPTIONS
  },
  details: 'Talks to the node running on the data directory, or opens the ledger in a short-lived peer.\nflush waits until a peer holds this node\'s newest entries (exit 1 when none did).',
  run: async (values, positionals, out) => {
    const [sub, ...args] = positionals
    if (sub == null || !(SUBCOMMANDS as readonly string[]).includes(sub)) throw new UsageError(`idlegrid ledger: say one of ${SUBCOMMANDS.join(', ')} (see idlegrid ledger --help)`)
    const waitDefault = sub === 'flush' || sub === 'sync' ? 10 : 0
    const wait = asNumber(values.wait ?? waitDefault, 'wait', { min: 0, max: 120 })
    const settleMs = wait * 1000
    switch (sub) {
      case 'status': {
        const { via, result } = await oneShot('ledger.status', { sync: wait > 0, timeoutMs: Math.max(100, settleMs) }, values, { settleMs })
        const status = result as LedgerStatus
        out.data({ ...status, via })
        printStatus(status, via, out)
        return EXIT.ok
      }
      case 'show': {
        if (args.length !== 1) throw new UsageError('idlegrid ledger show: give one PEER id')
        const limit = asNumber(values.limit ?? 20, 'limit', { integer: true, min: 1, max: 256 })
        const { result } = await oneShot('ledger.show', { peer: args[0], limit }, values, { settleMs })
        const shown = result as { head?: HeadView, slashed: boolean, entries: EntryView[] }
        out.data({ peerId: args[0], ...shown })
        printShow(args[0], shown, out)
        return EXIT.ok
      }
      case 'earnings': {
        const { result } = await oneShot('ledger.earnings', args[0] == null ? {} : { peer: args[0] }, values, { settleMs })
        const e = result as {
          peerId: string
          paidJobs: number
          earnedMicroUsd: number
          jobHours: number
          availableHours: number
          fillRate: number
          busyShare: number
        }
        out.data(e)
        out.info(`earnings of ${e.peerId}: ${(e.earnedMicroUsd / 1e6).toFixed(2)} USD over ${e.paidJobs} paid jobs (${e.jobHours.toFixed(2)} GPU-h)`)
        out.info(`  fill rate ${(100 * e.fillRate).toFixed(1)}% of ${e.availableHours.toFixed(1)} advertised hours; slots busy ${(100 * e.busyShare).toFixed(1)}% of the time`)
        const svc = (
          result as { service?: { statements: number, earnedMicroUsd: number, requests: number, uptime: number } }
        ).service
        if (svc != null && svc.statements > 0) out.info(`  services: ${(svc.earnedMicroUsd / 1e6).toFixed(2)} USD from ${svc.statements} co-signed usage statements (${svc.requests} requests), uptime ${(100 * svc.uptime).toFixed(1)}%`)
        return EXIT.ok
      }
      case 'flush': {
        const { via, result } = await oneShot('ledger.flush', { timeoutMs: Math.max(1_000, settleMs) }, values, { settleMs: via0(settleMs), timeoutMs: settleMs + 30_000 })
        const flush = result as FlushResult
        out.data({ ...flush, via })
        if (flush.seq === 0) {
          out.info('this node has no ledger entries of its own: nothing to publish')
          return EXIT.ok
        }
        if (flush.acknowledged) out.info(`ledger entries 1..${flush.seq} are held by ${flush.by.map(shortPeerId).join(', ')}`)
        else {
          if (flush.acknowledgedSeq > 0) out.warn(`ledger entries 1..${flush.acknowledgedSeq} are held by ${flush.by.map(shortPeerId).join(', ')}; ${flush.acknowledgedSeq + 1}..${flush.seq} are not confirmed`)
          out.warn(flush.note ?? 'no peer confirmed holding this node\'s ledger entries')
        }
        return flush.acknowledged ? EXIT.ok : EXIT.failure
      }
      case 'sync': {
        const { result } = await oneShot('ledger.sync', { timeoutMs: Math.max(1_000, settleMs) }, values, { settleMs: via0(settleMs), timeoutMs: settleMs + 30_000 })
        const report = result as SyncReport
        out.data(report)
        out.info(`synced with ${report.peers} peers: ${report.pulled} new entries${report.errors.length > 0 ? `; ${report.errors.length} failed` : ''}`)
        for (const e of report.errors) out.warn(`  ${e}`)
        return EXIT.ok
      }
    }
    return EXIT.usage
  }
}

/** A short-lived peer needs its connections before a flush or sync; a running node has them. */
function via0 (settleMs: number): number {
  return Math.min(settleMs, 3_000)
}

function formatBytes (n: number): string {
  if (n < 1024) return `${n} B`
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`
  return `${(n / 1024 / 1024).toFixed(1)} MiB`
}

function printStatus (s: LedgerStatus, via: string, out: Output): void {
  out.info(`ledger of ${s.peerId}${via === 'short-lived' ? ' (short-lived peer: no node runs on this data directory)' : ''}`)
  out.info(`  ${s.authors} authors, ${s.entries} entries, ${formatBytes(s.diskBytes)} on disk in ${s.path}`)
  out.info(`  own feed: ${s.own.seq} entries${s.own.unacknowledged > 0 ? `, ${s.own.unacknowledged} not yet confirmed held by a peer` : ''}`)
  if (s.pending > 0) out.info(`  ${s.pending} entries wait for earlier ones`)
  const q = s.quarantine
  if (q.entries > 0 || q.evicted > 0) out.info(`  quarantine (authors nobody this node trusts vouches for; in memory, not stored): ${q.entries} entries of ${q.authors} authors, ${formatBytes(q.bytes)}; ${q.evicted} evicted`)
  const sc = s.scope
  if (sc != null) out.info(`  replication: ${sc.mode === 'all' ? 'every feed' : `bounded (${sc.inScope} authors within ${sc.horizon} hops of itself, its trust seeds and ${sc.awardable} providers it may award)`}; ${sc.skippedHeads} heads of ${sc.skippedAuthors} authors offered out of scope, not pulled`)
  out.info(`  slashed: ${s.slashed.length === 0 ? 'none' : s.slashed.map(shortPeerId).join(', ')}`)
  const e = s.earnings
  if (e.paidJobs > 0 || e.availableHours > 0) {
    out.info(`  earnings: ${(e.earnedMicroUsd / 1e6).toFixed(2)} USD over ${e.paidJobs} paid jobs; fill rate ${(100 * e.fillRate).toFixed(1)}%`)
  }
  out.info('  heads:')
  for (const h of s.heads.slice(0, 50)) out.info(`    ${shortPeerId(h.author)}  seq ${String(h.seq).padStart(6)}  ${h.hash.slice(0, 16)}${h.base > 1 ? `  from seq ${h.base}` : ''}`)
  if (s.heads.length > 50) out.info(`    … and ${s.heads.length - 50} more (--json for all)`)
}

function printShow (
  peer: string,
  shown: { head?: HeadView, slashed: boolean, entries: EntryView[] },
  out: Output
): void {
  if (shown.head == null) {
    out.info(`no entries of ${peer} in this ledger${shown.slashed ? ' (slashed)' : ''}`)
    return
  }
  const held = shown.head.base > 1 ? `seq ${shown.head.base}–${shown.head.seq} (older entries dropped: retention)` : `${shown.head.seq} entries`
  out.info(`feed of ${peer}: ${held}${shown.slashed ? ', SLASHED' : ''}`)
  for (const e of shown.entries) {
    const details = Object.entries(e.summary).map(([k, v]) => `${k}=${typeof v === 'string' && v.length > 20 ? shortPeerId(v) : String(v)}`).join(' ')
    out.info(`  ${String(e.seq).padStart(6)}  ${new Date(e.time).toISOString()}  ${e.kind.padEnd(17)} ${details}`)
  }
}
