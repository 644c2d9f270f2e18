import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { waitUntil } from '../common/index.js'
import { callControl } from '../control/index.js'
import { loadJobSpec, type JobSpec } from '../market/index.js'
import { startLocalNetwork, waitForMesh, type LocalNetwork, type NodeProcess } from './local-network.js'
import { demoFleet, providerArgs, type DemoProvider } from './fleet.js'

/** The job files the scenario plays, in examples/demo/. */
const DEMO_JOB_DIR = fileURLToPath(new URL('../../../examples/demo/', import.meta.url))

/** Where the demo tells its story (the CLI passes its output; only human lines are written). */
export interface DemoOutput {
  info(text: string): void
}

export interface DemoOptions {
  providers: number
  jobs: number
  keep: boolean
  /** bound on each wait for the network to form */
  setupTimeoutMs?: number
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
  network: { bootstrap: string, renter: string, providers: Array<{ name: string, peerId: string, region: string, gpus: string, priceFloorUsd: number }>, meshMs: number }
  jobs: JobReport[]
  facts: {
    goldPreemptedBronze: boolean
    bronzeFinishedElsewhere: boolean
    euJobRanInEu: boolean
    impossibleJobReported: boolean
    everyAttestationVerified: boolean
  }
  prices: { averagePaidUsd: number | null, averageMaxUsd: number | null }
  providers: Array<{ name: string, peerId: string, bids: number, wins: number, fillRate: number, jobsRun: number, busySlots: number, slots: number, earningsUsd: number }>
  reputations: Array<{ name: string, peerId: string, score: number, jobs: number, slashed: boolean }>
  kept?: { dataDir: string, pids: number[] }
}

interface ScenarioJob { key: string, file: string }

/** bronze first (it must be running when gold arrives), then the rest together */
function scenarioJobs (count: number): ScenarioJob[] {
  const base: ScenarioJob[] = [
    { key: 'bronze', file: 'bronze-batch.yaml' },
    { key: 'gold', file: 'gold-priority.yaml' },
    { key: 'silver', file: 'silver-batch.yaml' },
    { key: 'eu', file: 'eu-residency.yaml' },
    { key: 'impossible', file: 'impossible.yaml' }
  ]
  const jobs = base.slice(0, Math.min(count, base.length))
  for (let i = base.length; i < count; i++) jobs.push({ key: `extra-${i + 1}`, file: 'silver-batch.yaml' })
  return jobs
}

/**
 * `idlegrid demo`: a bootstrap node, providers and a renter as processes on 127.0.0.1, then
 * a short market scenario with real jobs: a bronze batch job, a gold job that preempts it
 * (the bronze job resumes elsewhere from its checkpoint), a silver job, an EU-residency
 * job and a job nobody can serve. Prints each auction and attestation and a closing summary.
 */
export async function runDemo (opts: DemoOptions, out: DemoOutput): Promise<DemoSummary> {
  const started = Date.now()
  const fleet = demoFleet(opts.providers)
  const baseDir = await mkdtemp(join(tmpdir(), 'idlegrid-demo-'))
  let network: LocalNetwork | undefined
  try {
    out.info(`idlegrid demo: a bootstrap node, ${fleet.length} providers and a renter as processes on 127.0.0.1 (data in ${baseDir})`)
    network = await startLocalNetwork({ baseDir, providers: fleet.length, renters: 1, heartbeatSeconds: 1, providerArgs: (i) => providerArgs(fleet[i]) })
    const names = new Map<string, DemoProvider>()
    network.providers.forEach((p, i) => names.set(p.peerId, fleet[i]))
    for (const i of network.providers.keys()) {
      const f = fleet[i]
      out.info(`  provider ${f.name.padEnd(12)} ${f.gpus.padEnd(14)} ${f.region.padEnd(13)} floor $${f.priceFloorUsd.toFixed(2)}/GPU-h  ${f.note}`)
    }
    // the market needs the renter and every provider to hear each other on the topics;
    // providers need not know each other, and discovery below checks the DHT
    const spawnedMs = Date.now() - started
    const mesh = await waitForMesh(network.all, opts.setupTimeoutMs ?? 45_000, undefined, {
      needed: (a, b) => (a.role === 'renter' && b.role === 'provider') || (a.role === 'provider' && b.role === 'renter'),
      routing: false
    })
    if (!mesh.complete) throw new Error(`the network did not form: ${mesh.missing.slice(0, 3).join('; ')}`)
    const meshMs = Date.now() - started
    const renter = network.renters[0]
    const meshedMs = Date.now() - started
    await waitForDiscovery(renter, fleet.length, opts.setupTimeoutMs ?? 30_000)
    const secs = (ms: number): string => (ms / 1000).toFixed(1)
    out.info(`all ${network.all.length} nodes found each other and every provider's signed capability record is in the DHT (processes ready ${secs(spawnedMs)} s, topics joined ${secs(meshedMs)} s, records found ${secs(Date.now() - started)} s)\n`)

    const label = (peerId: string): string => names.get(peerId)?.name ?? peerId.slice(-8)
    const jobs = await playScenario(scenarioJobs(opts.jobs), renter, baseDir, names, label, out)

    const providers = await providerStats(network, fleet)
    const reputations = await renterReputations(renter, names)
    const summary = summarize({ started, network, fleet, meshMs, jobs, providers, reputations })
    printSummary(summary, out)

    if (opts.keep) {
      const pids = network.all.map(n => n.child.pid as number)
      out.info('\nThe network keeps running (--keep). Try, for example:')
      out.info(`  ./idlegrid market ls --data-dir ${renter.dataDir}`)
      out.info(`  ./idlegrid submit examples/demo/silver-batch.yaml --data-dir ${renter.dataDir}`)
      out.info(`  ./idlegrid reputation --data-dir ${renter.dataDir}`)
      out.info(`  ./idlegrid renter --bootstrap ${network.bootstrap.addrs[0]} --data-dir /tmp/another-renter`)
      out.info(`Stop it with: kill ${pids.join(' ')} && rm -rf ${baseDir}`)
      for (const n of network.all) { n.child.unref(); n.child.stdout?.destroy(); n.child.stderr?.destroy() }
      network = undefined
      return { ...summary, kept: { dataDir: baseDir, pids } }
    }
    out.info('\nstopping every process…')
    const stopStarted = Date.now()
    const codes = await network.stop()
    network = undefined
    const clean = codes.every(c => c === 0)
    const stopSeconds = ((Date.now() - stopStarted) / 1000).toFixed(1)
    out.info(clean ? `all ${codes.length} processes exited cleanly in ${stopSeconds} s` : `exit codes: ${codes.join(', ')}`)
    const durationMs = Date.now() - started
    out.info(`the demo took ${(durationMs / 1000).toFixed(1)} s`)
    return { ...summary, ok: summary.ok && clean, durationMs }
  } finally {
    if (network != null) await network.stop()
    if (!opts.keep) await rm(baseDir, { recursive: true, force: true })
  }
}

async function waitForDiscovery (renter: NodeProcess, providers: number, timeoutMs: number): Promise<void> {
  let found = 0
  await waitUntil(async () => {
    const result = await callControl(renter.dataDir, 'capability.discover', { filters: {}, timeoutMs: 5_000 }, { timeoutMs: 10_000 }) as { providers: unknown[] }
    found = result.providers.length
    return found >= providers
  }, { timeoutMs, intervalMs: 500, what: 'discovery of every provider' }).catch((err: unknown) => {
    throw new Error(`discovery found ${found} of ${providers} providers in ${timeoutMs} ms`, { cause: err })
  })
}

async function playScenario (jobs: ScenarioJob[], renter: NodeProcess, baseDir: string, names: Map<string, DemoProvider>, label: (id: string) => string, out: DemoOutput): Promise<JobReport[]> {
  const specs = await Promise.all(jobs.map(async j => ({ ...j, spec: await loadJobSpec(join(DEMO_JOB_DIR, j.file), {}) })))
  const outDir = join(baseDir, 'renter-out')
  const [first, ...rest] = specs
  if (first == null) return []
  const reports: Array<Promise<JobReport>> = []
  if (first.key === 'bronze') {
    let running: () => void = () => {}
    const isRunning = new Promise<void>(resolve => { running = resolve })
    reports.push(runJob(first.key, first.spec, renter, outDir, names, label, out, running))
    // the gold job must find the bronze job on the GPU it needs (bounded: go on without it)
    let timer: NodeJS.Timeout | undefined
    await Promise.race([isRunning, new Promise(resolve => { timer = setTimeout(resolve, 60_000) })])
    clearTimeout(timer)
  } else {
    rest.unshift(first)
  }
  for (const job of rest) {
    if (job.key === 'impossible') reports.push(runAuctionOnly(job.key, job.spec, renter, label, out))
    else reports.push(runJob(job.key, job.spec, renter, outDir, names, label, out))
  }
  return await Promise.all(reports)
}

function usd (n: number | undefined): string {
  return n == null ? '—' : `$${n.toFixed(2)}`
}

/** Submits a job to the renter node and follows its events until the summary arrives. */
async function runJob (key: string, spec: JobSpec, renter: NodeProcess, outDir: string, names: Map<string, DemoProvider>, label: (id: string) => string, out: DemoOutput, onRunning?: () => void): Promise<JobReport> {
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
      const line = String(e.line)
      if (logged === 1 || /preempted|resuming|done:/.test(line)) out.info(`${tag}   | ${line}`)
    } else if (e.type === 'attempt-ended') {
      const a = attempt(e.attempt)
      a.outcome = e.outcome
      a.detail = e.detail
      if (e.outcome === 'preempted') report.preempted = true
      if (e.outcome !== 'ok') out.info(`${tag} attempt ${String(e.attempt)} on ${label(e.provider)}: ${String(e.outcome)}${e.detail != null ? ` (${String(e.detail)})` : ''}${e.outcome === 'preempted' ? ' → re-auctioned, resuming from its checkpoint' : ''}`)
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
async function runAuctionOnly (key: string, spec: JobSpec, renter: NodeProcess, label: (id: string) => string, out: DemoOutput): Promise<JobReport> {
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

async function providerStats (network: LocalNetwork, fleet: DemoProvider[]): Promise<DemoSummary['providers']> {
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

async function renterReputations (renter: NodeProcess, names: Map<string, DemoProvider>): Promise<DemoSummary['reputations']> {
  const list = await callControl(renter.dataDir, 'reputation', {}, { timeoutMs: 10_000 }).catch(() => []) as Array<Record<string, any>>
  return list
    .filter(r => names.has(r.peerId))
    .map(r => ({ name: names.get(r.peerId)?.name ?? r.peerId, peerId: r.peerId, score: r.score, jobs: r.jobs, slashed: r.slashed }))
    .sort((a, b) => b.score - a.score)
}

function summarize (s: { started: number, network: LocalNetwork, fleet: DemoProvider[], meshMs: number, jobs: JobReport[], providers: DemoSummary['providers'], reputations: DemoSummary['reputations'] }): DemoSummary {
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
  const avg = (xs: number[]): number | null => xs.length === 0 ? null : Number((xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(4))
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
      providers: s.network.providers.map((p, i) => ({ name: s.fleet[i].name, peerId: p.peerId, region: s.fleet[i].region, gpus: s.fleet[i].gpus, priceFloorUsd: s.fleet[i].priceFloorUsd })),
      meshMs: s.meshMs
    },
    jobs: s.jobs,
    facts,
    prices: { averagePaidUsd: avg(served.map(j => j.priceUsd as number)), averageMaxUsd: avg(served.flatMap(j => j.maxPriceUsd != null ? [j.maxPriceUsd] : [])) },
    providers: s.providers,
    reputations: s.reputations
  }
}

function printSummary (s: DemoSummary, out: DemoOutput): void {
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
