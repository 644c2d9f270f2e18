/** One job of the demo scenario, played through the renter node's control socket and told as it goes. */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { callControl } from '../control/index.js'
import { printable } from '../exec/index.js'
import { usd, type AttemptReport, type DemoOutput, type JobReport } from './summary.js'
import type { DemoProvider } from './fleet.js'
import type { NodeProcess } from './local-network.js'
import type { JobSpec } from '../market/index.js'

/** Where the scenario's jobs are played: the renter node, its output directory, and how providers are named. */
export interface JobStage {
  renter: NodeProcess
  /** the renter's output directory for the jobs */
  outDir: string
  names: Map<string, DemoProvider>
  /** a provider's name for the story, from its peer id */
  label: (id: string) => string
  out: DemoOutput
}

/** One job of the scenario: its key (bronze, gold, …) and spec. */
export interface StageJob {
  key: string
  spec: JobSpec
}

/** Submits a job to the renter node and follows its events until the summary arrives. */
export async function playJob (stage: JobStage, { key, spec }: StageJob, onRunning?: () => void): Promise<JobReport> {
  const { renter, outDir, names, label, out } = stage
  const tag = `[${spec.name}]`
  const report: JobReport = { key, name: spec.name, tier: spec.tier, maxPriceUsd: spec.constraints.maxPriceUsd, status: 'unknown', attempts: [], preempted: false }
  const attempt = (n: number): AttemptReport => {
    let a = report.attempts.find(x => x.attempt === n)
    if (a == null) report.attempts.push(a = { attempt: n, provider: '', providerName: '', region: '', bids: [] })
    return a
  }
  const constraints = [
    spec.constraints.gpuModels.length > 0 ? spec.constraints.gpuModels.join('/') : undefined,
    spec.constraints.minVramGb > 0 ? `>=${spec.constraints.minVramGb} GB` : undefined,
    spec.constraints.regions.length > 0 ? `in ${spec.constraints.regions.join(',')}` : undefined,
    spec.constraints.residency != null ? `residency ${spec.constraints.residency}` : undefined,
    `max ${usd(spec.constraints.maxPriceUsd)}/GPU-h`
  ].filter(Boolean).join(', ')
  out.info(`${tag} ${spec.tier} ${spec.workload} job: ${constraints}`)
  let logged = 0
  const onEvent = (raw: unknown): void => {
    const e = raw as Record<string, any>
    if (e.type === 'auction') {
      const a = attempt(e.attempt as number)
      const ev = e.event as Record<string, any>
      if (ev.type === 'published') a.bids = []
      if (ev.type === 'bid') a.bids.push({ provider: ev.provider, providerName: label(ev.provider), priceUsd: ev.price })
      if (ev.type === 'award') {
        const bids = a.bids.slice().sort((x, y) => x.priceUsd - y.priceUsd).map(b => `${b.providerName} ${usd(b.priceUsd)}`).join(', ')
        out.info(`${tag} auction for attempt ${String(e.attempt)}: ${a.bids.length} bid(s) [${bids}] → award ${label(ev.winner)} at ${usd(ev.price)}/GPU-h (best price / reliability^w)`)
      }
      if (ev.type === 'closed' && ev.valid === 0) out.info(`${tag} auction for attempt ${String(e.attempt)}: no valid bids yet`)
    } else if (e.type === 'attempt') {
      const a = attempt(e.attempt)
      a.provider = e.provider
      a.providerName = label(e.provider)
      a.region = names.get(e.provider)?.region ?? '?'
      a.priceUsd = e.priceMicroUsd / 1e6
    } else if (e.type === 'accepted') {
      out.info(`${tag} running on ${label(e.provider)} (${names.get(e.provider)?.region ?? '?'})`)
    } else if (e.type === 'log') {
      logged++
      onRunning?.()
      const line = printable(String(e.line))
      if (logged === 1 || /preempted|resuming|done:/.test(line)) out.info(`${tag}   | ${line}`)
    } else if (e.type === 'attempt-ended') {
      const a = attempt(e.attempt)
      a.outcome = e.outcome
      a.detail = e.detail
      if (e.outcome === 'preempted') report.preempted = true
      if (e.outcome !== 'ok') out.info(`${tag} attempt ${String(e.attempt)} on ${label(e.provider)}: ${String(e.outcome)}${e.detail != null ? ` (${printable(String(e.detail))})` : ''}${e.outcome === 'preempted' ? ' → re-auctioned, resuming from its checkpoint' : ''}`)
    }
  }
  try {
    const summary = await callControl(renter.dataDir, 'submit.job', { spec, baseDir: outDir, maxAttempts: 3 }, { onEvent, timeoutMs: 5 * 60_000 }) as Record<string, any>
    report.status = summary.status
    report.provider = summary.provider
    report.providerName = label(summary.provider)
    report.region = names.get(summary.provider)?.region
    report.residency = report.region?.split('-')[0]
    report.priceUsd = report.attempts.find(a => a.provider === summary.provider && a.outcome === 'ok')?.priceUsd ?? report.attempts.at(-1)?.priceUsd
    report.attestation = summary.attestation ?? undefined
    report.receipt = summary.receipt?.outcome
    report.outputDir = summary.outputDir
    try {
      const result = JSON.parse(await readFile(join(summary.outputDir, 'outputs', 'summary.json'), 'utf8'))
      report.rows = result.rows
      report.resumedFromRow = result.resumedAt
    } catch {}
    const verified = report.attestation?.verified === true
    out.info(`${tag} ${report.status === 'ok' ? 'done' : report.status} on ${String(report.providerName)} (${String(report.region)}) at ${usd(report.priceUsd)}/GPU-h: ${report.rows ?? '?'} rows scored${report.resumedFromRow != null && report.resumedFromRow > 0 ? `, resumed at row ${report.resumedFromRow}` : ''}; attestation ${verified ? 'verified ✓' : 'NOT verified ✗'} (outputs ${String(report.attestation?.outputDigest ?? '').slice(0, 12)}…), receipt ${String(report.receipt)}`)
  } catch (err: any) {
    report.status = 'error'
    report.noBidsReason = String(err?.message ?? err)
    out.info(`${tag} failed: ${report.noBidsReason}`)
  }
  return report
}

/** A job nobody can serve: the auction alone, asking the providers why they did not bid. */
export async function playAuctionOnly (stage: JobStage, { key, spec }: StageJob): Promise<JobReport> {
  const { renter, label, out } = stage
  const tag = `[${spec.name}]`
  out.info(`${tag} ${spec.tier} job nobody can serve: ${spec.constraints.gpuModels.join('/')} with >=${spec.constraints.minVramGb} GB for at most ${usd(spec.constraints.maxPriceUsd)}/GPU-h`)
  const report: JobReport = { key, name: spec.name, tier: spec.tier, maxPriceUsd: spec.constraints.maxPriceUsd, status: 'unknown', attempts: [], preempted: false }
  const result = await callControl(renter.dataDir, 'market.auction', { spec, explain: true }, { timeoutMs: 60_000 }) as Record<string, any>
  if (result.award != null) {
    report.status = 'awarded'
    report.provider = result.award.winner
    report.providerName = label(result.award.winner)
    out.info(`${tag} unexpectedly awarded to ${String(report.providerName)}`)
    return report
  }
  report.status = 'no_bids'
  const declines = (result.noBids?.declines ?? {}) as Record<string, number>
  report.declines = declines
  report.noBidsReason = result.noBids?.reason ?? result.noAward?.reason
  const reasons = Object.entries(declines).map(([reason, n]) => `${n}× ${reason}`).join(', ')
  out.info(`${tag} no bids: ${String(report.noBidsReason)}; providers said why: ${reasons !== '' ? reasons : 'nobody answered'}`)
  return report
}
