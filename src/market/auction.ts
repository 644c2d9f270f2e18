/**
 * The renter's side of the reverse auction: publish the signed JobRequest, collect bids for
 * the window, drop invalid ones, rank the rest, publish a signed Award, have the winner accept
 * over /idlegrid/accept/1.0.0 before the deadline, fail over down the ranking otherwise, and
 * report what happened (with decline reasons from /idlegrid/explain/1.0.0 when few or no
 * providers bid).
 */

import { peerIdFromString } from '@libp2p/peer-id'
import { multiaddr } from '@multiformats/multiaddr'
import { equals as equalBytes } from 'uint8arrays/equals'
import { MAX_BYTES } from '../../protocols/codec.js'
import { PROTOCOL, TOPIC } from '../../protocols/ids.js'
import { AcceptRequest, ExplainRequest } from '../../protocols/market.js'
import { AuctionError, MarketStreamError } from './errors.js'
import { toJobRequest, type JobSpec } from './job-spec.js'
import {
  DeclineReason, declineReasonName, microToUsd, peerIdFromBytes, pricingRuleName, readAcceptResponse, readDecline, signAward, signJobRequest,
  toHex, type Award, type Bid, type JobRequest, type Signed
} from './messages.js'
import { DEFAULT_RANKING, bidsDigest, clearingPrice, latencyMatters, rankBids, selectValidBids, type RankedBid, type RankingParams } from './ranking.js'
import { requestOnce, type StreamComponents } from './stream.js'
import type { ReputationSource } from './reputation.js'
import type { GossipsubEvents } from '@chainsafe/libp2p-gossipsub'
import type { Ed25519PrivateKey, Logger, PeerId, PeerStore, PrivateKey, PubSub } from '@libp2p/interface'
import type { PingService } from '@libp2p/ping'

/** Winners tried per auction before giving up. */
export const MAX_ATTEMPTS = 8
/** Providers asked "why not?" at most, and how many at once. */
const MAX_EXPLAIN = 64
const EXPLAIN_CONCURRENCY = 8
const EXPLAIN_TIMEOUT_MS = 4_000
/** Round-trip measurement bound per provider. */
const PING_TIMEOUT_MS = 1_000
/** Longest wait for a first jobs-topic peer before publishing anyway. */
const TOPIC_PEER_WAIT_MS = 5_000
/** Bidders dialled during the window (the first ones), and how long each dial may take. */
const PREDIAL_BIDDERS = 16
const PREDIAL_TIMEOUT_MS = 5_000
/** Bids accepted per auction; more are counted but not kept. */
const MAX_BIDS_PER_AUCTION = 1_000

export interface AuctionComponents extends StreamComponents {
  peerId: PeerId
  peerStore: PeerStore
  privateKey: PrivateKey
  pubsub: PubSub<GossipsubEvents>
  ping: PingService
}

export interface AuctionOptions {
  signal?: AbortSignal
  /** progress: published, bid, closed, award, accept, explain */
  onEvent?: (event: AuctionEvent) => void
  /** ask non-bidders why when fewer than this many valid bids arrived (0: only when none) */
  explainBelow?: number
  /** keeps the job id of an earlier auction (re-auction) */
  jobId?: Uint8Array
  /** providers (peer id text) whose bids are dropped as "failed-this-job": they already failed it */
  exclude?: readonly string[]
}

export type AuctionEvent =
  | { type: 'published', jobId: string, windowMs: number }
  | { type: 'bid', provider: string, price: number }
  | { type: 'closed', bids: number, valid: number }
  | { type: 'award', attempt: number, winner: string, price: number }
  | { type: 'accept', attempt: number, winner: string, outcome: AttemptOutcome, reason?: string }
  | { type: 'explain', asked: number }

export type AttemptOutcome = 'accepted' | 'declined' | 'timeout' | 'error'

export interface BidRow {
  provider: string
  /** USD per GPU-hour */
  price: number
  priceMicroUsd: string
  gpu: string
  vramMib: number
  region: string
  residency: string
  simulated: boolean
  reliability: number
  rttMs?: number
  score?: number
  /** 1 = best, among valid bids */
  rank?: number
  /** why it was dropped, when it was */
  dropped?: string
}

export interface AwardRow {
  winner: string
  /** clearing price, USD per GPU-hour */
  price: number
  priceMicroUsd: string
  attempt: number
  pricing: string
  /** why this provider won, in words */
  reason: string
  bidsDigest: string
  runnerUp: string[]
}

export interface DeclineCounts {
  /** providers asked */
  asked: number
  answered: number
  /** counts by reason name (no-capacity, vram, residency, …; no-answer for silence) */
  declines: Record<string, number>
  details: Array<{ provider: string, reason: string, detail: string }>
}

export interface AuctionReport {
  jobId: string
  name: string
  tier: string
  pricing: string
  windowMs: number
  bids: BidRow[]
  validBids: number
  award?: AwardRow
  attempts: Array<{ attempt: number, winner: string, outcome: AttemptOutcome, reason?: string }>
  /** set when no valid bid arrived: why, with the providers' decline reasons */
  noBids?: DeclineCounts & { reason: string }
  /** set when valid bids arrived but no winner accepted */
  noAward?: { reason: string }
  /** answers to "why not?" when asked while some bids arrived */
  explain?: DeclineCounts
  timings: { publishToCloseMs: number, publishToAwardMs?: number, publishToAcceptedMs?: number }
  /** the signed messages, for the job stream and audits (not in JSON output) */
  signed?: { job: Signed<JobRequest>, award?: Signed<Award>, bids: Array<Signed<Bid>> }
}

interface Collector {
  job: JobRequest
  windowEnd: number
  bids: Array<Signed<Bid>>
  late: number
  overflow: number
  onBid?: (bid: Signed<Bid>) => void
}

export interface AuctioneerInit {
  reputation: () => ReputationSource
  ranking?: RankingParams
  /** peers worth asking "why not?" for a job (discovery, heartbeats …) */
  candidates?: (job: JobRequest, signal: AbortSignal) => Promise<string[]>
  log: Logger
}

export class Auctioneer {
  private readonly components: AuctionComponents
  private readonly init: AuctioneerInit
  private readonly active = new Map<string, Collector>()

  constructor (components: AuctionComponents, init: AuctioneerInit) {
    this.components = components
    this.init = init
  }

  /** Feeds a verified bid from gossip to the auction it answers, if any runs here. */
  offer (bid: Signed<Bid>): void {
    const collector = this.active.get(toHex(bid.message.jobId))
    if (collector == null) return
    if (Date.now() > collector.windowEnd) { collector.late++; return }
    if (collector.bids.length >= MAX_BIDS_PER_AUCTION) { collector.overflow++; return }
    collector.bids.push(bid)
    this.learnAddrs(bid)
    // connect while the window is still open, so the winner's accept stream pays no dial
    if (collector.bids.length <= PREDIAL_BIDDERS) {
      this.components.connectionManager.openConnection(bid.signer, { signal: AbortSignal.timeout(PREDIAL_TIMEOUT_MS) }).catch(() => {})
    }
    collector.onBid?.(bid)
  }

  /** Keeps a bidder's advertised addresses so the accept stream needs no DHT lookup. */
  private learnAddrs (bid: Signed<Bid>): void {
    const multiaddrs = bid.message.addrs.flatMap(bytes => { try { return [multiaddr(bytes)] } catch { return [] } })
    if (multiaddrs.length === 0) return
    this.components.peerStore.merge(bid.signer, { multiaddrs }).catch((err) => { this.init.log('addresses of %p not kept: %e', bid.signer, err) })
  }

  get running (): number {
    return this.active.size
  }

  async run (spec: JobSpec, opts: AuctionOptions = {}): Promise<AuctionReport> {
    const { peerId } = this.components
    const signal = opts.signal ?? AbortSignal.timeout(10 * 60_000)
    const emit = opts.onEvent ?? (() => {})
    await this.topicPeers(signal)
    const job = toJobRequest(spec, { renter: peerId.toMultihash().bytes, jobId: opts.jobId })
    const jobId = toHex(job.jobId)
    if (this.active.has(jobId)) throw new AuctionError(`an auction for job ${jobId} is already running`)
    const signedJob = signJobRequest(this.components.privateKey as Ed25519PrivateKey, peerId, job)
    const windowEnd = Number(job.createdAt) + job.bidWindowMs
    const collector: Collector = { job, windowEnd, bids: [], late: 0, overflow: 0 }
    collector.onBid = (bid) => { emit({ type: 'bid', provider: bid.signer.toString(), price: microToUsd(bid.message.priceMicroUsd) }) }
    this.active.set(jobId, collector)
    const publishedAt = Date.now()
    const report: AuctionReport = {
      jobId,
      name: spec.name,
      tier: spec.tier,
      pricing: spec.auction.pricing,
      windowMs: job.bidWindowMs,
      bids: [],
      validBids: 0,
      attempts: [],
      timings: { publishToCloseMs: 0 },
      signed: { job: signedJob, bids: collector.bids }
    }
    try {
      await this.components.pubsub.publish(TOPIC.jobs, signedJob.envelope)
      emit({ type: 'published', jobId, windowMs: job.bidWindowMs })
      await sleep(windowEnd - Date.now(), signal)
      const closedAt = Date.now()
      report.timings.publishToCloseMs = closedAt - publishedAt
      const reputation = this.init.reputation()
      const rttMs = latencyMatters(job) ? await this.measureRtt(collector.bids, job, signal) : undefined
      const ctx = { reputation, rttMs, exclude: new Set(opts.exclude ?? []) }
      const { valid, dropped } = selectValidBids(collector.bids, job, ctx, closedAt)
      const ranked = rankBids(valid, job, ctx, this.init.ranking ?? DEFAULT_RANKING)
      report.validBids = valid.length
      report.bids = [
        ...ranked.map((r, i) => bidRow(r.bid, { reliability: r.reliability, rttMs: r.rttMs, score: r.score / 1_000_000, rank: i + 1 })),
        ...dropped.map(d => bidRow(d.bid, { reliability: reputation.reliability(d.provider), rttMs: rttMs?.get(d.provider), dropped: d.reason }))
      ]
      emit({ type: 'closed', bids: collector.bids.length, valid: valid.length })
      if (ranked.length === 0) {
        const counts = await this.askWhyNot(job, signedJob, new Set(collector.bids.map(b => b.signer.toString())), signal, emit)
        report.noBids = { ...counts, reason: noBidsReason(collector.bids.length, dropped.map(d => d.reason), counts) }
        return report
      }
      if (ranked.length < (opts.explainBelow ?? 0)) {
        report.explain = await this.askWhyNot(job, signedJob, new Set(ranked.map(r => r.provider)), signal, emit)
      }
      const digest = bidsDigest(valid)
      const attempts = Math.min(ranked.length, MAX_ATTEMPTS)
      for (let i = 0; i < attempts; i++) {
        const candidate = ranked[i] as RankedBid
        const award = this.buildAward(job, ranked, i, digest, spec.auction.acceptTimeoutMs)
        const signedAward = signAward(this.components.privateKey as Ed25519PrivateKey, peerId, award)
        await this.components.pubsub.publish(TOPIC.awards, signedAward.envelope)
        report.timings.publishToAwardMs ??= Date.now() - publishedAt
        emit({ type: 'award', attempt: award.attempt, winner: candidate.provider, price: microToUsd(award.clearingPriceMicroUsd) })
        const outcome = await this.askAccept(candidate.bid.signer, signedAward, signal)
        report.attempts.push({ attempt: award.attempt, winner: candidate.provider, ...outcome })
        emit({ type: 'accept', attempt: award.attempt, winner: candidate.provider, ...outcome })
        if (outcome.outcome === 'accepted') {
          report.timings.publishToAcceptedMs = Date.now() - publishedAt
          report.award = awardRow(award, ranked, i)
          if (report.signed != null) report.signed.award = signedAward
          return report
        }
      }
      report.noAward = {
        reason: `none of the ${attempts} best of ${ranked.length} valid bidders accepted: ${report.attempts.map(a => `${shortPeer(a.winner)} ${a.outcome}${a.reason != null ? ` (${a.reason})` : ''}`).join('; ')}`
      }
      return report
    } finally {
      this.active.delete(jobId)
    }
  }

  /**
   * A node that just joined may not be in any gossip mesh yet: its job would reach nobody and
   * bids would not come back. Wait (bounded) until it has mesh peers on the jobs and bids topics.
   */
  private async topicPeers (signal: AbortSignal): Promise<void> {
    const deadline = Date.now() + TOPIC_PEER_WAIT_MS
    const pubsub = this.components.pubsub as PubSub<GossipsubEvents> & { getMeshPeers?: (topic: string) => unknown[] }
    const ready = (topic: string): boolean => (pubsub.getMeshPeers?.(topic) ?? pubsub.getSubscribers(topic)).length > 0
    while (!(ready(TOPIC.jobs) && ready(TOPIC.bids)) && Date.now() < deadline) {
      await sleep(50, signal)
    }
  }

  private buildAward (job: JobRequest, ranked: RankedBid[], index: number, digest: Uint8Array, acceptTimeoutMs: number): Award {
    const now = Date.now()
    const candidate = ranked[index] as RankedBid
    const deadline = now + acceptTimeoutMs
    return {
      jobId: job.jobId,
      renter: job.renter,
      winner: candidate.bid.signer.toMultihash().bytes,
      clearingPriceMicroUsd: clearingPrice(ranked, index, job.pricingRule, job.constraints?.maxPriceMicroUsd ?? 0n),
      pricingRule: job.pricingRule,
      bidsDigest: digest,
      runnerUp: ranked.slice(index + 1, index + 1 + 64).map(r => r.bid.signer.toMultihash().bytes),
      acceptDeadline: BigInt(deadline),
      createdAt: BigInt(now),
      // the award outlives its deadline a little so late relays still validate
      expiresAt: BigInt(deadline + 60_000),
      attempt: index + 1,
      validBids: ranked.length,
      winnerBidHash: candidate.bid.hash,
      jobNonce: job.nonce
    }
  }

  private async askAccept (winner: PeerId, award: Signed<Award>, signal: AbortSignal): Promise<{ outcome: AttemptOutcome, reason?: string }> {
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(Math.max(1, Number(award.message.acceptDeadline) - Date.now()))])
    try {
      const bytes = await requestOnce(this.components, winner, PROTOCOL.accept, AcceptRequest.encode({ award: award.envelope }), MAX_BYTES.acceptResponse + 256, deadline)
      const response = readAcceptResponse(bytes, winner)
      if (!equalBytes(response.jobId, award.message.jobId) || response.attempt !== award.message.attempt) return { outcome: 'error', reason: 'answer is for another award' }
      if (Date.now() > Number(award.message.acceptDeadline)) return { outcome: 'timeout', reason: 'answered after the deadline' }
      if (response.accepted) return { outcome: 'accepted' }
      return { outcome: 'declined', reason: `${declineReasonName(response.reason)}${response.detail !== '' ? `: ${response.detail.slice(0, 200)}` : ''}` }
    } catch (err: any) {
      if (signal.aborted) throw new AuctionError('auction cancelled', { cause: err })
      if (err instanceof MarketStreamError && err.reason === 'timeout') return { outcome: 'timeout', reason: 'no answer before the accept deadline' }
      this.init.log('accept from %p failed: %e', winner, err)
      return { outcome: 'error', reason: String(err?.message ?? err).slice(0, 200) }
    }
  }

  /** Round trips to each bidder that could be valid, measured in parallel with a bound. */
  private async measureRtt (bids: ReadonlyArray<Signed<Bid>>, job: JobRequest, signal: AbortSignal): Promise<Map<string, number>> {
    const providers = [...new Map(bids.map(b => [b.signer.toString(), b.signer])).values()].slice(0, MAX_EXPLAIN)
    const bound = Math.min(PING_TIMEOUT_MS, Math.max(100, 2 * (job.constraints?.maxLatencyMs ?? 0)))
    const out = new Map<string, number>()
    await Promise.all(providers.map(async (peer) => {
      const each = AbortSignal.any([signal, AbortSignal.timeout(bound)])
      try {
        // connect first so the round trip does not include the dial
        await this.components.connectionManager.openConnection(peer, { signal: each })
        out.set(peer.toString(), await this.components.ping.ping(peer, { signal: each }))
      } catch (err) {
        this.init.log('no round trip to %p: %e', peer, err)
      }
    }))
    return out
  }

  /** Asks candidates that did not bid validly why, bounded in count, parallelism and time. */
  private async askWhyNot (job: JobRequest, signedJob: Signed<JobRequest>, exclude: Set<string>, signal: AbortSignal, emit: (e: AuctionEvent) => void): Promise<DeclineCounts> {
    const counts: DeclineCounts = { asked: 0, answered: 0, declines: {}, details: [] }
    const candidates = await (this.init.candidates?.(job, AbortSignal.any([signal, AbortSignal.timeout(EXPLAIN_TIMEOUT_MS)])) ?? Promise.resolve([]))
      .catch((err) => { this.init.log('no explain candidates: %e', err); return [] as string[] })
    const me = this.components.peerId.toString()
    const peers = [...new Set(candidates)].filter(p => p !== me && !exclude.has(p)).slice(0, MAX_EXPLAIN)
    if (peers.length === 0) return counts
    emit({ type: 'explain', asked: peers.length })
    const request = ExplainRequest.encode({ jobId: job.jobId, jobRequest: signedJob.envelope })
    const queue = [...peers]
    const worker = async (): Promise<void> => {
      for (let id = queue.shift(); id != null; id = queue.shift()) {
        counts.asked++
        let reason = 'no-answer'
        let detail = ''
        try {
          const peer = peerIdFromString(id)
          const bytes = await requestOnce(this.components, peer, PROTOCOL.explain, request, MAX_BYTES.decline + 256, AbortSignal.any([signal, AbortSignal.timeout(EXPLAIN_TIMEOUT_MS)]))
          const decline = readDecline(bytes, peer)
          counts.answered++
          reason = declineReasonName(decline.reason)
          detail = decline.detail.slice(0, 256)
          if (decline.reason === DeclineReason.WILL_BID) reason = 'will-bid'
        } catch (err: any) {
          detail = String(err?.message ?? err).slice(0, 200)
        }
        counts.declines[reason] = (counts.declines[reason] ?? 0) + 1
        counts.details.push({ provider: id, reason, detail })
      }
    }
    await Promise.all(Array.from({ length: Math.min(EXPLAIN_CONCURRENCY, peers.length) }, worker))
    return counts
  }
}

function bidRow (bid: Signed<Bid>, extra: Partial<BidRow>): BidRow {
  const b = bid.message
  return {
    provider: bid.signer.toString(),
    price: microToUsd(b.priceMicroUsd),
    priceMicroUsd: b.priceMicroUsd.toString(),
    gpu: b.gpuModel,
    vramMib: b.vramMib,
    region: b.region,
    residency: b.residency,
    simulated: b.simulated,
    reliability: extra.reliability ?? 0,
    ...extra
  }
}

function awardRow (award: Award, ranked: RankedBid[], index: number): AwardRow {
  const w = ranked[index] as RankedBid
  const next = ranked[index + 1]
  const terms = [`price ${usd(w.priceMicroUsd)}`, `reliability ${w.reliability.toFixed(2)}`]
  if (w.rttMs != null) terms.push(`rtt ${w.rttMs} ms`)
  if (w.locality > 0) terms.push(`${Math.round(w.locality * 100)} % of datasets cached`)
  let reason = `lowest score price/reliability^w (${terms.join(', ')}; score ${(w.score / 1e6).toFixed(3)})`
  reason += next == null ? ', the only valid bid' : ` beats ${shortPeer(next.provider)} (score ${(next.score / 1e6).toFixed(3)})`
  if (index > 0) reason += `; failover after ${index} earlier winner${index > 1 ? 's' : ''} did not accept`
  reason += award.clearingPriceMicroUsd === w.priceMicroUsd
    ? `; pays its bid (${pricingRuleName(award.pricingRule)})`
    : `; pays ${usd(award.clearingPriceMicroUsd)}, the runner-up's score at its own terms (second-price)`
  return {
    winner: w.provider,
    price: microToUsd(award.clearingPriceMicroUsd),
    priceMicroUsd: award.clearingPriceMicroUsd.toString(),
    attempt: award.attempt,
    pricing: pricingRuleName(award.pricingRule),
    reason,
    bidsDigest: toHex(award.bidsDigest),
    runnerUp: award.runnerUp.map(r => peerIdFromBytes(r).toString())
  }
}

function noBidsReason (received: number, dropped: string[], counts: DeclineCounts): string {
  if (received > 0) {
    const why: Record<string, number> = {}
    for (const d of dropped) why[d] = (why[d] ?? 0) + 1
    return `${received} bid${received > 1 ? 's' : ''} arrived, none valid (${Object.entries(why).map(([r, n]) => `${n} ${r}`).join(', ')})`
  }
  if (counts.asked === 0) return 'no provider bid and none could be asked why (no candidates known)'
  return `no provider bid; ${counts.answered} of ${counts.asked} asked said why`
}

function usd (micro: bigint): string {
  return `${microToUsd(micro).toFixed(2)} USD/GPU-h`
}

function shortPeer (id: string): string {
  return id.length > 16 ? `${id.slice(0, 8)}…${id.slice(-6)}` : id
}

async function sleep (ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) throw new AuctionError('auction cancelled')
  if (ms <= 0) return
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve() }, ms)
    const onAbort = (): void => { clearTimeout(timer); reject(new AuctionError('auction cancelled')) }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}
