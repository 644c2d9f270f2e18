/**
 * The renter's market service: runs auctions (Auctioneer) on this node, serves the bid stream
 * (/idlegrid/bid/1.0.0: providers' bids, straight to the auction they answer) and the bids
 * audit (/idlegrid/bids-audit/1.0.0: an award's bids to anyone holding it), and offers the
 * `market.auction` control method that `idlegrid submit` calls. Reliability comes from the node's
 * ledger (a declared dependency). Explain candidates come from capability discovery (index keys in
 * the DHT, records asked of the providers themselves, DHT records as fallback:
 * provider-candidates.ts) and from the connected providers heard through heartbeats.
 */

import { serviceCapabilities, serviceDependencies } from '@libp2p/interface'
import { MAX_BYTES } from '../../../protocols/codec.js'
import { PROTOCOL } from '../../../protocols/ids.js'
import { LEDGER_CAPABILITY, LEDGER_SERVICE } from '../../ledger/index.js'
import { Auctioneer, type AuctionComponents } from './auction.js'
import { parseJobSpec, type JobSpec } from './job-spec.js'
import { answerBid, MAX_BID_REQUEST_BYTES } from '../shared/bid-stream.js'
import { OverclaimBook } from './overclaim-book.js'
import { ProviderCandidates } from './provider-candidates.js'
import { READY_TIMEOUT_MS, ShardReadiness } from './shard-readiness.js'
import type { AuctionOptions, AuctionReport } from './auction-report.js'
import type { ExplainCandidates } from './explain.js'
import type { RankingParams } from '../shared/ranking.js'
import type { ReputationSource } from '../shared/reputation.js'
import { CONTROL_HANDLERS, type ControlHandler } from '../../control/index.js'
import { GOSSIP_CAPABILITY, type GOSSIP_SERVICE, serveOnce, untilReachable, type GossipRouter, type HeartbeatService } from '../../node/index.js'
import type { ComponentLogger, Logger, Startable } from '@libp2p/interface'
import type { KadDHT } from '@libp2p/kad-dht'
import type { Registrar } from '@libp2p/interface-internal'

/** The renter market service's name in a node's services, and what it provides to `serviceDependencies`. */
export const MARKET_RENTER_SERVICE = 'marketRenter'
export const MARKET_RENTER_CAPABILITY = '@idlegrid/market-renter'

/** Bid and audit requests must complete within this. */
const STREAM_TIMEOUT_MS = 5_000

export interface MarketRenterInit {
  ranking?: RankingParams
  /**
   * who to ask "why not?"; default: capability discovery (records from the providers, DHT as
   * fallback) plus providers heard via heartbeats
   */
  candidates?: ExplainCandidates
  /**
   * ready a job's shard before its first auction there (shard-readiness.ts; default true; false
   * only to measure without it)
   */
  readyShards?: boolean
  /**
   * this node is reached only through relays (it reserves slots: node/connectivity/relay.ts): an auction
   * first waits (bounded) for a relayed or public address, so that its job names one (default false)
   */
  awaitReachable?: boolean
}

export interface MarketRenterService {
  /** runs one auction; resolves with its report (award, or why none) */
  auction(spec: JobSpec, opts?: AuctionOptions): Promise<AuctionReport>
  /** bids dropped on arrival because no auction of theirs runs here, and bids held in open windows */
  bidStats(): { unknownJob: number, held: number }
  /**
   * the Held frame of a job this renter awarded bore out less than the winner's bid claimed
   * (judgeCacheClaim): its later bids get no locality credit here (overclaim-book.ts)
   */
  recordOverclaim(provider: string, figures: { claimedBytes: number, heldBytes: number }): void
  /** dispatches 'report' (CustomEvent<AuctionReport>) when an auction ends, for observers (metrics, dashboard) */
  readonly events: EventTarget
  [CONTROL_HANDLERS](): Record<string, ControlHandler>
}

interface RenterComponents extends AuctionComponents {
  /** the ledger: the auction's reliability term and exclusions */
  [LEDGER_SERVICE]: ReputationSource
  [GOSSIP_SERVICE]: GossipRouter
  heartbeats: HeartbeatService
  dht: KadDHT
  registrar: Registrar
  logger: ComponentLogger
}

class MarketRenter implements MarketRenterService, Startable {
  readonly [serviceCapabilities] = [MARKET_RENTER_CAPABILITY]
  readonly [serviceDependencies] = [LEDGER_CAPABILITY, GOSSIP_CAPABILITY]
  private readonly components: RenterComponents
  private readonly log: Logger
  private readonly auctioneer: Auctioneer
  /** explain candidates: records fetched from the providers (cached), DHT records as fallback */
  private readonly providers: ProviderCandidates
  /** providers caught overclaiming their input cache (no locality credit for a while) */
  private readonly overclaims = new OverclaimBook()
  readonly events = new EventTarget()

  constructor (components: RenterComponents, init: MarketRenterInit) {
    this.components = components
    this.log = components.logger.forComponent('idlegrid:market:renter')
    this.providers = new ProviderCandidates(components, this.log)
    // discovery connects the providers it asks for their records: the same cache serves explain
    const readiness = new ShardReadiness(
      components,
      async (filters, max, signal) => await this.providers.discover(filters, max, signal, READY_TIMEOUT_MS),
      this.log
    )
    this.auctioneer = new Auctioneer(components, {
      // read when a window closes: services start in parallel, so never in a constructor
      reputation: () => this.components[LEDGER_SERVICE],
      ranking: init.ranking,
      candidates: init.candidates ?? (async (_job, signal) => await this.providers.find(signal)),
      readyShard:
        init.readyShards === false
          ? undefined
          : async (shard, job, signal) => await readiness.ready(shard, job, signal),
      readyAddresses:
        init.awaitReachable !== true
          ? undefined
          : async signal => await untilReachable(() => this.components.addressManager.getAddresses(), signal),
      overclaims: this.overclaims,
      log: this.log
    })
  }

  async start (): Promise<void> {
    const { registrar } = this.components
    await serveOnce(
      registrar,
      PROTOCOL.bid,
      async (request, remote) => answerBid(request, remote, bid => this.auctioneer.addBid(bid)),
      { maxRequestBytes: MAX_BID_REQUEST_BYTES, timeoutMs: STREAM_TIMEOUT_MS, log: this.log }
    )
    await serveOnce(registrar, PROTOCOL.bidsAudit, async (request) => this.auctioneer.audits.answer(request),
      { maxRequestBytes: MAX_BYTES.bidsAuditRequest, timeoutMs: STREAM_TIMEOUT_MS, log: this.log })
  }

  async stop (): Promise<void> {
    await this.components.registrar.unhandle(PROTOCOL.bid)
    await this.components.registrar.unhandle(PROTOCOL.bidsAudit)
  }

  async auction (spec: JobSpec, opts: AuctionOptions = {}): Promise<AuctionReport> {
    const report = await this.auctioneer.run(spec, opts)
    this.events.dispatchEvent(new CustomEvent('report', { detail: report }))
    return report
  }

  bidStats (): { unknownJob: number, held: number } {
    return this.auctioneer.bidStats()
  }

  recordOverclaim (provider: string, figures: { claimedBytes: number, heldBytes: number }): void {
    this.overclaims.note(provider, figures)
    this.log('%s overclaimed its input cache (claimed %d bytes, held %d): no locality credit until %s', provider, figures.claimedBytes, figures.heldBytes, new Date(this.overclaims.get(provider)?.untilMs ?? 0).toISOString())
  }

  [CONTROL_HANDLERS] (): Record<string, ControlHandler> {
    return {
      /** params: { spec: job fields as in a job file (flags applied), explain?: boolean } */
      'market.auction': async (params, emit, signal) => {
        const spec = parseJobSpec(params.spec)
        const report = await this.auction(spec, {
          signal,
          onEvent: emit,
          explainBelow: params.explain === true ? 3 : 0
        })
        const { signed, ...plain } = report
        return plain
      }
    }
  }
}

/** The renter's market service (libp2p service factory), named MARKET_RENTER_SERVICE. */
export function marketRenter (init: MarketRenterInit = {}): (components: RenterComponents) => MarketRenterService {
  return (components) => new MarketRenter(components, init)
}
