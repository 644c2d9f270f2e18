/**
 * What the demo reports: each job's story, the providers' and the renter's closing figures,
 * the facts the scenario is meant to show, and the printed summary.
 */
import { callControl } from '../control/index.js'
import type { DemoProvider } from './fleet.js'
import type { LocalNetwork, NodeProcess } from './local-network.js'
import type { ServicesActReport } from './services-act.js'

/** Where the demo tells its story (the CLI passes its output; only human lines are written). */
export interface DemoOutput {
  info(text: string): void
}

export interface AttemptReport {
  attempt: number
  provider: string
  providerName: string
  region: string
  priceUsd?: number
  bids: Array<{ provider: string, providerName: string, priceUsd: number }>
  outcome?: string
  detail?: string
}

export interface JobReport {
  key: string
  name: string
  tier: string
  maxPriceUsd?: number
  /** ok, failed, timeout, no_award, no_bids … */
  status: string
  provider?: string
  providerName?: string
  region?: string
  residency?: string
  priceUsd?: number
  attempts: AttemptReport[]
  preempted: boolean
  resumedFromRow?: number
  attestation?: { status: string, outputDigest: string, verified: boolean }
  receipt?: string
  /** for a job nobody served: provider declines by reason */
  declines?: Record<string, number>
  noBidsReason?: string
  outputDir?: string
  rows?: number
}

export interface DemoSummary {
  ok: boolean
  durationMs: number
  network: {
    bootstrap: string
    renter: string
    providers: Array<{ name: string, peerId: string, region: string, gpus: string, priceFloorUsd: number }>
    meshMs: number
  }
  jobs: JobReport[]
  facts: {
    goldPreemptedBronze: boolean
    bronzeFinishedElsewhere: boolean
    euJobRanInEu: boolean
    impossibleJobReported: boolean
    everyAttestationVerified: boolean
  }
  prices: { averagePaidUsd: number | null, averageMaxUsd: number | null }
  providers: Array<{
    name: string
    peerId: string
    bids: number
    wins: number
    fillRate: number
    jobsRun: number
    busySlots: number
    slots: number
    earningsUsd: number
  }>
  reputations: Array<{ name: string, peerId: string, score: number, jobs: number, slashed: boolean }>
  kept?: { dataDir: string, pids: number[] }
  /** the services act (idlegrid demo --services) */
  services?: ServicesActReport
}

/** Dollars for people: $1.23, or a dash. */
export function usd (n: number | undefined): string {
  return n == null ? '—' : `$${n.toFixed(2)}`
}

export async function providerStats (network: LocalNetwork, fleet: DemoProvider[]): Promise<DemoSummary['providers']> {
  return await Promise.all(network.providers.map(async (p, i) => {
    const market = await callControl(p.dataDir, 'market.stats', {}, { timeoutMs: 10_000 }).catch(() => ({})) as Record<string, any>
    const exec = await callControl(p.dataDir, 'exec.jobs', {}, { timeoutMs: 10_000 }).catch(() => ({})) as Record<string, any>
    const earnings = await callControl(p.dataDir, 'ledger.earnings', {}, { timeoutMs: 10_000 }).catch(() => ({})) as Record<string, any>
    const jobs = Array.isArray(exec.jobs) ? exec.jobs : []
    return {
      name: fleet[i].name,
      peerId: p.peerId,
      bids: market.bids ?? 0,
      wins: market.wins ?? 0,
      fillRate: market.fillRate ?? 0,
      jobsRun: jobs.length,
      busySlots: exec.capacity?.busy ?? 0,
      slots: exec.capacity?.total ?? 0,
      earningsUsd: Number(earnings.earnedUsd ?? earnings.earningsUsd ?? market.expectedEarningsUsd ?? 0)
    }
  }))
}

export async function renterReputations (renter: NodeProcess, names: Map<string, DemoProvider>): Promise<DemoSummary['reputations']> {
  const list = await callControl(renter.dataDir, 'reputation', {}, { timeoutMs: 10_000 }).catch(() => []) as Array<Record<string, any>>
  return list
    .filter(r => names.has(r.peerId))
    .map(r => ({
      name: names.get(r.peerId)?.name ?? r.peerId,
      peerId: r.peerId,
      score: r.score,
      jobs: r.jobs,
      slashed: r.slashed
    }))
    .sort((a, b) => b.score - a.score)
}

export function summarize (s: { started: number, network: LocalNetwork, fleet: DemoProvider[], meshMs: number, jobs: JobReport[], providers: DemoSummary['providers'], reputations: DemoSummary['reputations'] }): DemoSummary {
  const byKey = new Map(s.jobs.map(j => [j.key, j]))
  const bronze = byKey.get('bronze')
  const gold = byKey.get('gold')
  const eu = byKey.get('eu')
  const impossible = byKey.get('impossible')
  const preemptedOn = bronze?.attempts.find(a => a.outcome === 'preempted')?.provider
  const facts = {
    goldPreemptedBronze: bronze != null && gold != null && preemptedOn != null && gold.provider === preemptedOn && gold.status === 'ok',
    bronzeFinishedElsewhere: bronze?.status === 'ok' && preemptedOn != null && bronze.provider !== preemptedOn,
    euJobRanInEu: eu?.status === 'ok' && eu.residency === 'eu',
    impossibleJobReported: impossible?.status === 'no_bids' && Object.values(impossible.declines ?? {}).reduce((a, b) => a + b, 0) > 0,
    everyAttestationVerified: s.jobs.filter(j => j.status !== 'no_bids').every(j => j.attestation?.verified === true)
  }
  const served = s.jobs.filter(j => j.status === 'ok' && j.priceUsd != null)
  const avg = (xs: number[]): number | null =>
    xs.length === 0 ? null : Number((xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(4))
  const expected = [
    bronze == null || gold == null ? true : facts.goldPreemptedBronze && facts.bronzeFinishedElsewhere,
    eu == null ? true : facts.euJobRanInEu,
    impossible == null ? true : facts.impossibleJobReported,
    facts.everyAttestationVerified,
    s.jobs.filter(j => j.key !== 'impossible').every(j => j.status === 'ok')
  ]
  return {
    ok: expected.every(Boolean),
    durationMs: Date.now() - s.started,
    network: {
      bootstrap: s.network.bootstrap.peerId,
      renter: s.network.renters[0].peerId,
      providers: s.network.providers.map((p, i) => ({
        name: s.fleet[i].name,
        peerId: p.peerId,
        region: s.fleet[i].region,
        gpus: s.fleet[i].gpus,
        priceFloorUsd: s.fleet[i].priceFloorUsd
      })),
      meshMs: s.meshMs
    },
    jobs: s.jobs,
    facts,
    prices: {
      averagePaidUsd: avg(served.map(j => j.priceUsd as number)),
      averageMaxUsd: avg(served.flatMap(j => (j.maxPriceUsd != null ? [j.maxPriceUsd] : [])))
    },
    providers: s.providers,
    reputations: s.reputations
  }
}

export function printSummary (s: DemoSummary, out: DemoOutput): void {
  const done = s.jobs.filter(j => j.status === 'ok')
  out.info('\n== summary ==')
  out.info(`jobs done: ${done.length} of ${s.jobs.length} (${s.jobs.filter(j => j.status === 'no_bids').length} nobody could serve)`)
  out.info(`average price paid ${usd(s.prices.averagePaidUsd ?? undefined)}/GPU-h against the renters' average max ${usd(s.prices.averageMaxUsd ?? undefined)}/GPU-h`)
  const tick = (b: boolean): string => b ? '✓' : '✗'
  out.info(`gold preempted bronze ${tick(s.facts.goldPreemptedBronze)}  bronze finished elsewhere ${tick(s.facts.bronzeFinishedElsewhere)}  EU job ran in the EU ${tick(s.facts.euJobRanInEu)}  impossible job explained ${tick(s.facts.impossibleJobReported)}  every attestation verified ${tick(s.facts.everyAttestationVerified)}`)
  out.info('providers:')
  for (const p of s.providers) out.info(`  ${p.name.padEnd(12)} bids ${String(p.bids).padStart(2)}  wins ${String(p.wins).padStart(2)}  fill ${(p.fillRate * 100).toFixed(0).padStart(3)}%  jobs run ${p.jobsRun}  earned ${usd(p.earningsUsd)}`)
  if (s.reputations.length > 0) {
    out.info('reputations (the renter\'s own ledger view):')
    for (const r of s.reputations) out.info(`  ${r.name.padEnd(12)} ${r.score.toFixed(3)} from ${r.jobs} job(s)${r.slashed ? ' SLASHED' : ''}`)
  }
}
