/**
 * The provider's market service: joins the job shards its profile can serve, hears job
 * requests there, lets the bid engine decide, sends signed bids straight to the renter inside
 * the window (bid-stream.ts), answers awards on /idlegrid/accept/1.0.0 (award-declines.ts) and
 * "why not?" on /idlegrid/explain/1.0.0, and tells listeners (the CLI's log lines, the exec
 * engine's job start) what happened through `events` and `onAccepted`.
 */

import { serviceCapabilities, serviceDependencies } from '@libp2p/interface'
import { equals } from 'uint8arrays/equals'
import { MAX_BYTES, decodeBounded } from '../../../protocols/codec.js'
import { DOMAIN, JOB_SHARD_TOPICS, PROTOCOL, providerShards, type JobShardTopic } from '../../../protocols/ids.js'
import { AcceptRequest, ExplainRequest } from '../../../protocols/market.js'
import { toHex } from '../../common/index.js'
import { GOSSIP_CAPABILITY, GOSSIP_SERVICE, lookupFirst, messageAddresses, serveOnce, type GossipRouter } from '../../node/index.js'
import { readAward } from '../shared/award-check.js'
import { declineAward } from './award-declines.js'
import { learnFromAward } from './award-prices.js'
import { jobKey, type AcceptedJob, type AcceptVerdict, type AwardSeenEvent, type BidEvent, type DeclineEvent, type SeenJob } from './provider-events.js'
import { bidAckName, sendBid } from '../shared/bid-stream.js'
import { CAPABILITY_CAPABILITY, CAPABILITY_SERVICE, CAPACITY_CAPABILITY, CAPACITY_SERVICE, type CapabilityAdvertiser, type CapacitySource } from '../../capability/index.js'
import { JobMemory } from './job-memory.js'
import { BidEngine, type BidDecision, type BidEngineOptions, type BidEngineStats } from './bid-engine.js'
import { isMessageError, messageError } from '../errors.js'
import {
  DeclineReason,
  declineReasonName,
  microToUsd,
  openMarketEnvelope,
  readJobRequest,
  signAcceptResponse,
  signBid,
  signDecline,
  tierOf,
  type Award,
  type Bid,
  type JobRequest
} from '../shared/messages.js'
import type { PricingParams } from './pricing.js'
import type { ProviderProfile } from '../../capability/index.js'
import type { Signed } from '../../identity/index.js'
import type { GossipsubEvents } from '@chainsafe/libp2p-gossipsub'
import type { AddressManager, ConnectionManager, Registrar, TransportManager } from '@libp2p/interface-internal'
import type { ComponentLogger, Ed25519PrivateKey, Logger, PeerId, PeerRouting, PeerStore, PrivateKey, PubSub, Startable } from '@libp2p/interface'
import { CONTROL_HANDLERS } from '../../control/index.js'

/** The provider market service's name in a node's services, and what it provides to `serviceDependencies`. */
export const MARKET_PROVIDER_SERVICE = 'marketProvider'
export const MARKET_PROVIDER_CAPABILITY = '@idlegrid/market-provider'

/** Award attempts answered that are remembered; the oldest are forgotten first. */
const MAX_ANSWERED = 2_000
/** Accept and explain requests must complete within this. */
const STREAM_TIMEOUT_MS = 5_000

export interface MarketProviderInit {
  profile: () => ProviderProfile | undefined
  pricing?: PricingParams
  /**
   * the node runs the capability advertiser (CAPABILITY_SERVICE): each bid carries the sequence
   * of the record it advertises now (Bid.capability_seq); libp2p checks the dependency at start
   */
  advertised?: boolean
  /** the sequence bids carry when not `advertised` (tests; default 0) */
  capabilitySeq?: () => bigint
  /** consulted before accepting an award (default: accept); `silent` never answers */
  acceptHook?: (job: AcceptedJob) => AcceptVerdict | Promise<AcceptVerdict>
}

export interface MarketProviderService {
  /** 'bid' (BidEvent), 'decline' (DeclineEvent), 'award' (AwardSeenEvent), 'accepted' (AcceptedJob) */
  readonly events: EventTarget
  /** registers the job start of an accepted award (the exec engine plugs in here); returns an unsubscribe */
  onAccepted(listener: (job: AcceptedJob) => void): () => void
  stats(): BidEngineStats
  /** the verified job request `renter` signed for a job id (hex), if still remembered */
  jobRequest(renter: PeerId | string, jobId: string): Signed<JobRequest> | undefined
  /** the engine's current decision for a job, as explain would answer */
  explain(job: JobRequest): BidDecision
  [CONTROL_HANDLERS](): Record<string, () => Promise<unknown>>
}

interface ProviderComponents {
  registrar: Registrar
  addressManager: AddressManager
  connectionManager: ConnectionManager
  /** bids reach a renter behind NAT through all its relays at once (bid-stream.ts) */
  transportManager: TransportManager
  peerStore: PeerStore
  /** finds a renter known by id only before its bids audit is asked for (lookupFirst) */
  peerRouting: PeerRouting
  peerId: PeerId
  /** the node key: signs bids, accept answers and declines */
  privateKey: PrivateKey
  pubsub: PubSub<GossipsubEvents>
  [GOSSIP_SERVICE]: GossipRouter
  /** the provider's GPU slots (exec's capacity service) */
  [CAPACITY_SERVICE]: CapacitySource
  /** present when `advertised` */
  [CAPABILITY_SERVICE]: CapabilityAdvertiser
  logger: ComponentLogger
}

class MarketProvider implements MarketProviderService, Startable {
  readonly [serviceCapabilities] = [MARKET_PROVIDER_CAPABILITY]
  readonly [serviceDependencies]: string[]
  readonly events = new EventTarget()
  private readonly components: ProviderComponents
  private readonly init: MarketProviderInit
  private readonly engine: BidEngine
  private readonly log: Logger
  /**
   * by renter, then job id hex, bounded per renter (job-memory.ts); a job bid on is pinned until its
   * request expires or its award is accepted; the renter's re-auction (new nonce) replaces its entry
   */
  private readonly jobs = new JobMemory<SeenJob>()
  /** the job shards joined (from the profile at start) */
  private shards: JobShardTopic[] = []
  /** `${jobKey}/${nonce hex}/${attempt}` already answered */
  private readonly answered = new Set<string>()
  private readonly unsubscribe: Array<() => void> = []
  private readonly key: Ed25519PrivateKey

  constructor (components: ProviderComponents, init: MarketProviderInit) {
    this.components = components
    this.key = components.privateKey as Ed25519PrivateKey
    this.init = init
    this[serviceDependencies] =
      init.advertised === true
        ? [CAPACITY_CAPABILITY, GOSSIP_CAPABILITY, CAPABILITY_CAPABILITY]
        : [CAPACITY_CAPABILITY, GOSSIP_CAPABILITY]
    this.log = components.logger.forComponent('idlegrid:market:provider')
    // the capacity service is read when a job arrives: services start together
    const slots = (): CapacitySource => components[CAPACITY_SERVICE]
    const capacity: CapacitySource = {
      freeSlots: (renter) => slots().freeSlots(renter),
      preemptibleSlots: () => slots().preemptibleSlots(),
      totalSlots: () => slots().totalSlots(),
      thermalOk: () => slots().thermalOk(),
      powerOk: () => slots().powerOk?.() ?? true,
      heldInputs: (renter, digests) => slots().heldInputs?.(renter, digests) ?? { count: 0, bytes: 0 }
    }
    // the advertiser is read when a bid is made: services start together
    const capabilitySeq =
      init.advertised === true ? () => components[CAPABILITY_SERVICE].current().message.sequence : init.capabilitySeq
    const engineOpts: BidEngineOptions = { profile: init.profile, capacity, pricing: init.pricing, capabilitySeq }
    this.engine = new BidEngine(engineOpts)
  }

  async start (): Promise<void> {
    for (const topic of JOB_SHARD_TOPICS) {
      this.unsubscribe.push(this.components[GOSSIP_SERVICE].onMessage(topic, (envelope) => {
        let job: Signed<JobRequest>
        try {
          job = readJobRequest(envelope)
        } catch (err) {
          this.log('job request dropped: %e', err)
          return
        }
        this.onJob(job).catch(err => { this.log.error('handling job %s failed: %e', toHex(job.message.jobId), err) })
      }))
    }
    const { registrar } = this.components
    await serveOnce(
      registrar,
      PROTOCOL.accept,
      async (request, remote, signal) => await this.answerAccept(request, remote, signal),
      { maxRequestBytes: MAX_BYTES.acceptRequest, timeoutMs: STREAM_TIMEOUT_MS, log: this.log }
    )
    await serveOnce(registrar, PROTOCOL.explain, async (request, remote) => this.answerExplain(request, remote), {
      maxRequestBytes: MAX_BYTES.explainRequest,
      timeoutMs: STREAM_TIMEOUT_MS,
      log: this.log
    })
  }

  /** Joins the shards the profile can serve (gossipsub takes subscriptions only once started). */
  afterStart (): void {
    const profile = this.init.profile()
    if (profile == null) return
    const maxVram = Math.max(0, ...profile.groups.map(g => g.vramMib))
    this.shards = providerShards(profile.policy.residency, maxVram)
    for (const topic of this.shards) this.components.pubsub.subscribe(topic)
    this.log('joined %d job shards', this.shards.length)
  }

  async stop (): Promise<void> {
    for (const off of this.unsubscribe.splice(0)) off()
    // gossipsub stops alongside (and refuses unsubscribes once stopped): its subscriptions go with it
    this.shards = []
    await this.components.registrar.unhandle(PROTOCOL.accept)
    await this.components.registrar.unhandle(PROTOCOL.explain)
  }

  onAccepted (listener: (job: AcceptedJob) => void): () => void {
    const handler = (evt: Event): void => { listener((evt as CustomEvent<AcceptedJob>).detail) }
    this.events.addEventListener('accepted', handler)
    return () => { this.events.removeEventListener('accepted', handler) }
  }

  stats (): BidEngineStats {
    return this.engine.stats()
  }

  jobRequest (renter: PeerId | string, jobId: string): Signed<JobRequest> | undefined {
    return this.jobs.get(renter.toString(), jobId)?.job
  }

  explain (job: JobRequest): BidDecision {
    return this.decide(job)
  }

  [CONTROL_HANDLERS] (): Record<string, () => Promise<unknown>> {
    return { 'market.stats': async () => this.stats() }
  }

  /**
   * The bid engine's decision, unless the disk budget the jobs in progress leave cannot take
   * one more job: a job request declares no input size, so the least a job reserves (no inputs,
   * the output bound) is what must fit.
   */
  private decide (job: JobRequest, now = Date.now()): BidDecision {
    const slots = this.components[CAPACITY_SERVICE]
    const free = slots.freeDiskBytes?.()
    const need = slots.jobDiskBytes?.(0)
    if (free != null && need != null && need > free) return { bid: false, reason: DeclineReason.NO_CAPACITY, detail: `disk budget: jobs in progress leave ${free} bytes, a job needs at least ${need}` }
    return this.engine.decide(job, now)
  }

  private async onJob (job: Signed<JobRequest>): Promise<void> {
    const jobId = toHex(job.message.jobId)
    const renter = job.signer.toString()
    const now = Date.now()
    const seen: SeenJob = { job }
    const decided = this.decide(job.message, now)
    const windowEnd = Number(job.message.createdAt) + job.message.bidWindowMs
    const late = decided.bid && now >= windowEnd
    // a job bid on stays remembered until its auction ends, whatever strangers publish (issue 36)
    const pinned = this.jobs.set(renter, jobId, seen, {
      expiresAt: Number(job.message.expiresAt),
      pin: decided.bid && !late
    })
    if (late) {
      this.engine.record({ bid: false, reason: DeclineReason.EXPIRED, detail: 'bid window already closed' })
      return
    }
    // no bid this provider could not tie its award to
    const decision: BidDecision = decided.bid && !pinned
      ? { bid: false, reason: DeclineReason.NO_CAPACITY, detail: `${this.jobs.pinned} auctions bid on are in progress, the most this provider follows at once` }
      : decided
    this.engine.record(decision)
    if (!decision.bid) {
      this.log('no bid on %s: %s', jobId, decision.detail)
      this.emit<DeclineEvent>('decline', { jobId, renter, reason: declineReasonName(decision.reason), detail: decision.detail })
      return
    }
    const bid = signBid(
      this.key,
      this.components.peerId,
      this.engine.buildBid(job.message, decision, {
        provider: this.components.peerId.toMultihash().bytes,
        now,
        addrs: this.listenAddrs()
      })
    )
    seen.bid = bid
    this.log('bid %d micro-USD on %s', decision.priceMicroUsd, jobId)
    // the event is the bid made; whether the renter kept it is its answer, logged below
    this.sendToRenter(job, bid)
    this.emit<BidEvent>('bid', {
      jobId,
      renter,
      tier: tierOf(job.message),
      workload: job.message.workload,
      priceUsd: microToUsd(decision.priceMicroUsd),
      priceMicroUsd: decision.priceMicroUsd,
      gpuModel: decision.gpuModel
    })
  }

  /** Sends the bid straight to the renter; a renter that cannot be reached simply gets no bid from us. */
  private sendToRenter (job: Signed<JobRequest>, bid: Signed<Bid>): void {
    sendBid(this.components, job, bid)
      .then(ack => { this.log('bid on %s: %s %s', toHex(job.message.jobId), bidAckName(ack.status), ack.detail) })
      .catch(err => { this.log('bid on %s not delivered: %e', toHex(job.message.jobId), err) })
  }

  /** Our own addresses for bids (binary, without /p2p), so the renter can dial us directly. */
  private listenAddrs (): Uint8Array[] {
    return messageAddresses(this.components.addressManager.getAddresses())
  }

  /** What an award this provider accepted teaches about prices (award-prices.ts), told as an 'award' event. */
  private onAward (award: Signed<Award>): void {
    // only an award of an auction we saw, signed by its renter, says anything about the market
    const seen = this.jobs.get(award.signer.toString(), toHex(award.message.jobId))
    if (seen == null) return
    learnFromAward(award, seen, {
      me: this.components.peerId,
      connectionManager: lookupFirst(this.components),
      engine: this.engine,
      log: this.log,
      emit: (event) => { this.emit<AwardSeenEvent>('award', event) }
    })
  }

  private async answerAccept (request: Uint8Array, remote: PeerId, signal: AbortSignal): Promise<Uint8Array> {
    let award: Signed<Award>
    try {
      const { award: envelope } = decodeBounded(AcceptRequest, request, 'accept request', MAX_BYTES.acceptRequest)
      award = readAward(openMarketEnvelope(envelope, DOMAIN.award, MAX_BYTES.award))
    } catch (err: any) {
      this.log('bad accept request from %p: %e', remote, err)
      throw isMessageError(err) ? err : messageError('malformed', String(err?.message ?? err))
    }
    const a = award.message
    const jobId = toHex(a.jobId)
    const respond = (accepted: boolean, reason = DeclineReason.REASON_UNSPECIFIED, detail = ''): Uint8Array =>
      signAcceptResponse(this.key, this.components.peerId, {
        jobId: a.jobId,
        provider: this.components.peerId.toMultihash().bytes,
        attempt: a.attempt,
        accepted,
        reason,
        detail,
        createdAt: BigInt(Date.now())
      }).envelope
    const answeredKey = `${jobKey(award.signer, jobId)}/${toHex(a.jobNonce)}/${a.attempt}`
    const answer = await declineAward(award, {
      sender: remote,
      me: this.components.peerId,
      seen: this.jobs.get(award.signer.toString(), jobId),
      now: Date.now(),
      firstAnswer: () => this.firstAnswer(answeredKey),
      verdict: async (job) => await this.init.acceptHook?.(job) ?? { accept: true },
      decideNow: (job) => this.decide(job)
    })
    if ('silent' in answer) {
      // hold the stream open until the renter gives up: a winner that never answers
      await new Promise<void>(resolve => signal.addEventListener('abort', () => { resolve() }, { once: true }))
      throw messageError('silent', 'award left unanswered')
    }
    if ('declined' in answer) return respond(false, answer.declined.reason, answer.declined.detail)
    const { accepted } = answer
    this.engine.recordWin(a.clearingPriceMicroUsd, accepted.job.message)
    this.jobs.unpin(award.signer.toString(), jobId)
    this.log('accepted %s at %d micro-USD', jobId, a.clearingPriceMicroUsd)
    const response = respond(true)
    this.emit<AcceptedJob>('accepted', accepted)
    this.onAward(award)
    return response
  }

  /** Records an award attempt as answered (the oldest are forgotten past MAX_ANSWERED); false when it already was. */
  private firstAnswer (key: string): boolean {
    if (this.answered.has(key)) return false
    this.answered.add(key)
    if (this.answered.size > MAX_ANSWERED) this.answered.delete(this.answered.values().next().value as string)
    return true
  }

  private answerExplain (request: Uint8Array, remote: PeerId): Uint8Array {
    const req = decodeBounded(ExplainRequest, request, 'explain request', MAX_BYTES.explainRequest)
    const jobId = toHex(req.jobId)
    // the job the asker published under this id; anyone else's job must come with its request
    let job = this.jobs.get(remote.toString(), jobId)?.job
    const answer = (reason: DeclineReason, detail: string): Uint8Array =>
      signDecline(this.key, this.components.peerId, {
        jobId: req.jobId,
        provider: this.components.peerId.toMultihash().bytes,
        reason,
        detail: detail.slice(0, 256),
        createdAt: BigInt(Date.now())
      }).envelope
    if (job == null && req.jobRequest.length > 0) {
      try {
        job = readJobRequest(openMarketEnvelope(req.jobRequest, DOMAIN.jobRequest, MAX_BYTES.jobRequest))
      } catch (err: any) {
        return answer(isMessageError(err) && err.reason === 'expired' ? DeclineReason.EXPIRED : DeclineReason.OTHER, `job request does not verify: ${String(err?.message ?? err)}`)
      }
      if (!equals(job.message.jobId, req.jobId)) return answer(DeclineReason.OTHER, 'the job request is for another job id')
    }
    if (job == null) return answer(DeclineReason.UNKNOWN_JOB, 'no job request seen from this renter with this id')
    const decision = this.decide(job.message)
    return decision.bid
      ? answer(DeclineReason.WILL_BID, `would bid ${microToUsd(decision.priceMicroUsd).toFixed(2)} USD/GPU-h on ${decision.gpuModel}`)
      : answer(decision.reason, decision.detail)
  }

  private emit<T> (type: string, detail: T): void {
    this.events.dispatchEvent(new CustomEvent(type, { detail }))
  }
}

/** The provider's market service (libp2p service factory), named MARKET_PROVIDER_SERVICE. */
export function marketProvider (init: MarketProviderInit): (components: ProviderComponents) => MarketProviderService {
  return (components) => new MarketProvider(components, init)
}
