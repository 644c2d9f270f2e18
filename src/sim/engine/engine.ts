/**
 * The discrete-event simulation: jobs arrive, owners' own work takes their own GPUs first
 * (as gold work, so it displaces bronze market work), everything else goes to auction
 * (auction-round.ts) and runs on the winner's slots; bronze runs are preempted by the
 * scheduler's rule, failed and bad runs fail over to a fresh auction without that provider,
 * and reputation follows the receipts. In `baseline` mode there is no market: owners queue on
 * their own GPUs only and renters rent on demand from one cloud.
 */

import { ROUND_RETRY_MS, ROUNDS_PER_ATTEMPT } from '../../submit/index.js'
import { microToUsd } from '../../market/index.js'
import { EventQueue } from './event-queue.js'
import { jobIdOf, NO_EXCLUSIONS, renterBytes, topReason, type EngineOptions, type Event, type JobState, type Run, type RunRecord } from './engine-parts.js'
import { Candidates } from './candidates.js'
import { Metrics } from '../report/metrics.js'
import { ReputationBook } from '../model/reputation-book.js'
import { jobRequestFor, runAuction } from './auction-round.js'
import type { Population, SimJob } from '../model/population.js'
import type { SimProvider } from '../model/provider.js'
import { ownPlacement, refusalOf, type Placement } from './placement.js'
import { listPriceUsd } from '../model/list-prices.js'
import { SIM_EPOCH_MS } from '../report/summary.js'

export type { EngineOptions, Mode, RunRecord } from './engine-parts.js'
import { applyWindow, nextFlip, whileOpen, windowOpen } from './idle-windows.js'
import type { PreemptNotice } from '../../exec/index.js'
import type { Scenario } from '../scenario.js'

const DAY = 24 * 3600_000

export class SimEngine {
  now = 0
  readonly metrics: Metrics
  readonly reputation: ReputationBook
  readonly runs: RunRecord[] = []
  private readonly queue = new EventQueue<Event>()
  private readonly candidates: Candidates
  private readonly ownQueues: JobState[][]
  private readonly active = new Map<number, Run>()
  private readonly regionIndex = new Map<string, number>()
  /** GPUs of each owner's biggest node: own work needing more can never start */
  private readonly biggestNode: number[]
  private done = 0
  /** job indices in arrival order (ties by index); arrivals are read from here, not queued */
  private readonly arrivals: Int32Array
  private nextArrival = 0
  /** 1 while a provider's availability window is closed (market mode): it is out of the capacity index */
  private readonly closed: Uint8Array

  constructor (
    private readonly scenario: Scenario,
    private readonly pop: Population,
    private readonly opts: EngineOptions
  ) {
    scenario.population.regions.forEach((r, i) => this.regionIndex.set(r.name, i))
    this.metrics = new Metrics(
      opts.horizonMs,
      scenario.report.bucketMinutes * 60_000,
      scenario.population.regions.length
    )
    // trust weighs renters' receipts only where there are keys outside the real renters and owners
    const seeds = opts.mode === 'market' && pop.sybils.length > 0 ? [...new Set(pop.jobs.map(j => j.renter))] : undefined
    this.reputation = new ReputationBook(scenario.market.reputationRefreshMinutes * 60_000, seeds)
    this.ownQueues = pop.owners.map(() => [])
    this.biggestNode = pop.owners.map(list => Math.max(0, ...list.map(i => pop.providers[i]?.gpus ?? 0)))
    this.closed = new Uint8Array(pop.providers.length)
    this.candidates = new Candidates(pop.providers)
    for (const p of pop.providers) {
      if (opts.mode === 'market' && p.idleWindows) {
        if (!windowOpen(p, 0)) { this.closed[p.index] = 1; applyWindow(p, false) }
        const at = nextFlip(p, 0)
        if (at != null && pop.jobs.length > 0) this.queue.push(at, { k: 'window', provider: p })
      }
      this.candidates.file(p)
      this.updateIndex(p)
    }
    // a million arrivals are not queued up front: they are read in order and come before any
    // queued event of the same time (as when they were queued first)
    this.arrivals = Int32Array.from(pop.jobs.keys())
    const jobs = pop.jobs
    let sorted = true
    for (let i = 1; i < jobs.length && sorted; i++) {
      sorted = (jobs[i - 1] as SimJob).task.arrivalMs <= (jobs[i] as SimJob).task.arrivalMs
    }
    if (!sorted) {
      this.arrivals.sort((a, b) => (jobs[a] as SimJob).task.arrivalMs - (jobs[b] as SimJob).task.arrivalMs || a - b)
    }
    if (opts.mode === 'market' && pop.sybils.length > 0) this.queue.push(0, { k: 'sybil' })
  }

  /** Runs until every job has ended and every run has finished. */
  run (): void {
    const jobs = this.pop.jobs
    for (;;) {
      if (this.nextArrival < jobs.length) {
        const index = this.arrivals[this.nextArrival] as number
        const job = jobs[index] as SimJob
        if (job.task.arrivalMs <= this.queue.peekTime()) {
          this.nextArrival++
          this.now = job.task.arrivalMs
          this.reputation.setNow(this.now)
          this.arrive({ job, index, attempt: 0, rounds: 0, deadline: 0, firstStart: -1, exclude: undefined, lastReason: '' })
          continue
        }
      }
      const ev = this.queue.pop()
      if (ev == null) break
      this.now = this.queue.poppedTime
      this.reputation.setNow(this.now)
      switch (ev.k) {
        case 'auction': this.auction(ev.js); break
        case 'start': this.start(ev.run); break
        case 'end': this.finish(ev.run); break
        case 'release': ev.lease.release(); this.freed(ev.provider); break
        case 'sybil': this.sybilReceipts(); break
        case 'window': this.windowFlip(ev.provider); break
      }
    }
  }

  private arrive (js: JobState): void {
    const { job } = js
    this.metrics.tiers[job.tier].jobs++
    if (job.task.gpus > 1) this.metrics.multiGpu.jobs++
    js.deadline = this.now + this.scenario.market.patienceMinutes[job.tier] * 60_000
    if (job.owner >= 0) {
      if (job.task.gpus > (this.biggestNode[job.owner] ?? 0)) { this.endJob(js, 'refused', 'needs more GPUs than any node of its owner has'); return }
      if (this.placeOwn(js)) return
      // static clusters wait; with a market, work of one GPU goes to auction (a job request is one slot)
      if (this.opts.mode === 'baseline' || job.task.gpus > 1) { this.ownQueues[job.owner]?.push(js); return }
    } else if (this.opts.mode === 'baseline') {
      this.cloudRun(js)
      return
    }
    const refusal = refusalOf(job, this.candidates)
    if (refusal != null) { this.endJob(js, 'refused', refusal); return }
    this.auction(js)
  }

  private auction (js: JobState): void {
    const { job } = js
    if (this.now >= js.deadline) { this.endJob(js, 'expired', js.lastReason === '' ? 'no award' : js.lastReason); return }
    const m = this.metrics
    m.auctions++
    // providers this job failed on, by index (made only when needed)
    let skip: Set<number> | undefined
    if (js.exclude != null) { skip = new Set(); for (const id of js.exclude) skip.add(Number(id.slice(5))) }
    const picked = this.candidates.pick(job, { count: this.scenario.market.candidates, rng: this.opts.rng, skip })
    const gpus = job.task.gpus
    const wall = this.now + SIM_EPOCH_MS
    const request = jobRequestFor(job, {
      jobId: jobIdOf(js.index),
      renter: renterBytes,
      scenario: this.scenario,
      now: wall
    })
    const result = runAuction({
      request,
      candidates: picked.map(i => this.pop.providers[i] as SimProvider),
      renterRegion: job.region.name,
      reputation: this.reputation,
      exclude: js.exclude ?? NO_EXCLUSIONS,
      latency: this.opts.latency,
      now: wall
    })
    for (const [r, n] of Object.entries(result.declines)) m.count(m.declines, r, n)
    for (const [r, n] of Object.entries(result.dropped)) m.count(m.dropped, r, n)
    const closeAt = this.now + request.bidWindowMs
    for (const [i, offer] of result.ranked.entries()) {
      const p = offer.provider
      // the winner's Start check: all N slots at once, free or (gold/silver) bronze to displace
      if ('refused' in p.scheduler.canAccept({ tier: job.tier, gpus })) continue
      const price = result.prices[i] as bigint
      for (const other of result.ranked) other.provider.engine.observeClearing(job.renter, price, job.tier)
      p.engine.recordWin(price, request)
      m.price(job.tier, this.now, microToUsd(price))
      const displacing = p.scheduler.freeCount() < gpus
      const start = closeAt + offer.rttMs + (displacing ? p.scheduler.graceMs : 0)
      this.place(js, { provider: p, gpus, price: Number(price), own: false, timeClass: offer.timeClass, start })
      return
    }
    m.noBidAuctions++
    js.lastReason = result.ranked.length > 0 ? 'winners declined' : topReason(result.declines, result.dropped, picked.length)
    js.rounds++
    const delay = js.rounds % ROUNDS_PER_ATTEMPT !== 0 ? ROUND_RETRY_MS : this.scenario.market.retryMinutes * 60_000
    this.queue.push(Math.min(this.now + delay, js.deadline), { k: 'auction', js })
  }

  /** Places own work on a free node of the owner, else one whose bronze work it displaces. */
  private placeOwn (js: JobState, nodes: readonly number[] = this.pop.owners[js.job.owner] ?? []): boolean {
    const placement = ownPlacement(this.pop.providers, nodes, js.job.task.gpus, this.now)
    if (placement == null) return false
    this.place(js, placement)
    return true
  }

  /**
   * Reserves the run's slots on its provider and schedules its start (a market award first moves
   * the inputs its winner lacks).
   */
  private place (js: JobState, placement: Placement): void {
    const { provider: p, gpus, price, own, timeClass } = placement
    let start = placement.start
    js.attempt++
    if (!own) this.metrics.count(this.metrics.awardsByConduct, p.conduct)
    // a market award first moves the inputs the winner lacks (the bid window closed at now + bidWindowMs)
    if (!own && this.opts.data != null) {
      start += this.opts.data.award(p.index, js.index, this.now + this.scenario.market.bidWindowMs, start)
    }
    const run: Run = { js, provider: p, leases: [], start, price, own, timeClass, state: 'pending', outcome: 'ok', end: 0 }
    // own work is the owner's priority: it takes slots as gold does
    const tier = own ? 'gold' : js.job.tier
    for (let i = 0; i < gpus; i++) {
      const key = `${js.index}/${js.attempt}/${i}`
      const lease = own
        ? whileOpen(p, this.closed[p.index] === 1, () => p.scheduler.reserve({ key, tier }))
        : p.scheduler.reserve({ key, tier })
      if ('refused' in lease) throw new Error(`slot refused after a capacity check: ${lease.detail}`)
      run.leases.push(lease)
      if (lease.preemptible) lease.onPreempt(notice => { this.preempted(run, notice) })
    }
    this.updateIndex(p)
    this.queue.push(start, { k: 'start', run })
  }

  private start (run: Run): void {
    if (run.state !== 'pending') return
    run.state = 'running'
    const { js } = run
    if (js.firstStart < 0) {
      js.firstStart = this.now
      this.metrics.tiers[js.job.tier].waitsMs.push(this.now - js.job.task.arrivalMs)
    }
    for (const l of run.leases) {
      const key = run.provider.index * 64 + l.gpu.index
      const held = this.active.get(key)
      if (held != null && held !== run) this.metrics.doubleBookings++
      this.active.set(key, run)
    }
    const duration = js.job.task.durationMs
    run.end = this.now + duration
    if (!run.own && run.provider.conduct === 'failing' && this.opts.rng.chance(0.5)) {
      run.outcome = 'failed'
      run.end = this.now + Math.max(1, Math.floor(duration * this.opts.rng.next()))
    } else if (!run.own && run.provider.conduct === 'lying') {
      run.outcome = 'bad-output'
    }
    this.queue.push(run.end, { k: 'end', run })
  }

  private finish (run: Run): void {
    if (run.state !== 'running') return
    run.state = 'over'
    const { js, provider: p } = run
    const tier = js.job.tier
    const c = this.metrics.tiers[tier]
    const gpus = run.leases.length
    const hours = Metrics.hours(this.now - run.start, gpus)
    this.stopRun(run, this.now)
    for (const l of run.leases) l.release()
    if (!run.own) this.reputation.record({ provider: p.id, renter: js.job.renter, outcome: run.outcome, preemptible: tier === 'bronze', time: this.now })
    if (run.outcome === 'ok') {
      c.usefulGpuHours += hours
      if (!run.own) {
        const paid = microToUsd(run.price) * hours
        c.paidUsd += paid
        c.usefulMarketGpuHours += hours
        c.onDemandUsd += listPriceUsd(p.modelKey) * hours
        this.metrics.earnedByClass[run.timeClass] += paid
        this.metrics.earnedByWindows[p.idleWindows ? 'idleWindows' : 'always'] += paid
        if (gpus > 1) this.metrics.multiGpu.servedOnMarket++
      }
      this.endJob(js, 'served')
    } else {
      // a failed or bad run is not paid; the renter fails over to a fresh auction without this provider
      c.lostGpuHours += hours
      c.failovers++
      (js.exclude ??= new Set()).add(p.id)
      this.retry(js, `${run.outcome} on ${p.id}`)
    }
    this.freed(p)
  }

  private preempted (run: Run, notice: PreemptNotice): void {
    if (run.state === 'over') return
    const { js } = run
    const c = this.metrics.tiers[js.job.tier]
    const releaseAt = this.now + notice.graceMs
    if (run.state === 'running') {
      const hours = Metrics.hours(this.now - run.start, run.leases.length)
      // interruptible work is paid for the time it ran, and that time is lost
      c.lostGpuHours += hours
      c.paidUsd += microToUsd(run.price) * hours
      this.stopRun(run, releaseAt)
      this.reputation.record({ provider: run.provider.id, renter: js.job.renter, outcome: 'preempted', preemptible: true, time: this.now })
    }
    run.state = 'over'
    c.preemptions++
    if (notice.reason === 'window') c.windowPreemptions++
    for (const lease of run.leases) this.queue.push(releaseAt, { k: 'release', lease, provider: run.provider })
    js.deadline = releaseAt + this.scenario.market.patienceMinutes[js.job.tier] * 60_000
    this.queue.push(releaseAt, { k: 'auction', js })
  }

  private retry (js: JobState, reason: string): void {
    js.lastReason = reason
    js.deadline = this.now + this.scenario.market.patienceMinutes[js.job.tier] * 60_000
    this.queue.push(this.now, { k: 'auction', js })
  }

  /** Books a run's GPU time, ending at `end`, and frees its GPUs in the double-booking check. */
  private stopRun (run: Run, end: number): void {
    const region = this.regionIndex.get(run.provider.region.name) ?? 0
    this.metrics.busy(region, { own: run.own, start: run.start, end, gpus: run.leases.length })
    if (this.opts.recordRuns === true) {
      for (const l of run.leases) {
        this.runs.push({ provider: run.provider.index, gpu: l.gpu.index, start: run.start, end })
      }
    }
    for (const l of run.leases) {
      const key = run.provider.index * 64 + l.gpu.index
      if (this.active.get(key) === run) this.active.delete(key)
    }
  }

  /** The old way for a renter: one cloud, on demand, at once, at the list price of the cheapest GPU it accepts. */
  private cloudRun (js: JobState): void {
    const { task } = js.job
    const c = this.metrics.tiers[js.job.tier]
    const hours = Metrics.hours(task.durationMs, task.gpus)
    c.waitsMs.push(0)
    c.usefulGpuHours += hours
    c.usefulMarketGpuHours += hours
    const models = js.job.models.length > 0 ? js.job.models : ['t4-16gb']
    c.onDemandUsd += Math.min(...models.map(listPriceUsd)) * hours
    c.paidUsd += Math.min(...models.map(listPriceUsd)) * hours
    this.endJob(js, 'served')
  }

  private freed (p: SimProvider): void {
    this.updateIndex(p)
    const queue = this.ownQueues[p.owner]
    if (queue == null || queue.length === 0) return
    // only p's slots changed: first fit on p among the oldest few waiting (small backfill, as cluster schedulers do)
    for (let i = 0; i < Math.min(queue.length, 16); i++) {
      if (this.placeOwn(queue[i] as JobState, [p.index])) { queue.splice(i, 1); i-- }
    }
  }

  /**
   * A provider's window opened or closed: its scheduler's pause follows (closing preempts its
   * bronze work, idle-windows.ts); market work it keeps past the end is counted.
   */
  private windowFlip (p: SimProvider): void {
    const open = windowOpen(p, this.now)
    this.closed[p.index] = open ? 0 : 1
    if (!open) {
      for (let g = 0; g < p.gpus; g++) {
        const run = this.active.get(p.index * 64 + g)
        if (run != null && !run.own && run.state === 'running' && run.js.job.tier !== 'bronze') this.metrics.windowOverrunGpuHours += Metrics.hours(run.end - this.now, 1)
      }
    }
    applyWindow(p, open)
    this.updateIndex(p)
    const at = nextFlip(p, this.now)
    // windows flip for as long as jobs are left (runs may outlast the horizon)
    if (at != null && this.done < this.pop.jobs.length) this.queue.push(at, { k: 'window', provider: p })
  }

  private updateIndex (p: SimProvider): void {
    this.candidates.update(p, this.closed[p.index] === 0)
  }

  private endJob (js: JobState, outcome: 'served' | 'expired' | 'refused', reason?: string): void {
    this.metrics.end(js.job.tier, outcome, reason)
    if (js.job.task.gpus > 1) this.metrics.multiGpu[outcome]++
    this.done++
    if ((this.done & 1023) === 0) this.opts.onProgress?.(this.done)
  }

  /** Sybil renters write an OK receipt a day for every lying provider (no job behind it). */
  private sybilReceipts (): void {
    for (const p of this.pop.providers) {
      if (p.conduct !== 'lying') continue
      for (const s of this.pop.sybils) this.reputation.record({ provider: p.id, renter: s, outcome: 'ok', preemptible: false, time: this.now })
    }
    if (this.now + DAY < this.opts.horizonMs) this.queue.push(this.now + DAY, { k: 'sybil' })
  }

  get jobsDone (): number {
    return this.done
  }
}
