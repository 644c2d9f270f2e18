/**
 * The renter's whole job path as one libp2p service: `submit.job` on the control socket
 * takes a job spec and runs it to the end (auction rounds per attempt, shipping, execution,
 * verification, receipts, failover with checkpoints), records every receipt it signs in
 * this node's ledger and waits (bounded) for a peer to confirm holding it (receipts.ts). It needs
 * the market's renter service and the ledger, and says so in `serviceDependencies`: a node without
 * them does not start.
 */
import { randomBytes } from 'node:crypto'
import { resolve } from 'node:path'
import { serviceDependencies, type ComponentLogger, type Logger, type PeerId, type PrivateKey, type Startable } from '@libp2p/interface'
import { toHex } from '../common/index.js'
import { LEDGER_CAPABILITY, LEDGER_SERVICE, type LedgerService } from '../ledger/index.js'
import { MARKET_RENTER_CAPABILITY, MARKET_RENTER_SERVICE, parseJobSpec, type AuctionEvent, type MarketRenterService } from '../market/index.js'
import { noPeers, SubmitError } from './errors.js'
import { checkSubmission, renterLimitsFromSpec, withInputDatasets } from './payload.js'
import { LedgerReceipts, type ReceiptEvent } from './receipts.js'
import { auctionRounds } from './rounds.js'
import { runJob } from './run-job.js'
import { longStreamDialer } from '../node/index.js'
import { summaryJson, type JobSummary } from './summary.js'
import { CONTROL_HANDLERS, type ControlHandler } from '../control/index.js'
import type { JobEvent } from '../exec/index.js'
import type { ConnectionManager } from '@libp2p/interface-internal'

/** The submit service's name in the node's service map. */
export const SUBMIT_SERVICE = 'submit'

export interface SubmitComponents {
  peerId: PeerId
  privateKey: PrivateKey
  connectionManager: ConnectionManager
  logger: ComponentLogger
  [MARKET_RENTER_SERVICE]: MarketRenterService
  [LEDGER_SERVICE]: LedgerService
}

export interface SubmitServiceInit {
  /** where outputs go when the caller names no directory (default ./idlegrid-out) */
  defaultBaseDir?: string
  /** the node's bootstrap peers: a node connected to no peer says what to do about them */
  bootstrap?: readonly string[]
  /** how long a job waits for a peer to confirm holding its receipt (default 10 s) */
  receiptAckTimeoutMs?: number
}

export interface SubmitRequest {
  /** job fields as in a job file, flags applied (parsed and checked here) */
  spec: unknown
  /** outputs go to baseDir/<job id>/ */
  baseDir?: string
  /** attempts before giving up (default 3, at most 10) */
  maxAttempts?: number
  /** ask non-bidders why when fewer than 3 valid bids arrive */
  explain?: boolean
}

/** A job the submit service starts, as observers see it. */
export interface SubmitStart { jobId: string, name: string, tier: string, workload: string, startedAt: number }

/**
 * A progress event: an auction event of some attempt, a job event (attempt, log, …), or the
 * receipts' way to a peer.
 */
export type SubmitEvent = { type: 'auction', attempt: number, event: AuctionEvent } | JobEvent | ReceiptEvent

export interface SubmitService {
  /** runs the job to the end; resolves with its summary (also when it did not complete) */
  submit(
    request: SubmitRequest,
    opts?: { onEvent?: (event: SubmitEvent) => void, signal?: AbortSignal }
  ): Promise<JobSummary>
  /**
   * for observers (metrics, dashboard): 'start' (CustomEvent<SubmitStart>), 'event'
   * (CustomEvent<{ jobId, event: SubmitEvent }>) and 'summary' (CustomEvent<JobSummary>)
   */
  readonly events: EventTarget
  [CONTROL_HANDLERS](): Record<string, ControlHandler>
}

class Submitter implements SubmitService, Startable {
  readonly [serviceDependencies]: string[] = [MARKET_RENTER_CAPABILITY, LEDGER_CAPABILITY]
  readonly [Symbol.toStringTag] = '@idlegrid/submit'
  private readonly log: Logger
  readonly events = new EventTarget()

  constructor (private readonly components: SubmitComponents, private readonly init: SubmitServiceInit) {
    this.log = components.logger.forComponent('idlegrid:submit')
  }

  start (): void {}
  stop (): void {}

  async submit (
    request: SubmitRequest,
    opts: { onEvent?: (event: SubmitEvent) => void, signal?: AbortSignal } = {}
  ): Promise<JobSummary> {
    const parsed = parseJobSpec(request.spec)
    const checked = checkSubmission(parsed, request.maxAttempts)
    const maxAttempts = checked.maxAttempts
    // inputs hashed once; the large ones named for providers' input caches
    const { spec, payload } = await withInputDatasets(parsed, checked.payload)
    const privateKey = this.components.privateKey
    if (privateKey.type !== 'Ed25519') throw new SubmitError('ERR_SUBMIT', `receipts are signed with the node's Ed25519 key; this node's key is ${privateKey.type}`)
    // a job published to nobody is never heard of: say so before any auction or output directory
    if (this.components.connectionManager.getConnections().length === 0) throw noPeers(this.init.bootstrap ?? [])
    const jobId = new Uint8Array(randomBytes(16))
    const jobIdHex = toHex(jobId)
    this.observe('start', { jobId: jobIdHex, name: spec.name, tier: spec.tier, workload: spec.workload, startedAt: Date.now() })
    const submittedAt = Date.now()
    let firstBidMs: number | undefined
    const send = (event: SubmitEvent): void => {
      if (firstBidMs == null && event.type === 'auction' && event.event.type === 'bid') firstBidMs = Date.now() - submittedAt
      // the winner's Held bore out less than its bid claimed: no locality credit in our next auctions
      if (event.type === 'cache-overclaim') this.components[MARKET_RENTER_SERVICE].recordOverclaim(event.provider, event)
      try { opts.onEvent?.(event) } catch {}
      this.observe('event', { jobId: jobIdHex, event })
    }
    const dialer = longStreamDialer(this.components)
    const ran = await runJob({
      libp2p: dialer,
      privateKey,
      peerId: this.components.peerId,
      awards: auctionRounds(this.components[MARKET_RENTER_SERVICE], spec, {
        jobId,
        explain: request.explain,
        onEvent: send
      }),
      payload,
      jobId: jobIdHex,
      baseDir: request.baseDir ?? this.init.defaultBaseDir ?? resolve('idlegrid-out'),
      maxAttempts,
      limits: renterLimitsFromSpec(spec.limits),
      signal: opts.signal,
      onEvent: send,
      receipts: new LedgerReceipts({
        ledger: this.components[LEDGER_SERVICE],
        ackTimeoutMs: this.init.receiptAckTimeoutMs,
        onEvent: send,
        log: this.log
      })
    })
    const summary: JobSummary = { ...ran, ...(firstBidMs != null ? { firstBidMs } : {}) }
    this.observe('summary', summary)
    return summary
  }

  private observe (type: string, detail: unknown): void {
    this.events.dispatchEvent(new CustomEvent(type, { detail }))
  }

  [CONTROL_HANDLERS] (): Record<string, ControlHandler> {
    return {
      /** params: SubmitRequest; events: SubmitEvent; result: the summary as JSON */
      'submit.job': async (params, emit, signal) => {
        const request: SubmitRequest = {
          spec: params.spec,
          baseDir: typeof params.baseDir === 'string' ? params.baseDir : undefined,
          maxAttempts: typeof params.maxAttempts === 'number' ? params.maxAttempts : undefined,
          explain: params.explain === true
        }
        return summaryJson(await this.submit(request, { onEvent: emit, signal }))
      }
    }
  }
}

/** The renter's job service (libp2p service factory), under SUBMIT_SERVICE in the service map. */
export function submitService (init: SubmitServiceInit = {}): (components: SubmitComponents) => SubmitService {
  return (components) => new Submitter(components, init)
}
