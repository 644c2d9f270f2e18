/**
 * Label values for metrics. Prometheus keeps one series per label set, so a label whose value
 * an attacker picks can grow a node's memory (and its scraper's) without bound. Every label
 * here is either one of our own enums, or a reason text our own code wrote that passes
 * `reasonLabel` and fits in a capped set; anything else counts as "other".
 */

/** The most distinct values one label of one metric takes before the rest count as "other". */
export const MAX_LABEL_VALUES = 32

/** Reason texts we write ourselves look like "duplicate", "ahead of the held feed" or ERR_BAD_SIGNATURE. */
const REASON_TEXT = /^[A-Za-z_][A-Za-z _-]{0,47}$/

/** Turns a value into a label from a fixed set: `value` when it is one of `allowed`, else "other". */
export function enumLabel (value: unknown, allowed: readonly string[]): string {
  return typeof value === 'string' && allowed.includes(value) ? value : 'other'
}

/**
 * Remembers which reason labels a metric has used, so that at most MAX_LABEL_VALUES distinct
 * ones ever appear; a text that does not look like one of ours (digits, colons, quotes: a
 * message carrying peer data) is "other" at once.
 */
export class ReasonLabels {
  private readonly seen = new Set<string>()

  label (reason: string): string {
    const text = reason.trim()
    if (!REASON_TEXT.test(text)) return 'other'
    if (this.seen.has(text)) return text
    if (this.seen.size >= MAX_LABEL_VALUES) return 'other'
    this.seen.add(text)
    return text
  }
}
