/**
 * Auction rounds for one attempt. An auction may find nobody yet (a provider that has not
 * seen the job topic): an attempt gets a bounded number of fresh auctions ("rounds"), each
 * excluding the providers that already let this job down. Within one round the market fails
 * over along the ranked bids by itself ("offers"); a job "attempt" is one run on one provider.
 */
import { equals } from 'uint8arrays/equals'
import { sleep } from '../common/index.js'
import { SubmitError } from './errors.js'
import type { AwardSource } from './run-job.js'
import type { AuctionEvent, AuctionReport, JobSpec, MarketRenterService } from '../market/index.js'

/** Auctions tried for one attempt's award before giving up, and the pause between them. */
export const ROUNDS_PER_ATTEMPT = 3
export const ROUND_RETRY_MS = 1_000

export interface RoundsOptions {
  /** the job id every round auctions (one job, one id, across attempts) */
  jobId: Uint8Array
  /** ask non-bidders why when fewer than 3 valid bids arrive */
  explain?: boolean
  onEvent?: (event: { type: 'auction', attempt: number, event: AuctionEvent }) => void
}

/** Awards from the renter's auctions: up to ROUNDS_PER_ATTEMPT rounds per attempt. */
export function auctionRounds (market: Pick<MarketRenterService, 'auction'>, spec: JobSpec, opts: RoundsOptions): AwardSource {
  return {
    next: async ({ exclude, attempt, signal }) => {
      let why = 'no award'
      for (let round = 0; round < ROUNDS_PER_ATTEMPT; round++) {
        if (round > 0) await sleep(ROUND_RETRY_MS, signal)
        const report = await market.auction(spec, {
          jobId: opts.jobId,
          signal,
          exclude,
          explainBelow: opts.explain === true ? 3 : 0,
          onEvent: (event) => { opts.onEvent?.({ type: 'auction', attempt, event }) }
        })
        const signed = report.signed
        if (signed?.award == null) {
          why = noAwardReason(report)
          continue
        }
        // the winning bid's cache claim, checked against what the winner holds (exec's Held)
        const won = signed.bids.find(b => equals(b.hash, signed.award?.message.winnerBidHash ?? new Uint8Array()))
        return {
          award: signed.award.envelope,
          jobRequest: signed.job.envelope,
          ...(won != null
            ? { cacheClaim: { cachedBytes: won.message.cachedBytes, cachedDatasets: won.message.cachedDatasets } }
            : {})
        }
      }
      throw new SubmitError('ERR_SUBMIT', why)
    }
  }
}

/** Why an auction ended without an award, with the providers' decline counts. */
function noAwardReason (report: AuctionReport): string {
  const declines = Object.entries(report.noBids?.declines ?? {}).map(([reason, n]) => `${n} ${reason}`).join(', ')
  return `${report.noBids?.reason ?? report.noAward?.reason ?? 'no award'}${declines !== '' ? ` (${declines})` : ''}`
}
