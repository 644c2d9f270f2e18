/** Typed errors of the market: callers branch on `name` / `code`. */

/** A market message from the network that is malformed, forged, stale or otherwise unusable. */
export class MarketMessageError extends Error {
  static readonly code = 'ERR_MARKET_MESSAGE'
  readonly code = MarketMessageError.code
  /** short machine-readable reason, e.g. "expired", "wrong-signer", "malformed" */
  readonly reason: string

  constructor (reason: string, message: string) {
    super(message)
    this.name = 'MarketMessageError'
    this.reason = reason
  }
}

/** An auction could not run (not started, bad parameters, node stopping). */
export class AuctionError extends Error {
  static readonly code = 'ERR_AUCTION'
  readonly code = AuctionError.code

  constructor (message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'AuctionError'
  }
}

/**
 * An award whose clearing price a provider will not learn from (issue 13): its winning bid was
 * not seen on gossip, or its price does not follow from that bid and the job's pricing rule.
 * `reason` is one of the ClearingSampleReason codes.
 */
export class ClearingSampleError extends Error {
  static readonly code = 'ERR_CLEARING_SAMPLE'
  readonly code = ClearingSampleError.code
  readonly reason: string

  constructor (reason: string, message: string) {
    super(message)
    this.name = 'ClearingSampleError'
    this.reason = reason
  }
}
