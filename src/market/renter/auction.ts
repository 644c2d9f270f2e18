/**
 * The renter's side of the reverse auction, one round: publish the signed JobRequest on its
 * shard topic, collect the bids providers send straight here for the window (bid-collector.ts),
 * drop invalid ones and rank the rest (ranking.ts), offer the award down the ranking until a winner
 * accepts (award-offers.ts), and report what happened (auction-report.ts), with decline reasons
 * from "why not?" (explain.ts) when few or no providers bid.
 */

import { jobShardOf, type JobShardTopic } from '../../../protocols/ids.js'
import { toHex } from '../../common/index.js'
import { messageAddresses } from '../../node/index.js'
import { offerAward } from './award-offers.js'
import { awardRow, bidRow, localityTerms, noAwardReason, noBidsReason, type AuctionOptions, type AuctionReport, type DeclineCounts } from './auction-report.js'
import { BidCollector, drainDeliveredBids, waitOrCancel, type BidCollectorComponents } from './bid-collector.js'
import type { BidOutcome } from '../shared/bid-stream.js'
import { BidsAuditStore } from '../shared/bids-audit.js'
import { askWhyNot, type ExplainCandidates } from './explain.js'
import { toJobRequest, type JobSpec } from './job-spec.js'
import { microToUsd, signJobRequest, type Bid, type JobRequest } from '../shared/messages.js'
import { DEFAULT_RANKING, bidsDigest, latencyMatters, rankBids, selectValidBids, type BidContext, type RankingParams } from '../shared/ranking.js'
import type { ReputationSource } from '../shared/reputation.js'
import type { OverclaimBook } from './overclaim-book.js'
import type { Signed } from '../../identity/index.js'
import type { Ed25519PrivateKey, Logger, PeerId, PrivateKey } from '@libp2p/interface'
import type { PingService } from '@libp2p/ping'
import type { AddressManager } from '@libp2p/interface-internal'

/** Round-trip measurement bound per provider, and how many bidders are measured at most. */
const PING_TIMEOUT_MS = 1_000
const MAX_RTT_PEERS = 64
/** An auction without a signal of its own gives up after this. */
const DEFAULT_AUCTION_TIMEOUT_MS = 10 * 60_000

export interface AuctionComponents extends BidCollectorComponents {
  peerId: PeerId
  privateKey: PrivateKey
  ping: PingService
  addressManager: AddressManager
}

export interface AuctioneerInit {
  /** the reliability source, read when a window closes */
  reputation: () => ReputationSource
  ranking?: RankingParams
  /** peers worth asking "why not?" for a job (discovery, heartbeats …) */
  candidates?: ExplainCandidates
  /**
   * readies the job's shard before publishing (shard-readiness.ts: the providers that can serve
   * it connected and subscribed), bounded in time; without it the job is published as soon as the shard has a peer
   */
  readyShard?: (shard: JobShardTopic, job: JobRequest, signal: AbortSignal) => Promise<unknown>
  /**
   * waits (bounded) until this node has an address peers outside can dial, so that the job's
   * renter_addrs name one; without it the addresses are taken as they are (a local network)
   */
  readyAddresses?: (signal: AbortSignal) => Promise<boolean>
  /** providers caught overclaiming their input cache: their bids get no locality credit here */
  overclaims?: OverclaimBook
  log: Logger
}

export class Auctioneer {
  private readonly components: AuctionComponents
  private readonly init: AuctioneerInit
  private readonly collector: BidCollector
  /** the valid bids of recent auctions, served to auditors holding an award */
  readonly audits: BidsAuditStore

  constructor (components: AuctionComponents, init: AuctioneerInit) {
    this.components = components
    this.init = init
    this.collector = new BidCollector(components, init.log)
    this.audits = new BidsAuditStore(components.peerId)
  }

  /** Feeds a verified bid (from the bid stream) to the auction it answers, if any runs here. */
  addBid (bid: Signed<Bid>): BidOutcome {
    return this.collector.add(bid)
  }

  get running (): number {
    return this.collector.running
  }

  /** Bids dropped on arrival (no auction of theirs here) and bids held in open windows. */
  bidStats (): { unknownJob: number, held: number } {
    return this.collector.stats()
  }

  /** Runs one auction round for `spec`; resolves with its report (award, or why none). */
  async run (spec: JobSpec, opts: AuctionOptions = {}): Promise<AuctionReport> {
    const { peerId } = this.components
    const signal = opts.signal ?? AbortSignal.timeout(DEFAULT_AUCTION_TIMEOUT_MS)
    const emit = opts.onEvent ?? (() => {})
    const jobOpts = { renter: peerId.toMultihash().bytes, jobId: opts.jobId, renterAddrs: this.listenAddrs() }
    // the shard follows from the constraints alone; the request is made after the wait, so its
    // window starts at publication
    const draft = toJobRequest(spec, jobOpts)
    const shard = jobShardOf(draft.constraints)
    const readyFrom = Date.now()
    const [reachable] = await Promise.all([
      this.init.readyAddresses?.(signal),
      (async () => {
        await this.collector.topicPeers(shard, signal)
        await this.init.readyShard?.(shard, draft, signal)
      })()
    ])
    if (reachable === false) this.init.log('no public or relayed address yet: the job names none, so providers behind NAT cannot bid')
    const readyMs = Date.now() - readyFrom
    // the addresses again: a relay slot may have come during the wait
    const job = toJobRequest(spec, { ...jobOpts, renterAddrs: this.listenAddrs() })
    const jobId = toHex(job.jobId)
    const timings: AuctionReport['timings'] = { readyMs, publishToCloseMs: 0 }
    let publishedAt = 0
    const window = this.collector.open(job, (bid) => {
      timings.publishToFirstBidMs ??= Date.now() - publishedAt
      emit({ type: 'bid', provider: bid.signer.toString(), price: microToUsd(bid.message.priceMicroUsd) })
    })
    const signedJob = signJobRequest(this.components.privateKey as Ed25519PrivateKey, peerId, job)
    publishedAt = Date.now()
    const report: AuctionReport = {
      jobId,
      name: spec.name,
      tier: spec.tier,
      gpus: spec.gpus,
      pricing: spec.auction.pricing,
      windowMs: job.bidWindowMs,
      bids: [],
      validBids: 0,
      attempts: [],
      timings,
      signed: { job: signedJob, bids: [] }
    }
    try {
      const { recipients } = await this.components.pubsub.publish(shard, signedJob.envelope)
      report.publishedTo = recipients.length
      this.init.log('published job %s on %s to %d peers', jobId, shard, recipients.length)
      emit({ type: 'published', jobId, windowMs: job.bidWindowMs })
      await waitOrCancel(window.windowEnd - Date.now(), signal)
      // bids that reached us in time but queued behind a busy moment are read before the close
      await drainDeliveredBids()
      window.closed = true
      const closedAt = Date.now()
      report.timings.publishToCloseMs = closedAt - publishedAt
      const bids = window.bids
      if (report.signed != null) report.signed.bids = bids
      const reputation = this.init.reputation()
      const exclude = new Set(opts.exclude ?? [])
      const rttMs = latencyMatters(job)
        ? await this.measureRtt(rttCandidates(bids, job, { reputation, exclude }, closedAt), job, signal)
        : undefined
      const ctx = { reputation, rttMs, exclude, noLocality: this.init.overclaims }
      const { valid, dropped } = selectValidBids(bids, job, ctx, closedAt)
      const ranked = rankBids(valid, job, ctx, this.init.ranking ?? DEFAULT_RANKING)
      // the set every award of this round commits to (bids_digest), kept for auditors
      if (ranked.length > 0) this.audits.keep(signedJob, valid)
      report.validBids = valid.length
      report.bids = [
        ...ranked.map((r, i) =>
          bidRow(r.bid, {
            reliability: r.reliability,
            rttMs: r.rttMs,
            ...localityTerms(r, this.init.overclaims),
            score: r.score / 1_000_000,
            rank: i + 1
          })
        ),
        ...dropped.map(d =>
          bidRow(d.bid, {
            reliability: reputation.reliability(d.provider),
            rttMs: rttMs?.get(d.provider),
            dropped: d.reason
          })
        )
      ]
      emit({ type: 'closed', bids: bids.length, valid: valid.length })
      const whyNot = async (exclude: Iterable<string>): Promise<DeclineCounts> =>
        await askWhyNot(this.components, {
          candidates: this.init.candidates,
          job: signedJob,
          exclude: new Set(exclude),
          signal,
          emit,
          log: this.init.log
        })
      if (ranked.length === 0) {
        const counts = await whyNot(bids.map(b => b.signer.toString()))
        report.noBids = { ...counts, reason: noBidsReason(bids.length, dropped.map(d => d.reason), counts, spec.gpus) }
        return report
      }
      if (ranked.length < (opts.explainBelow ?? 0)) report.explain = await whyNot(ranked.map(r => r.provider))
      const accepted = await offerAward(this.components, {
        job,
        ranked,
        digest: bidsDigest(valid),
        acceptTimeoutMs: spec.auction.acceptTimeoutMs,
        params: this.init.ranking ?? DEFAULT_RANKING,
        signal,
        log: this.init.log,
        hooks: {
          onAward: (award, candidate) => {
            report.timings.publishToAwardMs ??= Date.now() - publishedAt
            emit({ type: 'award', attempt: award.message.attempt, winner: candidate.provider, price: microToUsd(award.message.clearingPriceMicroUsd) })
          },
          onAnswer: ({ award, outcome, reason }, candidate) => {
            const row = {
              attempt: award.message.attempt,
              winner: candidate.provider,
              outcome,
              ...(reason != null ? { reason } : {})
            }
            report.attempts.push(row)
            emit({ type: 'accept', ...row })
          }
        }
      })
      if (accepted == null) {
        report.noAward = { reason: noAwardReason(report.attempts, ranked.length) }
        return report
      }
      report.timings.publishToAcceptedMs = Date.now() - publishedAt
      report.award = awardRow(accepted.award.message, ranked, accepted.index)
      if (report.signed != null) report.signed.award = accepted.award
      return report
    } finally {
      this.collector.close(job)
      report.received = { ...window.counts }
    }
  }

  /** Our own addresses for the job request (binary, without /p2p), so bidders can dial us directly. */
  private listenAddrs (): Uint8Array[] {
    return messageAddresses(this.components.addressManager.getAddresses())
  }

  /** Round trips to the bidders of `bids` (rttCandidates), measured in parallel with a bound. */
  private async measureRtt (
    bids: ReadonlyArray<Signed<Bid>>,
    job: JobRequest,
    signal: AbortSignal
  ): Promise<Map<string, number>> {
    const providers = [...new Map(bids.map(b => [b.signer.toString(), b.signer])).values()].slice(0, MAX_RTT_PEERS)
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
}

/**
 * The bids worth a round trip: valid in every respect but latency (which the round trip is
 * for). An invalid bid, an excluded or unreliable bidder never costs the renter a dial.
 */
function rttCandidates (
  bids: ReadonlyArray<Signed<Bid>>,
  job: JobRequest,
  ctx: BidContext,
  now: number
): Array<Signed<Bid>> {
  const constraints = job.constraints == null ? undefined : { ...job.constraints, maxLatencyMs: 0 }
  return selectValidBids(bids, { ...job, constraints }, ctx, now).valid
}
