/**
 * `idlegrid demo`: the network (src/demo/local-network.ts), the scenario's jobs in order
 * (src/demo/jobs.ts) and the closing summary (src/demo/summary.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sleep, waitUntil } from '../common/index.js'
import { callControl } from '../control/index.js'
import { loadJobSpec, type JobSpec } from '../market/index.js'
import { startLocalNetwork, waitForMesh, type LocalNetwork, type NodeProcess } from './local-network.js'
import { checkDemoEngine, dockerVariant } from './docker-jobs.js'
import { demoFleet, providerArgs, type DemoProvider, type DemoRunner } from './fleet.js'
import { playAuctionOnly, playJob, type JobStage } from './jobs.js'
import { playServicesAct, type ServicesActReport } from './services-act.js'
import { printSummary, providerStats, renterReputations, summarize, type DemoOutput, type DemoSummary, type JobReport } from './summary.js'

/** The job files the scenario plays, in examples/demo/. */
const DEMO_JOB_DIR = fileURLToPath(new URL('../../../examples/demo/', import.meta.url))

export interface DemoOptions {
  providers: number
  jobs: number
  keep: boolean
  /** bound on each wait for the network to form */
  setupTimeoutMs?: number
  /** how the providers run jobs (default process) */
  runner?: DemoRunner
  /** play the services act after the jobs (--services) */
  services?: boolean
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
  const runner = opts.runner ?? { kind: 'process' }
  if (runner.kind === 'docker') await checkDemoEngine(runner.image)
  const baseDir = await mkdtemp(join(tmpdir(), 'idlegrid-demo-'))
  let network: LocalNetwork | undefined
  try {
    out.info(`idlegrid demo: a bootstrap node, ${fleet.length} providers and a renter as processes on 127.0.0.1 (data in ${baseDir})`)
    network = await startLocalNetwork({
      baseDir,
      providers: fleet.length,
      renters: 1,
      heartbeatSeconds: 1,
      providerArgs: i => providerArgs(fleet[i], runner)
    })
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
    if (runner.kind === 'docker') out.info(`jobs run in containers of ${runner.image} on the Docker engine at ${process.env.DOCKER_HOST ?? 'the default socket'}\n`)
    const jobs = await playScenario(scenarioJobs(opts.jobs), { renter, outDir: join(baseDir, 'renter-out'), names, label, out }, runner)
    const services: ServicesActReport | undefined =
      opts.services === true ? await playServicesAct(network, label, out, runner) : undefined

    const providers = await providerStats(network, fleet)
    const reputations = await renterReputations(renter, names)
    const played = summarize({ started, network, fleet, meshMs, jobs, providers, reputations })
    const summary = services == null ? played : { ...played, services, ok: played.ok && services.ok }
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
    out.info('a GPU at home or a laptop behind a router joins a real network the same way, with --bootstrap <seed address> and no port forwarding: UPnP, two relays and a hole punch reach it (README: "Behind a home router (NAT)"; idlegrid doctor says how it is reached)')
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

async function playScenario (jobs: ScenarioJob[], stage: JobStage, runner: DemoRunner): Promise<JobReport[]> {
  const load = async (file: string): Promise<JobSpec> => {
    const spec = await loadJobSpec(join(DEMO_JOB_DIR, file), {})
    return runner.kind === 'docker' ? dockerVariant(spec, runner.image) : spec
  }
  const specs = await Promise.all(jobs.map(async j => ({ ...j, spec: await load(j.file) })))
  const [first, ...rest] = specs
  if (first == null) return []
  const reports: Array<Promise<JobReport>> = []
  if (first.key === 'bronze') {
    let running: () => void = () => {}
    const isRunning = new Promise<void>(resolve => { running = resolve })
    reports.push(playJob(stage, first, running))
    // the gold job must find the bronze job on the GPU it needs (bounded: go on without it)
    const waited = new AbortController()
    await Promise.race([isRunning, sleep(60_000, waited.signal)])
    waited.abort()
  } else {
    rest.unshift(first)
  }
  for (const job of rest) {
    if (job.key === 'impossible') reports.push(playAuctionOnly(stage, job))
    else reports.push(playJob(stage, job))
  }
  return await Promise.all(reports)
}
