/**
 * Follows a running node for the metrics and the dashboard: the renter's auctions and jobs as
 * their services report them (events), and what the services count themselves (their control
 * methods: market.stats, exec.jobs, ledger.status, …) sampled every `sampleMs` and before
 * every scrape. It reads the node; it never changes what the node does.
 */
import { MARKET_PROVIDER_SERVICE, MARKET_RENTER_SERVICE, type AuctionReport } from '../market/index.js'
import { SUBMIT_SERVICE, type SubmitEvent, type SubmitStart } from '../submit/index.js'
import { auctionView, HISTORY_LIMITS, RenterJobs, Ring, type AuctionView, type PricePoint, type ProviderSample, type RenterJobView } from './history.js'
import type { ControlHandler } from '../control/index.js'
import type { IdlegridNode } from '../node/index.js'
import type { IdlegridMetrics, PulledCounts } from './metrics.js'

/** A control method answered within this, or its figures are skipped this round. */
const CALL_TIMEOUT_MS = 5_000
/** Provider runs remembered as already counted. */
const MAX_COUNTED_RUNS = 10_000

export interface ObserverOptions {
  /** the node's control methods (the CLI's nodeHandlers): where pulled figures come from */
  handlers: Record<string, ControlHandler>
  metrics?: IdlegridMetrics
  /** how often the provider's figures are sampled (default 10 s) */
  sampleMs?: number
}

interface ExecRun { attemptKey: string, state: string, status?: string, startedAt?: number, endedAt?: number }

export class NodeObserver {
  private readonly auctions = new Ring<AuctionView>(HISTORY_LIMITS.auctions)
  private readonly renterJobs = new RenterJobs()
  private readonly samples = new Ring<ProviderSample>(HISTORY_LIMITS.samples)
  private readonly prices = new Ring<PricePoint>(HISTORY_LIMITS.prices)
  private readonly countedRuns = new Set<string>()
  /** bytes already counted per renter attempt ("jobId/attempt") */
  private readonly moved = new Map<string, { sent: number, received: number }>()
  private readonly stops: Array<() => void> = []
  private timer?: ReturnType<typeof setInterval>
  private sampling?: Promise<void>

  constructor (private readonly node: IdlegridNode, private readonly opts: ObserverOptions) {}

  start (): void {
    const services = this.node.libp2p.services as Record<string, { events?: EventTarget } | undefined>
    this.listen(services[MARKET_RENTER_SERVICE]?.events, 'report', (d) => { this.onReport(d as AuctionReport) })
    this.listen(services[MARKET_PROVIDER_SERVICE]?.events, 'award', (d) => {
      const price = Number((d as { priceUsd: unknown }).priceUsd)
      if (!Number.isFinite(price)) return
      this.prices.push({ at: Date.now(), priceUsd: price, side: 'provider' })
      this.opts.metrics?.awardSeen(price)
    })
    const submit = services[SUBMIT_SERVICE]?.events
    this.listen(submit, 'start', (d) => { this.renterJobs.start(d as SubmitStart) })
    this.listen(submit, 'event', (d) => {
      const { jobId, event } = d as { jobId: string, event: SubmitEvent }
      this.renterJobs.event(jobId, event)
      this.countBytes(jobId, event)
    })
    this.listen(submit, 'summary', (d) => { this.onSummary(d as Parameters<RenterJobs['end']>[0]) })
    const sampleMs = this.opts.sampleMs ?? 10_000
    this.timer = setInterval(() => { void this.sample() }, sampleMs)
    this.timer.unref()
    void this.sample()
  }

  stop (): void {
    clearInterval(this.timer)
    for (const stop of this.stops.splice(0)) stop()
  }

  recentAuctions (): AuctionView[] { return this.auctions.list() }
  jobs (): RenterJobView[] { return this.renterJobs.list() }
  providerSamples (): ProviderSample[] { return this.samples.list() }
  clearingPrices (): PricePoint[] { return this.prices.list() }

  /** Reads every pulled figure now (one read at a time); a failed call only skips its figures. */
  async sample (): Promise<void> {
    this.sampling ??= this.readAll().finally(() => { this.sampling = undefined })
    await this.sampling
  }

  /** Calls one of the node's control methods; undefined when it is not there or failed. */
  async call (method: string, params: Record<string, unknown> = {}): Promise<any> {
    const handler = Object.hasOwn(this.opts.handlers, method) ? this.opts.handlers[method] : undefined
    if (handler == null) return undefined
    try {
      return await handler(params, () => {}, AbortSignal.timeout(CALL_TIMEOUT_MS))
    } catch {
      return undefined
    }
  }

  private async readAll (): Promise<void> {
    const [status, market, exec, ledger, earnings] = await Promise.all([
      this.call('status'), this.call('market.stats'), this.call('exec.jobs'), this.call('ledger.status'), this.call('ledger.earnings')
    ])
    const counts: PulledCounts = {}
    if (status != null) {
      const heard: Record<string, number> = {}
      for (const p of status.heard as Array<{ role: string }>) heard[p.role] = (heard[p.role] ?? 0) + 1
      counts.peers = { connected: status.peers.length, heard }
      counts.gossip = status.gossip
      counts.heartbeats = status.heartbeats
    }
    if (market != null) counts.market = market
    if (ledger != null) {
      counts.ledger = {
        entries: ledger.entries,
        authors: ledger.authors,
        quarantined: ledger.quarantine?.entries ?? 0,
        diskBytes: ledger.diskBytes
      }
    }
    const earnedUsd = earnings != null ? Number(earnings.earnedMicroUsd) / 1e6 : 0
    if (earnings != null && this.node.config.role === 'provider') counts.earnings = { earnedUsd, paidJobs: earnings.paidJobs, fillRate: earnings.fillRate }
    this.opts.metrics?.pull(counts)
    if (exec != null) this.countRuns(exec.jobs as ExecRun[])
    if (market != null) {
      const slots = (exec?.slots ?? []) as Array<{ job?: unknown }>
      this.samples.push({
        at: Date.now(),
        bids: market.bids,
        wins: market.wins,
        fillRate: market.fillRate,
        expectedEarningsUsd: market.expectedEarningsUsd,
        earnedUsd,
        busySlots: slots.filter(s => s.job != null).length,
        totalSlots: slots.length
      })
    }
  }

  private onReport (report: AuctionReport): void {
    const at = Date.now()
    this.auctions.push(auctionView(report, at))
    const outcome = report.award != null ? 'award' : report.noBids != null ? 'no_bids' : 'no_award'
    const dropped = report.bids.filter(b => b.dropped != null).length
    if (report.award != null) this.prices.push({ at, priceUsd: report.award.price, side: 'renter' })
    this.opts.metrics?.auctionEnded(outcome, { valid: report.validBids, dropped }, report.award?.price)
  }

  private onSummary (summary: Parameters<RenterJobs['end']>[0]): void {
    const job = this.renterJobs.end(summary, Date.now())
    for (const key of this.moved.keys()) if (key.startsWith(`${summary.jobId}/`)) this.moved.delete(key)
    if (job != null) this.opts.metrics?.jobEnded('renter', job.status, (job.endedAt ?? job.startedAt) - job.startedAt)
  }

  /** Counts the growth of an attempt's sent and received bytes (its events carry running totals). */
  private countBytes (jobId: string, e: SubmitEvent): void {
    if (e.type !== 'sending' && e.type !== 'receiving') return
    const key = `${jobId}/${e.attempt}`
    const seen = this.moved.get(key) ?? { sent: 0, received: 0 }
    if (this.moved.size > HISTORY_LIMITS.jobs * 10) this.moved.clear()
    if (e.type === 'sending' && e.sentBytes > seen.sent) { this.opts.metrics?.jobBytesMoved('sent', e.sentBytes - seen.sent); seen.sent = e.sentBytes }
    if (e.type === 'receiving' && e.receivedBytes > seen.received) { this.opts.metrics?.jobBytesMoved('received', e.receivedBytes - seen.received); seen.received = e.receivedBytes }
    this.moved.set(key, seen)
  }

  /** A provider's runs that ended since the last look, once each. */
  private countRuns (runs: ExecRun[]): void {
    for (const run of runs) {
      if ((run.state !== 'done' && run.state !== 'rejected') || this.countedRuns.has(run.attemptKey)) continue
      if (this.countedRuns.size >= MAX_COUNTED_RUNS) this.countedRuns.clear()
      this.countedRuns.add(run.attemptKey)
      const duration = run.startedAt != null && run.endedAt != null ? run.endedAt - run.startedAt : -1
      this.opts.metrics?.jobEnded('provider', run.state === 'rejected' ? 'rejected' : run.status ?? 'completed', duration)
    }
  }

  private listen (target: EventTarget | undefined, type: string, onDetail: (detail: unknown) => void): void {
    if (target == null) return
    // a throwing listener would surface as an uncaught exception: observing must never stop the node
    const handler = (evt: Event): void => { try { onDetail((evt as CustomEvent).detail) } catch {} }
    target.addEventListener(type, handler)
    this.stops.push(() => { target.removeEventListener(type, handler) })
  }
}
