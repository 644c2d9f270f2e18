/**
 * What the partition spec reads from its nodes (over their control sockets, which live in
 * the shared filesystem and so cross namespaces): ledger heads, the viewer-independent part
 * of reputations, and which provider started which job.
 */
import { callControl } from '../../src/control/index.js'
import type { LedgerStatus, Reputation } from '../../src/ledger/index.js'
import type { NodeProcess } from '../utils/index.js'
import type { Submitted } from '../exec/fixtures.js'

/** A node's feed heads, sorted by author, as one comparable string. */
export async function headsOf (node: NodeProcess): Promise<string> {
  const status = await callControl(node.dataDir, 'ledger.status', {}, { timeoutMs: 5_000 }) as LedgerStatus
  return JSON.stringify([...status.heads].sort((a, b) => a.author < b.author ? -1 : a.author > b.author ? 1 : 0))
}

/** Entries in all feeds a node holds (sum of head seqs). */
export function entriesIn (heads: string): number {
  return (JSON.parse(heads) as Array<{ seq: number }>).reduce((sum, h) => sum + h.seq, 0)
}

/**
 * Reputations at `now` without the fields weighted by the viewer's own trust (score,
 * jobScore and the weights): what is left must be equal on every node holding the same entries.
 */
export async function evidenceOf (node: NodeProcess, now: number): Promise<string> {
  const reps = await callControl(node.dataDir, 'reputation', { now }, { timeoutMs: 5_000 }) as Reputation[]
  const evidence = reps.map(({ score, jobScore, successWeight, failureWeight, ...rest }) => rest)
  return JSON.stringify(evidence.sort((a, b) => a.peerId < b.peerId ? -1 : 1))
}

/** Provider peer id → the job ids (hex) whose attempts it started running. */
export async function startedJobs (providers: NodeProcess[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  for (const p of providers) {
    const view = await callControl(p.dataDir, 'exec.jobs', {}, { timeoutMs: 5_000 }) as { jobs: Array<{ jobId: string, startedAt?: number }> }
    out.set(p.peerId, view.jobs.filter(j => j.startedAt != null).map(j => j.jobId))
  }
  return out
}

/**
 * Jobs run where their renter does not know: a provider that started a job more times than
 * the job's summary lists attempts on that provider. Returns one line per such run.
 */
export function unknownRuns (submitted: Submitted[], started: Map<string, string[]>): string[] {
  const problems: string[] = []
  for (const { summary } of submitted) {
    const history = (summary.history ?? []) as Array<{ provider: string }>
    for (const [provider, jobs] of started) {
      const ran = jobs.filter(j => j === summary.jobId).length
      const known = history.filter(h => h.provider === provider).length
      if (ran > known) problems.push(`job ${String(summary.jobId).slice(0, 12)} started ${ran} times on ${provider.slice(-6)}, its renter knows of ${known}`)
    }
  }
  return problems
}

/** Where the nodes' heads differ: one line per author whose head is not the same everywhere. */
export async function headsDiff (nodes: NodeProcess[]): Promise<string[]> {
  const all = await Promise.all(
    nodes.map(async n => JSON.parse(await headsOf(n)) as Array<{ author: string, seq: number }>)
  )
  const authors = new Set(all.flatMap(heads => heads.map(h => h.author)))
  const lines: string[] = []
  for (const author of authors) {
    const seqs = all.map(heads => heads.find(h => h.author === author)?.seq ?? 0)
    if (seqs.some(s => s !== seqs[0])) lines.push(`feed ${author.slice(-6)}: ${nodes.map((n, i) => `${n.role} ${n.peerId.slice(-6)}=${seqs[i]}`).join(' ')}`)
  }
  return lines
}
