import { asNumber } from '../../config/index.js'
import { EXIT, UsageError } from '../errors.js'
import { oneShot } from '../one-shot.js'
import { COMMON_OPTIONS, NODE_OPTIONS } from '../options.js'
import { type Output } from '../output.js'
import { shortPeerId } from '../../common/index.js'
import type { Reputation, ReputationExplain } from '../../ledger/index.js'
import type { CommandDefinition } from '../command.js'

type ReputationRow = Omit<Reputation, 'counterparties'> & { counterparties: Reputation['counterparties'] | number, explain?: Omit<ReputationExplain, 'renters'> & { renters?: ReputationExplain['renters'] } }

export const reputationCommand: CommandDefinition = {
  name: 'reputation',
  usage: 'idlegrid reputation [PEER] [options]',
  allowPositionals: true,
  options: {
    ...NODE_OPTIONS,
    wait: { type: 'string', valueName: 'S', description: 'a short-lived peer first syncs with its peers for up to S seconds (default 0)' },
    explain: { type: 'boolean', description: 'also show the trust anchors (this node, its operator peers, adopted and refused trust lists) and why each score is what it is' },
    ...COMMON_OPTIONS
  },
  details: 'The score is a pure function of the ledger and of whom this node trusts: decayed success/failure\ncounts from attestations paired with receipts (each renter counts for a bounded amount, weighted by\nthis node\'s transitive trust in it, seeded from its own jobs, its bootstrap peers and --trust peers),\nuptime from heartbeat summaries, a penalty for breaking non-preemptible jobs, and 0 for a provider\nslashed by a fraud proof. With PEER: why, split into direct, transitive and discounted evidence.\nWith --explain: which trust anchors counted (the node, its operator peers, the trust lists it adopted\nwith --trust-list/--trust-operator, by operator key, sequence and expiry; lists refused and why).\nWith --json: one JSON object per provider (peerId, score, evidenceScore, jobs, slashed, …).',
  run: async (values, positionals, out) => {
    if (positionals.length > 1) throw new UsageError('idlegrid reputation: give at most one PEER id')
    const wait = asNumber(values.wait ?? 0, 'wait', { min: 0, max: 120 })
    const params: Record<string, unknown> = { sync: wait > 0, timeoutMs: Math.max(100, wait * 1000) }
    if (positionals[0] != null) params.peer = positionals[0]
    if (values.explain === true) params.explain = true
    const { result } = await oneShot('reputation', params, values, { settleMs: wait * 1000 })
    const rows = result as ReputationRow[]
    for (const row of rows) out.data(row)
    if (values.explain === true && rows[0]?.explain != null) printAnchors(rows[0].explain, out)
    if (positionals[0] != null) printOne(rows[0], out, values.explain === true)
    else printTable(rows, out, values.explain === true)
    return EXIT.ok
  }
}

function printAnchors (e: NonNullable<ReputationRow['explain']>, out: Output): void {
  const a = e.anchors
  out.info(`trust anchors: this node, ${a.operatorPeers} operator peers (bootstrap, --trust), ${a.lists.length} trust list${a.lists.length === 1 ? '' : 's'} adopted`)
  for (const l of a.lists) {
    out.info(`  list "${l.name}" of operator ${l.operator}: sequence ${l.sequence}, ${l.peers} peers, expires ${new Date(l.expiresAt).toISOString()} (${l.status}; ${l.source})`)
  }
  for (const r of a.refused) out.info(`  refused ${r.source}: ${r.reason}: ${r.message}`)
}

function printTable (rows: ReputationRow[], out: Output, explain = false): void {
  if (rows.length === 0) {
    out.info('no providers in the local ledger yet')
    return
  }
  out.info(`${'provider'.padEnd(17)} ${'score'.padStart(5)}  ${'jobs'.padStart(5)} ${'ok'.padStart(5)} ${'fail'.padStart(5)} ${'broke'.padStart(5)}  uptime  renters`)
  for (const r of [...rows].sort((a, b) => b.score - a.score)) {
    const renters = typeof r.counterparties === 'number' ? r.counterparties : r.counterparties.length
    out.info(`${shortPeerId(r.peerId).padEnd(17)} ${r.score.toFixed(3)}  ${String(r.jobs).padStart(5)} ${String(r.ok).padStart(5)} ${String(r.failed).padStart(5)} ${String(r.broken).padStart(5)}  ${(100 * r.uptime).toFixed(1).padStart(5)}%  ${String(renters).padStart(7)}${r.slashed ? '  SLASHED' : ''}`)
    if (explain && r.explain != null) for (const line of r.explain.why.slice(1)) out.info(`    ${line}`)
  }
}

function printOne (r: ReputationRow, out: Output, explain = false): void {
  out.info(`${r.peerId}: score ${r.score.toFixed(3)}${r.slashed ? ' (SLASHED by a verified fraud proof)' : ''}`)
  out.info(`  jobs ${r.jobs}: ${r.ok} ok, ${r.failed} failed, ${r.broken} broken non-preemptible`)
  out.info(`  job score ${r.jobScore.toFixed(3)} from ${r.successWeight.toFixed(2)} decayed successes and ${r.failureWeight.toFixed(2)} failures (after the per-renter cap)`)
  out.info(`  uptime ${(100 * r.uptime).toFixed(1)}% over ${r.summaries} heartbeat summaries`)
  const e = r.explain
  if (e != null) {
    out.info(`  as this node sees it (${e.seeds} trust seeds): score ${e.score.toFixed(3)}; every renter counted fully: ${e.evidenceScore.toFixed(3)}`)
    const line = (name: string, t: typeof e.direct, what: string): void => {
      out.info(`  ${name.padEnd(11)} ${String(t.renters).padStart(4)} renters ${String(t.jobs).padStart(5)} jobs: ${what} ${t.successes.toFixed(2)} successes, ${t.failures.toFixed(2)} failures`)
    }
    line('direct', e.direct, 'counted')
    line('transitive', e.transitive, 'counted')
    line('discounted', e.discounted, 'not counted')
    if (explain) {
      for (const c of e.anchors.counted) out.info(`  anchor ${c.anchor}: ${c.renters} renters, ${c.jobs} jobs counted fully`)
      for (const why of e.why) out.info(`  why: ${why}`)
    }
  }
  if (Array.isArray(r.counterparties)) {
    for (const c of r.counterparties) {
      const seen = e?.renters?.find(x => x.renter === c.renter)
      const part = seen == null ? '' : ` (${seen.part}${seen.anchors != null ? `: ${seen.anchors.join(', ')}` : ''})`
      out.info(`  renter ${shortPeerId(c.renter)}: ${c.jobs} jobs, successes ${c.successes.toFixed(2)} → ${c.cappedSuccesses.toFixed(2)}, failures ${c.failures.toFixed(2)} → ${c.cappedFailures.toFixed(2)}, weight ${c.weight.toFixed(2)}${part}`)
    }
  }
}
