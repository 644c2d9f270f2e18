/**
 * The data-locality term of the award rule and the check of the claim it is computed from
 * (protocols/README.md §7 "Auction", *Input cache claims*). A bid says what of the job's named
 * datasets its input cache holds (`cached_bytes`, `cached_datasets`); the ranking credits that
 * claim (localityOf). Once the job is awarded, the job stream's Held frame names the manifest
 * files the winner's cache really holds, and judgeCacheClaim compares the two: a claim that
 * bought more locality than Held bears out, beyond CLAIM_TOLERANCE, is an overclaim.
 */

import { toHex } from '../../common/index.js'
import type { Bid, JobRequest } from './messages.js'

/** What a bid says it holds of the job's datasets. */
export type BidHolding = Pick<Bid, 'cachedDatasets' | 'cachedBytes'>

/**
 * The locality term, 0 … 1: the share of the job's named bytes the bidder holds
 * (cached_bytes / dataset_bytes, capped at 1) when the job states its bytes, which is the share
 * of the input transfer a win there saves; else the share of its named digests held.
 */
export function localityOf (job: Pick<JobRequest, 'datasetDigests' | 'datasetBytes'>, held: BidHolding): number {
  const total = job.datasetBytes ?? 0n
  if (total > 0n) return Math.min(1, Number(held.cachedBytes ?? 0n) / Number(total))
  const datasets = job.datasetDigests.length
  return datasets === 0 ? 0 : Math.min(datasets, held.cachedDatasets) / datasets
}

/**
 * How much more locality a claim may have bought than the Held frame bears out before it counts
 * as an overclaim: 5 % of the job's named bytes (or datasets). A bid's claim is read from the
 * cache's index at bid time; until the Start an entry can still be evicted or found changed and
 * dropped, so an honest claim may come up a little short. 5 % of locality is at most 1 % of a
 * score (λ_loc = 0.2): what a liar can take under the tolerance.
 */
export const CLAIM_TOLERANCE = 0.05

/** One file of the job's manifest, as the renter ships it. */
export interface ShippedFile {
  sha256: Uint8Array
  size: bigint
}

export interface CacheClaimCheck {
  job: Pick<JobRequest, 'datasetDigests' | 'datasetBytes'>
  /** the winning bid's claim */
  claim: BidHolding
  /** the job's input manifest */
  manifest: readonly ShippedFile[]
  /** what the Held frame names (lower-case sha256 hex), each a file of `manifest` */
  held: ReadonlySet<string>
}

export interface CacheClaimVerdict {
  /** Held bears out less than the claim bought, by more than CLAIM_TOLERANCE */
  overclaim: boolean
  /** the bid's cached_bytes and cached_datasets */
  claimedBytes: number
  claimedDatasets: number
  /** bytes and count of the job's named datasets that Held names */
  heldBytes: number
  heldDatasets: number
  /** the locality term the claim earned in the ranking, and the one Held supports */
  credited: number
  supported: number
  /** set when the claim cannot be checked, with why (no verdict: `overclaim` is false) */
  unverifiable?: string
}

/**
 * Compares a winning bid's cache claim with the Held frame (CacheClaimCheck). Only the job's
 * named datasets count, and of them only files of its manifest: Held can name nothing else. A
 * named dataset the renter does not ship (a job file's `datasets:` entry that is not an input)
 * may be in the claim but never in Held, so:
 *  - when the job states its bytes (the bytes term), a claim is checked only if every named
 *    dataset is shipped (the size of one that is not is unknown here);
 *  - by digests, each unshipped dataset counts as held. An empty file is never held (there is
 *    nothing to send), so it counts as held too.
 */
export function judgeCacheClaim ({ job, claim, manifest, held }: CacheClaimCheck): CacheClaimVerdict {
  const named = new Set(job.datasetDigests.map(d => toHex(d)))
  const sizes = new Map(manifest.map(f => [toHex(f.sha256), f.size]))
  let heldBytes = 0n
  let heldDatasets = 0
  let unshipped = 0
  let empty = 0
  for (const hex of named) {
    const size = sizes.get(hex)
    if (size == null) unshipped++
    else if (held.has(hex)) { heldBytes += size; heldDatasets++ } else if (size === 0n) empty++
  }
  const credited = localityOf(job, claim)
  const verdict = {
    claimedBytes: Number(claim.cachedBytes ?? 0n),
    claimedDatasets: claim.cachedDatasets,
    heldBytes: Number(heldBytes),
    heldDatasets
  }
  const bytesTerm = (job.datasetBytes ?? 0n) > 0n
  if (bytesTerm && unshipped > 0) {
    return {
      ...verdict,
      overclaim: false,
      credited,
      supported: credited,
      unverifiable: `the job names ${unshipped} dataset${unshipped > 1 ? 's' : ''} it does not ship, whose bytes the claim may count`
    }
  }
  const supported = localityOf(job, { cachedBytes: heldBytes, cachedDatasets: heldDatasets + unshipped + empty })
  return { ...verdict, overclaim: credited - supported > CLAIM_TOLERANCE, credited, supported }
}
