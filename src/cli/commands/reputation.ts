import { asNumber } from '../../config/index.js'
import { EXIT, UsageError } from '../errors.js'
import { oneShot } from '../one-shot.js'
import { COMMON_OPTIONS, NODE_OPTIONS } from '../options.js'
import { type Output } from '../output.js'
import { shortPeerId } from '../../common/index.js'
import type { Reputation, ReputationExplain } from '../../ledger/index.js'
import type { CommandDefinition } from '../command.js'

type ReputationRow = Omit<Reputation, 'counterparties'> & { counterparties: Reputation['counterparties'] | number, explain?: Omit<ReputationExplain, 'renters'> & { renters: ReputationExplain['renters'] } }

export const reputationCommand: CommandDefinition = {
  name: 'reputation',
  usage: 'idlegrid reputation [PEER] [options]',
  allowPositionals: true,
  options: {
    ...NODE_OPTIONS,
    wait: { type: 'string', valueName: 'S', description: 'a short-lived peer first syncs with its peers for up to S seconds (default 0)' },
    ...COMMON_OPTIONS
  },
  details: 'The score is a pure function of the ledger and of whom this node trusts: decayed success/failure\ncounts from attestations paired with receipts (each renter counts for a bounded amount, weighted by\nthis node\'s transitive trust in it, seeded from its own jobs, its bootstrap peers and --trust peers),\nuptime from heartbeat summaries, a penalty for breaking non-preemptible jobs, and 0 for a provider\nslashed by a fraud proof. With PEER: why, split into direct, transitive and discounted evidence.\nWith --json: one JSON object per provider (peerId, score, evidenceScore, jobs, slashed, …).',
  run: async (values, positionals, out) => {
    if (positionals.length > 1) throw new UsageError('idlegrid reputation: give at most one PEER id')
    const wait = asNumber(values.wait ?? 0, 'wait', { min: 0, max: 120 })
    const params: Record<string, unknown> = { sync: wait > 0, timeoutMs: Math.max(100, wait * 1000) }
    if (positionals[0] != null) params.peer = positionals[0]
    const { result } = await oneShot('reputation', params, values, { settleMs: wait * 1000 })
    const rows = result as ReputationRow[]
    for (const row of rows) out.data(row)
    if (positionals[0] != null) printOne(rows[0], out)
    else printTable(rows, out)
    return EXIT.ok
  }
}

function printTable (rows: ReputationRow[], out: Output): void {
  if (rows.length === 0) {
    out.info('no providers in the local ledger yet')
    return
  }
  out.info(`${'provider'.padEnd(17)} ${'score'.padStart(5)}  ${'jobs'.padStart(5)} ${'ok'.padStart(5)} ${'fail'.padStart(5)} ${'broke'.padStart(5)}  uptime  renters`)
  for (const r of [...rows].sort((a, b) => b.score - a.score)) {
    const renters = typeof r.counterparties === 'number' ? r.counterparties : r.counterparties.length
    out.info(`${shortPeerId(r.peerId).padEnd(17)} ${r.score.toFixed(3)}  ${String(r.jobs).padStart(5)} ${String(r.ok).padStart(5)} ${String(r.failed).padStart(5)} ${String(r.broken).padStart(5)}  ${(100 * r.uptime).toFixed(1).padStart(5)}%  ${String(renters).padStart(7)}${r.slashed ? '  SLASHED' : ''}`)
  }
}

function printOne (r: ReputationRow, out: Output): void {
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
  }
  if (Array.isArray(r.counterparties)) {
    for (const c of r.counterparties) {
      const part = e?.renters.find(x => x.renter === c.renter)?.part
      out.info(`  renter ${shortPeerId(c.renter)}: ${c.jobs} jobs, successes ${c.successes.toFixed(2)} → ${c.cappedSuccesses.toFixed(2)}, failures ${c.failures.toFixed(2)} → ${c.cappedFailures.toFixed(2)}, weight ${c.weight.toFixed(2)}${part != null ? ` (${part})` : ''}`)
    }
  }
}
