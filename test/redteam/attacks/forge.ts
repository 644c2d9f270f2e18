/**
 * Messages an attacker signs with its own keys, filled as an honest peer would fill them: a
 * job request, a bid on a job, and an award of a job.
 */
import { randomBytes } from 'node:crypto'
import { MAX_LIFETIME_MS } from '../../../protocols/codec.js'
import { parseJobSpec, toJobRequest } from '../../../src/market/renter/job-spec.js'
import { signJobRequest, type Award, type Bid, type JobRequest } from '../../../src/market/shared/messages.js'
import type { Signed } from '../../../src/identity/index.js'
import type { IdlegridNode } from '../../../src/node/index.js'
import type { PeerId } from '@libp2p/interface'

/** A one-minute command-only job like a renter's, signed by `renter`. */
export function jobFor (renter: IdlegridNode, name: string, bidWindowMs: number): Signed<JobRequest> {
  const spec = parseJobSpec({ name, workload: 'evaluation', runtime: { command: ['/bin/true'] }, estimatedMinutes: 1, auction: { bidWindowMs } })
  // where bidders dial the renter (binary, without /p2p: multicodec 421)
  const renterAddrs = renter.libp2p.getMultiaddrs().map(a => a.decapsulateCode(421).bytes).slice(0, 4)
  return signJobRequest(
    renter.privateKey,
    renter.peerId,
    toJobRequest(spec, { renter: renter.peerId.toMultihash().bytes, renterAddrs })
  )
}

/** A bid by `by` on `job` at `priceMicroUsd`. */
export function bidFor (job: JobRequest, by: PeerId, priceMicroUsd: bigint, over: Partial<Bid> = {}): Bid {
  const now = Date.now()
  return {
    jobId: job.jobId,
    provider: by.toMultihash().bytes,
    priceMicroUsd,
    gpuModel: 'h100',
    vramMib: 81_920,
    region: 'eu-west',
    residency: '',
    createdAt: BigInt(now),
    expiresAt: BigInt(Math.min(Number(job.expiresAt), now + MAX_LIFETIME_MS.bid)),
    capabilitySeq: 0n,
    jobNonce: job.nonce,
    simulated: true,
    cachedDatasets: 0,
    addrs: [],
    ...over
  }
}

/**
 * An award of `job` (signed by its renter) to `winner` at `priceMicroUsd`; digest and bid hash made
 * up unless given.
 */
export function awardFor (job: JobRequest, winner: PeerId, priceMicroUsd: bigint, over: Partial<Award> = {}): Award {
  const now = Date.now()
  return {
    jobId: job.jobId,
    renter: job.renter,
    winner: winner.toMultihash().bytes,
    clearingPriceMicroUsd: priceMicroUsd,
    pricingRule: job.pricingRule,
    bidsDigest: new Uint8Array(randomBytes(32)),
    runnerUp: [],
    ranking: [],
    reliabilityWeightPpm: 0,
    latencyWeightPpm: 0,
    localityWeightPpm: 0,
    acceptDeadline: BigInt(now + 3_000),
    createdAt: BigInt(now),
    expiresAt: BigInt(now + 63_000),
    attempt: 1,
    validBids: 1,
    winnerBidHash: new Uint8Array(randomBytes(32)),
    jobNonce: job.nonce,
    ...over
  }
}
