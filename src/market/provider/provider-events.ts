/**
 * What the provider's market service tells its listeners (the CLI's log lines, the exec
 * engine's job start, tests) and the job it remembers per auction: the shapes its events,
 * its accept hook and its award declines share.
 */

import type { Award, Bid, DeclineReason, JobRequest } from '../shared/messages.js'
import type { Signed } from '../../identity/index.js'
import type { PeerId } from '@libp2p/interface'

export interface BidEvent {
  jobId: string
  renter: string
  tier: string
  workload: string
  priceUsd: number
  priceMicroUsd: bigint
  gpuModel: string
}
export interface DeclineEvent { jobId: string, renter: string, reason: string, detail: string }
export interface AcceptedJob {
  jobId: string
  /** the job request and award as verified, with their envelopes for the job stream */
  job: Signed<JobRequest>
  award: Signed<Award>
  bid: Signed<Bid>
  priceMicroUsd: bigint
  priceUsd: number
}
export interface AwardSeenEvent {
  jobId: string
  winner: string
  priceUsd: number
  mine: boolean
  /**
   * whether this auction's clearing price is in the pricing memory; why not when it is not (the
   * ERR_CLEARING_SAMPLE message)
   */
  priced: boolean
  notPriced?: string
}

/** What a test or operator hook may answer to an award before the provider accepts it. */
export type AcceptVerdict =
  { accept: true } | { accept: false, reason: DeclineReason, detail: string } | { silent: true }

/** A job request this provider heard, and its own bid on it if it made one. */
export interface SeenJob {
  job: Signed<JobRequest>
  bid?: Signed<Bid>
  /** an award of this auction already fed the pricing memory */
  priced?: boolean
}

/**
 * Jobs are known by (renter, job id): a job id is the renter's choice, so another signer
 * publishing a request with the same id names a different job and can neither replace
 * nor shadow the first (issue 13).
 */
export function jobKey (renter: PeerId | string, jobIdHex: string): string {
  return `${renter.toString()}/${jobIdHex}`
}
