/**
 * The node's Prometheus metrics besides libp2p's own: the market's (auctions, bids, wins,
 * fill rate, clearing prices), the job path's (jobs by outcome, durations, bytes,
 * preemptions), earnings, and the ledger's (entries, gossip refusals by reason). One
 * registry per node, so several nodes in one process (tests, the demo) do not mix.
 *
 * Events (an auction's report, a job's summary) are observed as they happen; what the
 * services count themselves (market.stats, gossip verdicts) is read at each scrape and its
 * growth added to a counter, so the counters stay counters.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import { ALL_TOPICS, TOPIC } from '../../protocols/ids.js'
import { DeclineReason } from '../../protocols/market.js'
import { enumLabel, ReasonLabels } from './labels.js'

const PRICE_BUCKETS_USD = [0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32]
const DURATION_BUCKETS_S = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400]

export type Side = 'renter' | 'provider'
export const AUCTION_OUTCOMES = ['award', 'no_bids', 'no_award'] as const
/** a renter's job status (exec's AttemptOutcome, or no_award) and a provider's run status (RunStatus, or rejected) */
export const JOB_OUTCOMES = ['ok', 'failed', 'timeout', 'preempted', 'bad_output', 'bad_attestation', 'rejected', 'lost', 'no_award', 'completed'] as const
// as market.stats names them (declineReasonName: no-capacity, price-floor, …)
const DECLINE_REASONS: readonly string[] = Object.values(DeclineReason).filter((v): v is DeclineReason => typeof v === 'string').map(v => v.toLowerCase().replace(/_/g, '-'))
const VERDICTS = ['accept', 'ignore', 'reject'] as const
const ROLES = ['bootstrap', 'provider', 'renter', 'unknown'] as const

/** What the services count themselves, read at each scrape. */
export interface PulledCounts {
  /** market.stats of a provider */
  market?: {
    jobsSeen: number
    bids: number
    wins: number
    declines: Record<string, number>
    fillRate: number
    expectedEarningsUsd: number
  }
  /** gossip verdicts per topic: { accept: n, "reject:reason": n, "ignore:reason": n } */
  gossip?: Record<string, Record<string, number>>
  /** verdicts on the heartbeats peers sent on the heartbeat stream: { accept: n, "ignore:expired": n, … } */
  heartbeats?: Record<string, number>
  ledger?: { entries: number, authors: number, quarantined: number, diskBytes: number }
  /** this node's earnings in its own ledger view */
  earnings?: { earnedUsd: number, paidJobs: number, fillRate: number }
  peers?: { connected: number, heard: Record<string, number> }
}

export class IdlegridMetrics {
  readonly registry: Registry
  private readonly auctions: Counter<'outcome'>
  private readonly auctionBids: Counter<'verdict'>
  private readonly clearing: Histogram<'side'>
  private readonly jobs: Counter<'side' | 'outcome'>
  private readonly jobDuration: Histogram<'side'>
  private readonly jobBytes: Counter<'direction'>
  private readonly preemptions: Counter<'side'>
  private readonly marketJobsSeen: Counter
  private readonly marketBids: Counter
  private readonly marketWins: Counter
  private readonly marketDeclines: Counter<'reason'>
  private readonly gossip: Counter<'topic' | 'verdict' | 'reason'>
  private readonly ledgerRefusals: Counter<'verdict' | 'reason'>
  private readonly heartbeats: Counter<'verdict' | 'reason'>
  private readonly gauges: Record<'fillRatio' | 'expectedEarnings' | 'earned' | 'paidJobs' | 'ledgerFill' | 'entries' | 'authors' | 'quarantined' | 'diskBytes' | 'peers', Gauge>
  private readonly heard: Gauge<'role'>
  /** the last value read of each pulled counter (by metric and labels) */
  private readonly last = new Map<string, number>()
  private readonly gossipReasons = new ReasonLabels()

  constructor (registry = new Registry()) {
    this.registry = registry
    const registers = [registry]
    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> =>
      new Counter({ name, help, labelNames, registers })
    const gauge = (name: string, help: string): Gauge => new Gauge({ name, help, registers })
    this.auctions = counter('idlegrid_auctions_total', 'auctions this renter ran, by outcome', ['outcome'])
    this.auctionBids = counter('idlegrid_auction_bids_total', 'bids that reached this renter\'s auctions, valid or dropped', ['verdict'])
    this.clearing = new Histogram({ name: 'idlegrid_clearing_price_usd', help: 'clearing prices, USD per GPU-hour: of this renter\'s awards, or of the awards a provider saw', labelNames: ['side'], buckets: PRICE_BUCKETS_USD, registers })
    this.jobs = counter('idlegrid_jobs_total', 'jobs ended, by side and outcome', ['side', 'outcome'])
    this.jobDuration = new Histogram({ name: 'idlegrid_job_duration_seconds', help: 'job durations: a renter\'s whole submit, a provider\'s run', labelNames: ['side'], buckets: DURATION_BUCKETS_S, registers })
    this.jobBytes = counter('idlegrid_job_bytes_total', 'job bytes a renter sent (inputs) and received (outputs)', ['direction'])
    this.preemptions = counter('idlegrid_preemptions_total', 'jobs preempted', ['side'])
    this.marketJobsSeen = counter('idlegrid_market_jobs_seen_total', 'job requests this provider saw')
    this.marketBids = counter('idlegrid_market_bids_total', 'bids this provider sent')
    this.marketWins = counter('idlegrid_market_wins_total', 'awards this provider won and accepted')
    this.marketDeclines = counter('idlegrid_market_declines_total', 'job requests this provider did not bid on, by reason', ['reason'])
    this.gossip = counter('idlegrid_gossip_messages_total', 'gossip messages validated, by topic and verdict (reason for ignore and reject)', ['topic', 'verdict', 'reason'])
    this.ledgerRefusals = counter('idlegrid_ledger_refusals_total', 'ledger entries from gossip not taken, by verdict and reason', ['verdict', 'reason'])
    this.heartbeats = counter('idlegrid_heartbeats_received_total', 'heartbeats peers sent on the heartbeat stream, by verdict (reason for ignore and reject)', ['verdict', 'reason'])
    this.gauges = {
      fillRatio: gauge('idlegrid_market_fill_ratio', 'wins / bids of this provider'),
      expectedEarnings: gauge('idlegrid_expected_earnings_usd', 'this provider\'s accepted awards: clearing price x estimated GPU-hours, USD'),
      earned: gauge('idlegrid_earnings_usd', 'this provider\'s earnings receipted in the ledger, USD'),
      paidJobs: gauge('idlegrid_paid_jobs', 'this provider\'s jobs receipted OK in the ledger'),
      ledgerFill: gauge('idlegrid_ledger_fill_ratio', 'this provider\'s job hours / available hours, from the ledger'),
      entries: gauge('idlegrid_ledger_entries', 'ledger entries stored'),
      authors: gauge('idlegrid_ledger_authors', 'ledger feeds stored'),
      quarantined: gauge('idlegrid_ledger_quarantined_entries', 'entries held in quarantine (authors without standing)'),
      diskBytes: gauge('idlegrid_ledger_disk_bytes', 'ledger size on disk'),
      peers: gauge('idlegrid_peers_connected', 'peers with an open connection')
    }
    this.heard = new Gauge({ name: 'idlegrid_peers_heard', help: 'peers whose signed heartbeats this node accepted, by role', labelNames: ['role'], registers })
  }

  /** One auction this renter ran ended. */
  auctionEnded (
    outcome: (typeof AUCTION_OUTCOMES)[number],
    bids: { valid: number, dropped: number },
    clearingUsd?: number
  ): void {
    this.auctions.inc({ outcome })
    if (bids.valid > 0) this.auctionBids.inc({ verdict: 'valid' }, bids.valid)
    if (bids.dropped > 0) this.auctionBids.inc({ verdict: 'dropped' }, bids.dropped)
    if (clearingUsd != null) this.clearing.observe({ side: 'renter' }, clearingUsd)
  }

  /** A provider saw an award (its own or another's) at this clearing price. */
  awardSeen (clearingUsd: number): void {
    this.clearing.observe({ side: 'provider' }, clearingUsd)
  }

  jobEnded (side: Side, outcome: string, durationMs: number): void {
    const label = enumLabel(outcome, JOB_OUTCOMES)
    this.jobs.inc({ side, outcome: label })
    if (durationMs >= 0) this.jobDuration.observe({ side }, durationMs / 1000)
    if (label === 'preempted') this.preemptions.inc({ side })
  }

  /** A renter's attempt sent or received this many more bytes. */
  jobBytesMoved (direction: 'sent' | 'received', bytes: number): void {
    if (bytes > 0) this.jobBytes.inc({ direction }, bytes)
  }

  /** Takes in what the services count themselves (called before each scrape). */
  pull (counts: PulledCounts): void {
    const m = counts.market
    if (m != null) {
      this.grow(this.marketJobsSeen, 'seen', {}, m.jobsSeen)
      this.grow(this.marketBids, 'bids', {}, m.bids)
      this.grow(this.marketWins, 'wins', {}, m.wins)
      const byReason = new Map<string, number>()
      for (const [reason, n] of Object.entries(m.declines)) {
        const label = enumLabel(reason, DECLINE_REASONS)
        byReason.set(label, (byReason.get(label) ?? 0) + n)
      }
      for (const [reason, n] of byReason) this.grow(this.marketDeclines, `declines:${reason}`, { reason }, n)
      this.gauges.fillRatio.set(m.fillRate)
      this.gauges.expectedEarnings.set(m.expectedEarningsUsd)
    }
    if (counts.gossip != null) this.pullGossip(counts.gossip)
    if (counts.heartbeats != null) this.pullHeartbeats(counts.heartbeats)
    const l = counts.ledger
    if (l != null) {
      this.gauges.entries.set(l.entries)
      this.gauges.authors.set(l.authors)
      this.gauges.quarantined.set(l.quarantined)
      this.gauges.diskBytes.set(l.diskBytes)
    }
    const e = counts.earnings
    if (e != null) {
      this.gauges.earned.set(e.earnedUsd)
      this.gauges.paidJobs.set(e.paidJobs)
      this.gauges.ledgerFill.set(e.fillRate)
    }
    const p = counts.peers
    if (p != null) {
      this.gauges.peers.set(p.connected)
      for (const role of ROLES) this.heard.set({ role }, 0)
      for (const [role, n] of Object.entries(p.heard)) this.heard.inc({ role: enumLabel(role, ROLES) }, n)
    }
  }

  private pullHeartbeats (stats: Record<string, number>): void {
    const sums = new Map<string, { verdict: string, reason: string, n: number }>()
    for (const [key, n] of Object.entries(stats)) {
      const { verdict, reason } = this.verdictLabels(key)
      const id = JSON.stringify([verdict, reason])
      const sum = sums.get(id) ?? { verdict, reason, n: 0 }
      sum.n += n
      sums.set(id, sum)
    }
    for (const [id, { verdict, reason, n }] of sums) this.grow(this.heartbeats, `heartbeats:${id}`, { verdict, reason }, n)
  }

  /** "accept", "ignore:<reason>", "reject:<reason>" as bounded labels */
  private verdictLabels (key: string): { verdict: string, reason: string } {
    const at = key.indexOf(':')
    return { verdict: enumLabel(at < 0 ? key : key.slice(0, at), VERDICTS), reason: at < 0 ? '' : this.gossipReasons.label(key.slice(at + 1)) }
  }

  private pullGossip (stats: Record<string, Record<string, number>>): void {
    const sums = new Map<string, { topic: string, verdict: string, reason: string, n: number }>()
    for (const [topicName, verdicts] of Object.entries(stats)) {
      const topic = enumLabel(topicName, ALL_TOPICS)
      for (const [key, n] of Object.entries(verdicts)) {
        const at = key.indexOf(':')
        const verdict = enumLabel(at < 0 ? key : key.slice(0, at), VERDICTS)
        const reason = at < 0 ? '' : this.gossipReasons.label(key.slice(at + 1))
        const id = JSON.stringify([topic, verdict, reason])
        const sum = sums.get(id) ?? { topic, verdict, reason, n: 0 }
        sum.n += n
        sums.set(id, sum)
      }
    }
    for (const [id, { topic, verdict, reason, n }] of sums) {
      this.grow(this.gossip, `gossip:${id}`, { topic, verdict, reason }, n)
      if (topic === TOPIC.ledger && verdict !== 'accept') this.grow(this.ledgerRefusals, `ledger:${id}`, { verdict, reason }, n)
    }
  }

  /** Adds to `counter` what `total` grew by since it was last read. */
  private grow<L extends string> (
    counter: Counter<L>,
    key: string,
    labels: Partial<Record<L, string>>,
    total: number
  ): void {
    const before = this.last.get(key) ?? 0
    if (total > before) counter.inc(labels, total - before)
    this.last.set(key, Math.max(before, total))
  }
}
