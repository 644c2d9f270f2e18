/** Fixed market and ledger messages the vector files are built from (fixed ids, times and keys). */

import { createHash } from 'node:crypto'
import { DOMAIN } from '../../../protocols/ids.js'
import { Attestation, JobStatus, Receipt } from '../../../protocols/job.js'
import { HeartbeatSummary, LedgerEntry } from '../../../protocols/ledger.js'
import { type Award, type Bid, JobRequest, PricingRule } from '../../../protocols/market.js'
import { messageHash } from '../../../src/identity/hash.js'
import { NOW, seal, type Party } from './build.js'

export const sha256 = (data: string | Uint8Array): Uint8Array => new Uint8Array(createHash('sha256').update(data).digest())
/** A fixed 16-byte id. */
export const id16 = (label: string): Uint8Array => sha256(label).subarray(0, 16)

export const JOB_ID = id16('job')
export const NONCE = id16('nonce')

export function jobRequest (renter: Party, change: Partial<JobRequest> = {}): JobRequest {
  return {
    jobId: JOB_ID,
    renter: renter.id,
    tier: JobRequest.Tier.SILVER,
    workload: 'inference',
    gpus: 0,
    image: '',
    estDurationMs: 60_000n,
    constraints: { minVramMib: 24_000, gpuModels: ['rtx-4090'], regions: [], residency: 'eu', maxPriceMicroUsd: 2_000_000n, maxLatencyMs: 0, minReliabilityPpm: 0, preemptible: false, minPreemptionNoticeMs: 0, excludeSimulated: false },
    datasetDigests: [],
    bidWindowMs: 5_000,
    createdAt: BigInt(NOW - 1_000),
    expiresAt: BigInt(NOW + 5 * 60_000),
    nonce: NONCE,
    pricingRule: PricingRule.SECOND_PRICE,
    renterAddrs: [],
    ...change
  }
}

export function bid (provider: Party, change: Partial<Bid> = {}): Bid {
  return {
    jobId: JOB_ID,
    provider: provider.id,
    priceMicroUsd: 1_200_000n,
    gpuModel: 'rtx-4090',
    vramMib: 24_564,
    region: 'eu-west',
    residency: 'eu',
    createdAt: BigInt(NOW - 500),
    expiresAt: BigInt(NOW + 5 * 60_000),
    capabilitySeq: 3n,
    jobNonce: NONCE,
    simulated: false,
    cachedDatasets: 0,
    addrs: [],
    ...change
  }
}

/** An award to `winner`'s bid (ranked first, the only ranked bid). */
export function award (renter: Party, winner: Party, winnerBidHash: Uint8Array, change: Partial<Award> = {}): Award {
  return {
    jobId: JOB_ID,
    renter: renter.id,
    winner: winner.id,
    clearingPriceMicroUsd: 1_200_000n,
    pricingRule: PricingRule.SECOND_PRICE,
    bidsDigest: sha256(winnerBidHash),
    runnerUp: [],
    acceptDeadline: BigInt(NOW + 3_000),
    createdAt: BigInt(NOW),
    expiresAt: BigInt(NOW + 63_000),
    attempt: 1,
    validBids: 1,
    winnerBidHash,
    jobNonce: NONCE,
    ranking: [{ bidHash: winnerBidHash, reliabilityPpm: 500_000 }],
    reliabilityWeightPpm: 2_000_000,
    latencyWeightPpm: 100_000,
    localityWeightPpm: 200_000,
    ...change
  }
}

export function summary (time: number): Uint8Array {
  return HeartbeatSummary.encode({
    periodStart: BigInt(time - 3_600_000),
    periodEnd: BigInt(time),
    heartbeatsSent: 120,
    intervalMs: 30_000,
    availableMs: 3_600_000n,
    upMs: 3_500_000n,
    slotsTotal: 1,
    busyPpm: 250_000
  })
}

/** chain 2 (ledger sync 4): hashed whole, signature included; absent: chain 1 (the message hash) */
export interface EntryInit {
  seq: number
  prev?: Uint8Array
  time: number
  kind?: LedgerEntry.BodyKind
  body?: Uint8Array
  chain?: 2 | 3
}

/** A ledger entry of `author` (body: a heartbeat summary unless given). */
export function entry (author: Party, e: EntryInit): { envelope: Uint8Array, payload: Uint8Array, hash: Uint8Array } {
  const payload = LedgerEntry.encode({
    author: author.id,
    seq: BigInt(e.seq),
    prevHash: e.prev ?? new Uint8Array(0),
    time: BigInt(e.time),
    kind: e.kind ?? LedgerEntry.BodyKind.HEARTBEAT_SUMMARY,
    body: e.body ?? summary(e.time),
    chain: e.chain ?? 0
  })
  const envelope = seal(author, DOMAIN.ledgerEntry, payload)
  return { envelope, payload, hash: e.chain === 2 ? sha256(envelope) : messageHash(DOMAIN.ledgerEntry, payload) }
}

export function attestation (
  provider: Party,
  renter: Party,
  awardHash: Uint8Array,
  change: Partial<Attestation> = {}
): { envelope: Uint8Array, hash: Uint8Array } {
  const payload = Attestation.encode({
    jobId: JOB_ID,
    renter: renter.id,
    provider: provider.id,
    inputDigest: sha256(''),
    outputDigest: sha256('outputs'),
    startedAt: BigInt(NOW - 60_000),
    endedAt: BigInt(NOW - 1_000),
    status: JobStatus.COMPLETED,
    exitCode: 0,
    gpu: { uuidHash: sha256('GPU-00000000-0000-0000-0000-000000000000'), driverVersion: '550.54', model: 'rtx-4090' },
    telemetry: { avgUtilPpm: 800_000, maxTempC: 71, energyMj: 9_000_000n, samples: 59, simulated: false },
    awardHash,
    preemptible: false,
    gpus: [],
    ...change
  })
  return { envelope: seal(provider, DOMAIN.attestation, payload), hash: messageHash(DOMAIN.attestation, payload) }
}

export function receipt (
  renter: Party,
  provider: Party,
  attestationHash: Uint8Array,
  change: Partial<Receipt> = {}
): Uint8Array {
  const payload = Receipt.encode({
    jobId: JOB_ID,
    provider: provider.id,
    renter: renter.id,
    attestationHash,
    outcome: Receipt.Outcome.OK,
    latencyMs: 59_000n,
    pricePaidMicroUsd: 1_200_000n,
    createdAt: BigInt(NOW - 500),
    receivedOutputDigest: sha256('outputs'),
    ...change
  })
  return seal(renter, DOMAIN.receipt, payload)
}
