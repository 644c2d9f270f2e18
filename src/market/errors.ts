import { CodedError, isCoded } from '../common/index.js'

/** The job stream's rejection codes an award check can end in (JobFrame.Rejected.Code names). */
export type AwardRejection = 'NOT_AWARDED' | 'BAD_AWARD'

/**
 * The market room's error; callers branch on `code` (and `reason` / `rejection`).
 *
 * - `ERR_MARKET_MESSAGE`: a market message from the network that is malformed, forged, stale or
 *   otherwise unusable; `reason` is short and machine-readable, e.g. "expired", "wrong-signer", "malformed"
 * - `ERR_AUCTION`: an auction could not run (not started, bad parameters, node stopping)
 * - `ERR_CLEARING_SAMPLE`: an award whose clearing price a provider will not learn from (issue 13):
 *   its winning bid was not seen on gossip, or its price does not follow from that bid and the
 *   job's pricing rule; `reason` is one of the ClearingSampleReason codes
 * - `ERR_AWARD_CHECK`: an award that must not start a job; `rejection` is the code to answer the Start frame with
 */
export type MarketErrorCode = 'ERR_MARKET_MESSAGE' | 'ERR_AUCTION' | 'ERR_CLEARING_SAMPLE' | 'ERR_AWARD_CHECK'

export interface MarketErrorOptions extends ErrorOptions {
  reason?: string
  rejection?: AwardRejection
}

export class MarketError<C extends MarketErrorCode = MarketErrorCode> extends CodedError<C> {
  /** why, for ERR_MARKET_MESSAGE and ERR_CLEARING_SAMPLE */
  readonly reason?: string
  /** the Start frame's answer, for ERR_AWARD_CHECK */
  readonly rejection?: AwardRejection

  constructor (code: C, message: string, options: MarketErrorOptions = {}) {
    super(code, message, { cause: options.cause })
    this.name = 'MarketError'
    if (options.reason != null) this.reason = options.reason
    if (options.rejection != null) this.rejection = options.rejection
  }
}

export type MarketMessageError = MarketError<'ERR_MARKET_MESSAGE'> & { reason: string }
export type ClearingSampleError = MarketError<'ERR_CLEARING_SAMPLE'> & { reason: string }
export type AwardCheckError = MarketError<'ERR_AWARD_CHECK'> & { rejection: AwardRejection }

/** A market message that must not be used: ERR_MARKET_MESSAGE with its reason. */
export function messageError (reason: string, message: string): MarketMessageError {
  return new MarketError('ERR_MARKET_MESSAGE', message, { reason }) as MarketMessageError
}

/** An award this provider learns no price from: ERR_CLEARING_SAMPLE with its reason. */
export function clearingSampleError (reason: string, message: string): ClearingSampleError {
  return new MarketError('ERR_CLEARING_SAMPLE', message, { reason }) as ClearingSampleError
}

/** An award that must not start a job: ERR_AWARD_CHECK with the Start frame's answer. */
export function awardCheckError (rejection: AwardRejection, message: string, options?: ErrorOptions): AwardCheckError {
  return new MarketError('ERR_AWARD_CHECK', message, { ...options, rejection }) as AwardCheckError
}

export function isMessageError (err: unknown): err is MarketMessageError {
  return isCoded(err, MarketError, 'ERR_MARKET_MESSAGE')
}

export function isClearingSampleError (err: unknown): err is ClearingSampleError {
  return isCoded(err, MarketError, 'ERR_CLEARING_SAMPLE')
}

export function isAwardCheckError (err: unknown): err is AwardCheckError {
  return isCoded(err, MarketError, 'ERR_AWARD_CHECK')
}
