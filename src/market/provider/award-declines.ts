/**
 * Declines at award time: every reason a winner refuses an award sent to it on
 * /idlegrid/accept/1.0.0, in the order it checks them (protocols/README.md §8, "Accept
 * answers"). The accept handler (provider-service.ts) answers the first one found, or
 * accepts when there is none.
 *
 * Vocabulary: a provider *declines* a job, with a DeclineReason (protocols/market.proto), at
 * three moments: at bid time (bid-declines.ts), at award time (here) and at start time
 * (exec/provider/admission.ts, whose wire frame is JobFrame.Rejected).
 */

import { equals } from 'uint8arrays/equals'
import { toHex } from '../../common/index.js'
import { awardPriceProblem, checkAwardForJob, isAwardedTo } from '../shared/award-check.js'
import { DeclineReason, microToUsd, type Award, type JobRequest } from '../shared/messages.js'
import type { BidDecision } from './bid-engine.js'
import type { AcceptedJob, AcceptVerdict, SeenJob } from './provider-events.js'
import type { Signed } from '../../identity/index.js'
import type { PeerId } from '@libp2p/interface'

/** Why the provider declines an award: the reason and detail its AcceptResponse carries. */
export interface AwardDecline { reason: DeclineReason, detail: string }

export interface AwardDeclineContext {
  /** the peer that sent the accept request */
  sender: PeerId
  /** this provider */
  me: PeerId
  /** the job request (and this provider's bid) remembered for the award's renter and job id */
  seen: SeenJob | undefined
  now: number
  /** records the award attempt as answered; false when it already was */
  firstAnswer: () => boolean
  /** the operator's (or a test's) hook, asked once every check of the award itself holds */
  verdict: (job: AcceptedJob) => AcceptVerdict | Promise<AcceptVerdict>
  /** the bid engine's decision now: a slot taken since the bid is a reason to decline */
  decideNow: (job: JobRequest) => BidDecision
}

/** An award answered: accepted (the job to start), declined (why), or left unanswered (`silent`, a hook's choice). */
export type AwardAnswer = { accepted: AcceptedJob } | { declined: AwardDecline } | { silent: true }

function decline (reason: DeclineReason, detail: string): AwardAnswer {
  return { declined: { reason, detail } }
}

/** The provider's answer to `award`: the first reason to decline it, in the order of protocols/README.md's table. */
export async function declineAward (award: Signed<Award>, ctx: AwardDeclineContext): Promise<AwardAnswer> {
  const a = award.message
  const { seen } = ctx
  // only the renter answers for its award: a third party relaying it (seen on gossip, say) is refused
  if (!ctx.sender.equals(award.signer)) return decline(DeclineReason.OTHER, 'the award was not sent by its renter')
  if (!isAwardedTo(a, ctx.me)) return decline(DeclineReason.OTHER, 'the award names another winner')
  if (seen == null || !equals(seen.job.message.nonce, a.jobNonce)) return decline(DeclineReason.UNKNOWN_JOB, 'no job request seen for this award')
  try {
    checkAwardForJob(award, seen.job)
  } catch (err: any) {
    return decline(DeclineReason.OTHER, String(err?.message ?? err))
  }
  if (seen.bid == null || !equals(seen.bid.hash, a.winnerBidHash)) return decline(DeclineReason.OTHER, 'the award is not for this provider\'s bid')
  // a price the rule does not give is refused, and never counted as a win (issue 36)
  const priceProblem = awardPriceProblem(a, seen.job.message, seen.bid.message)
  if (priceProblem != null) return decline(DeclineReason.OTHER, priceProblem)
  if (Number(a.acceptDeadline) <= ctx.now) return decline(DeclineReason.EXPIRED, 'accept deadline passed')
  if (!ctx.firstAnswer()) return decline(DeclineReason.OTHER, 'this award attempt was already answered')
  const accepted: AcceptedJob = {
    jobId: toHex(a.jobId),
    job: seen.job,
    award,
    bid: seen.bid,
    priceMicroUsd: a.clearingPriceMicroUsd,
    priceUsd: microToUsd(a.clearingPriceMicroUsd)
  }
  const verdict = await ctx.verdict(accepted)
  if ('silent' in verdict) return verdict
  if (!verdict.accept) return decline(verdict.reason, verdict.detail)
  const now = ctx.decideNow(seen.job.message)
  if (!now.bid && now.reason === DeclineReason.NO_CAPACITY) return decline(DeclineReason.NO_CAPACITY, now.detail)
  return { accepted }
}
