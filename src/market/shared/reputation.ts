/**
 * Where the auction's reliability term comes from: the renter's market service reads it from
 * the node's ledger (LEDGER_SERVICE, a declared dependency); audits and tests pass a source
 * directly (a neutral prior for everyone, or a fixed table).
 */

export interface ReputationSource {
  /** the provider's reliability in [0, 1]; values outside are clamped */
  reliability(peerId: string): number
  /** true when the provider must not win at all (e.g. slashed for fraud) */
  isExcluded?(peerId: string): boolean
}

/** The reliability assumed for a provider nobody knows anything about. */
export const NEUTRAL_RELIABILITY = 0.5

/** Every provider gets `prior`. */
export function neutralReputation (prior = NEUTRAL_RELIABILITY): ReputationSource {
  const value = clampReliability(prior)
  return { reliability: () => value }
}

/** A fixed table (tests, demos, operator overrides); unknown peers get `fallback`. */
export function fixedReputation (
  table: Record<string, number>,
  fallback = NEUTRAL_RELIABILITY,
  excluded: Iterable<string> = []
): ReputationSource {
  const out = new Set(excluded)
  return {
    reliability: (peerId) => clampReliability(table[peerId] ?? fallback),
    isExcluded: (peerId) => out.has(peerId)
  }
}

export function clampReliability (value: number): number {
  if (!Number.isFinite(value)) return 0
  return Math.min(1, Math.max(0, value))
}
