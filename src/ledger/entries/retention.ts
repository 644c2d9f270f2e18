/**
 * Retention (protocols/README.md §7 "Retention"): a holder may drop the entries of a feed that
 * are older than the horizon, keeping as the feed's base the newest entry at least that old;
 * a range may then start at that base, later than the seq it was asked from. A receiver takes
 * such a start only at an entry at least as old as the horizon, so what a holder can leave out
 * is entries older still, whose weight in reputation has decayed below 2^-16.
 */

/** 16 half-lives of reputation's default decay (14 days): 224 days. */
export const RETENTION_MS = 16 * 14 * 24 * 3600_000

/**
 * How much older than the horizon a node's own base is: a receiver whose clock is behind ours
 * by up to this still finds the base old enough.
 */
export const RETENTION_MARGIN_MS = 24 * 3600_000

/** Whether an entry dated `time` may be a feed's base at `now`: at least RETENTION_MS old. */
export function mayBeBase (time: number, now: number): boolean {
  return time <= now - RETENTION_MS
}
