/**
 * What an award this provider accepted teaches about prices: its own bid is the only one it
 * saw (bids go to the renter alone), so a first-price award teaches its price at once; a
 * second-price one names a runner-up whose bid only the renter holds, so the winner asks the
 * renter for the committed bid set (bids-audit, as any award holder may) and learns from that
 * once it checks (clearing-check.ts). Either way the outcome is one 'award' event.
 */

import { toHex } from '../../common/index.js'
import { clearingSampleError, isClearingSampleError } from '../errors.js'
import { checkAwardForJob, isAwardedTo } from '../shared/award-check.js'
import { fetchBidsAudit, verifyBidsAudit } from '../shared/bids-audit.js'
import { microToUsd, peerIdFromBytes, tierOf, type Award } from '../shared/messages.js'
import { clearingSample } from './clearing-check.js'
import type { BidEngine } from './bid-engine.js'
import type { AwardSeenEvent, SeenJob } from './provider-events.js'
import type { Signed } from '../../identity/index.js'
import type { Logger, PeerId } from '@libp2p/interface'
import type { RequestDialer } from '../../node/index.js'

/** A second-price winner's bids-audit request to the renter gives up after this. */
const AUDIT_TIMEOUT_MS = 10_000

export interface AwardPriceContext {
  /** this provider */
  me: PeerId
  /** asks the renter for its bids audit (lookupFirst: the renter may be known by id only) */
  connectionManager: RequestDialer
  /** the pricing memory a clearing price feeds */
  engine: Pick<BidEngine, 'observeClearing'>
  log: Logger
  /** tells listeners what the award taught (AwardSeenEvent) */
  emit: (event: AwardSeenEvent) => void
}

/**
 * Learns the clearing price of `award`, an award of the auction `seen` (the job request this
 * provider heard and its bid), when the price follows from bids it can check, once per auction
 * however many awards it publishes.
 */
export function learnFromAward (award: Signed<Award>, seen: SeenJob, ctx: AwardPriceContext): void {
  const jobId = toHex(award.message.jobId)
  try {
    checkAwardForJob(award, seen.job)
  } catch {
    return
  }
  // a price is learnt only from an award whose winning bid we saw and whose price follows from it
  // (clearing-check.ts), once per auction however many awards it publishes
  let notPriced: string | undefined
  if (seen.priced !== true) {
    try {
      const price = clearingSample(award, seen.job, seen.bid == null ? [] : [seen.bid])
      seen.priced = true
      ctx.engine.observeClearing(award.signer.toString(), price, tierOf(seen.job.message))
    } catch (err: any) {
      if (isClearingSampleError(err) && err.reason === 'unseen-runner-up' && isAwardedTo(award.message, ctx.me)) {
        learnFromAudit(award, seen, ctx)
        return
      }
      notPriced = String(err?.message ?? err)
      ctx.log('award of %s teaches no price: %s', jobId, notPriced)
    }
  }
  const mine = isAwardedTo(award.message, ctx.me)
  ctx.emit({
    jobId,
    winner: readableWinner(award.message),
    priceUsd: microToUsd(award.message.clearingPriceMicroUsd),
    mine,
    priced: notPriced == null && seen.priced === true,
    notPriced
  })
}

/**
 * The committed bids of a second-price award this provider won, from its renter; the price is
 * learnt only when the set is the one the award commits to and its ranking holds
 * (verifyBidsAudit), and the price follows from its runner-up (clearingSample). One bounded
 * request per award; the outcome is the award event, as for any award.
 */
function learnFromAudit (award: Signed<Award>, seen: SeenJob, ctx: AwardPriceContext): void {
  const jobId = toHex(award.message.jobId)
  const event = (priced: boolean, notPriced?: string): void => {
    ctx.emit({
      jobId,
      winner: readableWinner(award.message),
      priceUsd: microToUsd(award.message.clearingPriceMicroUsd),
      mine: true,
      priced,
      notPriced
    })
  }
  void (async () => {
    const audit = verifyBidsAudit(
      award,
      await fetchBidsAudit(ctx.connectionManager, award, AbortSignal.timeout(AUDIT_TIMEOUT_MS))
    )
    if (!audit.ok) throw clearingSampleError('unseen-runner-up', `the renter's bids audit does not hold: ${audit.problems[0] ?? 'unknown'}`)
    const price = clearingSample(award, seen.job, [...(seen.bid == null ? [] : [seen.bid]), ...audit.bids], {
      priceAudited: true
    })
    if (seen.priced === true) return
    seen.priced = true
    ctx.engine.observeClearing(award.signer.toString(), price, tierOf(seen.job.message))
    event(true)
  })().catch((err: any) => {
    const why = `second price, from the renter's bids audit: ${String(err?.message ?? err)}`
    ctx.log('award of %s teaches no price: %s', jobId, why)
    event(false, why)
  })
}

function readableWinner (award: Award): string {
  try {
    return peerIdFromBytes(award.winner).toString()
  } catch {
    return '?'
  }
}
