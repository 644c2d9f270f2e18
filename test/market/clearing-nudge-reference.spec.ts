import * as assert from 'node:assert/strict'
import fc from 'fast-check'
import { DEFAULT_PRICING, clearingNudge, type PricingParams } from '../../src/market/provider/pricing.js'
import type { Tier } from '../../src/capability/index.js'

/** The nudge as first written (map, filter, clamp, sorted copy, median): the one-pass version must agree exactly. */
function referenceNudge (
  base: number,
  samples: ReadonlyArray<{ priceMicroUsd: number, tier: Tier }>,
  params: PricingParams = DEFAULT_PRICING
): number {
  const band = 1 + Math.max(0, Number.isFinite(params.clearingBand) ? params.clearingBand : 0)
  const weight = Math.min(1, Math.max(0, Number.isFinite(params.clearingWeight) ? params.clearingWeight : 0))
  const seen = samples
    .map(c => c.priceMicroUsd / params.tierMultiplier[c.tier])
    .filter(p => Number.isFinite(p) && p > 0)
    .map(p => Math.min(base * band, Math.max(base / band, p)))
  if (seen.length === 0) return 0
  const sorted = [...seen].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  const median =
    sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
  return weight * (median - base)
}

describe('market: clearing nudge without intermediate arrays', () => {
  const sample = fc.record({
    priceMicroUsd: fc.oneof(fc.double({ min: -1e7, max: 1e8 }), fc.constantFrom(0, NaN, Infinity, -Infinity)),
    tier: fc.constantFrom<Tier>('bronze', 'silver', 'gold')
  })

  it('gives exactly the first version\'s nudge, for the default memory (kept sorted) and for long lists (sorted at the end)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1, max: 1e8, noNaN: true }),
        fc.array(sample, { maxLength: 150 }),
        (base, samples) => {
          assert.equal(clearingNudge(base, samples), referenceNudge(base, samples))
        }
      ),
      { numRuns: 500 }
    )
  })
})
