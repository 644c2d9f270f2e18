/**
 * Valid messages made by the project's own code (real keys, real signatures): the seeds every
 * fuzz target mutates. Times are relative to the moment the fixtures are built, so the seeds
 * pass the time rules during a run; `now` is that moment.
 */
import { randomBytes } from 'node:crypto'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import * as lp from 'it-length-prefixed'
import { CapabilityRecord } from '../../protocols/capability.js'
import { Heartbeat } from '../../protocols/heartbeat.js'
import { DOMAIN } from '../../protocols/ids.js'
import { JobFrame, JobStatus } from '../../protocols/job.js'
import { HeartbeatSummary, LedgerEntry, SyncRequest, SyncResponse } from '../../protocols/ledger.js'
import { AcceptRequest, ExplainRequest } from '../../protocols/market.js'
import { sealCapabilityRecord } from '../../src/capability/record/record.js'
import { sealEnvelope, sha256 } from '../../src/identity/index.js'
import { signTestJob, type Signer, type TestJob } from '../../src/ledger/dev.js'
import { sealEntry, type LedgerRecord } from '../../src/ledger/entries/entry.js'
import { buildEquivocationProof } from '../../src/ledger/entries/fraud.js'
import { DeclineReason, JobRequest, PricingRule, signAcceptResponse, signAward, signBid, signDecline, signJobRequest } from '../../src/market/shared/messages.js'
import { loadVectorSeeds } from './vectors.js'

const bytes = (n: number): Uint8Array => new Uint8Array(randomBytes(n))

async function signer (): Promise<Signer> {
  const key = await generateKeyPair('Ed25519')
  return { key, peerId: peerIdFromPrivateKey(key) }
}

export interface Fixtures {
  now: number
  renter: Signer
  provider: Signer
  other: Signer
  /** payload seeds (encoded inner messages) by message name */
  payloads: Record<string, Uint8Array[]>
  /** envelope seeds by signing domain */
  envelopes: Record<string, Uint8Array[]>
  /** a provider's feed (seq 1…n) and a renter's, chained, as a store would hold them */
  feeds: { provider: LedgerRecord[], renter: LedgerRecord[] }
  /** the provider's capability record as stored in the DHT */
  capabilityValue: Uint8Array
  job: TestJob
}

let built: Promise<Fixtures> | undefined

/** The fixtures, built once per process. */
export async function fixtures (): Promise<Fixtures> {
  built ??= build()
  return await built
}

function capabilityRecord (peer: Signer, now: number, sequence: bigint): CapabilityRecord {
  return {
    peerId: peer.peerId.toMultihash().bytes,
    sequence,
    issuedAt: BigInt(now),
    expiresAt: BigInt(now + 60 * 60_000),
    gpus: [{ model: 'h100-80gb', vramMib: 81_559, count: 2, computeCapability: '9.0', driverVersion: '550.54.15', uuidHash: [sha256('GPU-a'), sha256('GPU-b')], simulated: false },
      { model: 'rtx-4090', vramMib: 24_564, count: 1, computeCapability: '', driverVersion: '', uuidHash: [sha256('GPU-c')], simulated: true }],
    region: 'eu-west',
    residency: 'eu',
    priceFloorMicroUsd: 1_200_000n,
    acceptedTiers: [CapabilityRecord.Tier.SILVER, CapabilityRecord.Tier.BRONZE],
    workloads: ['inference', 'evaluation'],
    allowedImages: ['pytorch/pytorch:2.3.0', 'ghcr.io/acme/*'],
    availability: [{ days: 0b0011111, startMinute: 20 * 60, endMinute: 7 * 60 }],
    timeZone: 'Europe/Berlin',
    cachedDatasets: [sha256('imagenet')],
    maxJobMinutes: 240,
    maxTemperatureC: 83,
    maxPowerWatts: 700,
    preemptionGraceMs: 10_000,
    listenAddrs: [Uint8Array.of(4, 127, 0, 0, 1, 6, 0x10, 0x01)],
    runner: 'process'
  }
}

async function build (): Promise<Fixtures> {
  const now = Date.now()
  const [renter, provider, other] = await Promise.all([signer(), signer(), signer()])
  const renterId = renter.peerId.toMultihash().bytes
  const providerId = provider.peerId.toMultihash().bytes
  const jobId = bytes(16)
  const nonce = bytes(16)

  const jobRequest: JobRequest = {
    jobId,
    renter: renterId,
    gpus: 0,
    tier: JobRequest.Tier.SILVER,
    workload: 'inference',
    image: '',
    estDurationMs: 600_000n,
    constraints: { minVramMib: 40_960, gpuModels: ['h100-80gb'], regions: ['eu-west'], residency: 'eu', maxPriceMicroUsd: 3_000_000n, maxLatencyMs: 0, minReliabilityPpm: 0, preemptible: false, minPreemptionNoticeMs: 0, excludeSimulated: false },
    datasetDigests: [sha256('imagenet')],
    bidWindowMs: 1000,
    createdAt: BigInt(now),
    expiresAt: BigInt(now + 10 * 60_000 - 1),
    nonce,
    pricingRule: PricingRule.SECOND_PRICE,
    renterAddrs: []
  }
  const job = signJobRequest(renter.key, renter.peerId, jobRequest)
  const bid = signBid(provider.key, provider.peerId, {
    jobId,
    provider: providerId,
    priceMicroUsd: 2_100_000n,
    gpuModel: 'h100-80gb',
    vramMib: 81_559,
    region: 'eu-west',
    residency: 'eu',
    createdAt: BigInt(now + 100),
    expiresAt: BigInt(now + 10 * 60_000 - 1),
    capabilitySeq: 7n,
    jobNonce: nonce,
    simulated: false,
    cachedDatasets: 1,
    addrs: [Uint8Array.of(4, 127, 0, 0, 1, 6, 0x10, 0x01)]
  })
  const award = signAward(renter.key, renter.peerId, {
    jobId,
    renter: renterId,
    winner: providerId,
    clearingPriceMicroUsd: 2_100_000n,
    pricingRule: PricingRule.SECOND_PRICE,
    bidsDigest: sha256(bid.hash),
    runnerUp: [other.peerId.toMultihash().bytes],
    acceptDeadline: BigInt(now + 5_000),
    createdAt: BigInt(now + 1_000),
    expiresAt: BigInt(now + 10 * 60_000),
    attempt: 1,
    validBids: 1,
    winnerBidHash: bid.hash,
    jobNonce: nonce,
    ranking: [{ bidHash: bid.hash, reliabilityPpm: 900_000, rttMs: 3 }],
    reliabilityWeightPpm: 2_000_000,
    latencyWeightPpm: 100_000,
    localityWeightPpm: 200_000
  })
  const accept = signAcceptResponse(provider.key, provider.peerId, { jobId, provider: providerId, attempt: 1, accepted: true, reason: DeclineReason.REASON_UNSPECIFIED, detail: '', createdAt: BigInt(now) })
  const declineAccept = signAcceptResponse(provider.key, provider.peerId, { jobId, provider: providerId, attempt: 1, accepted: false, reason: DeclineReason.NO_CAPACITY, detail: 'busy', createdAt: BigInt(now) })
  const decline = signDecline(provider.key, provider.peerId, { jobId, provider: providerId, reason: DeclineReason.VRAM, detail: 'needs 80 GiB', createdAt: BigInt(now) })
  const heartbeat = Heartbeat.encode({
    role: Heartbeat.Role.PROVIDER,
    seq: BigInt(now),
    sentAt: BigInt(now),
    expiresAt: BigInt(now + 5 * 60_000),
    slotsTotal: 2,
    slotsBusy: 1
  })
  const capability = sealCapabilityRecord(provider.key, provider.peerId, capabilityRecord(provider, now, 7n))
  const testJob = signTestJob({ provider, renter, at: now - 1_000, durationMs: 60_000 })
  const failedJob = signTestJob({ provider, renter, at: now - 500, outcome: 'bad-output' })

  // two chained feeds, one of each body kind, and a fraud proof against an equivocating author
  const summary = HeartbeatSummary.encode({
    periodStart: BigInt(now - 3_600_000),
    periodEnd: BigInt(now - 60_000),
    heartbeatsSent: 300,
    intervalMs: 10_000,
    availableMs: 3_000_000n,
    upMs: 2_900_000n,
    slotsTotal: 2,
    busyPpm: 500_000
  })
  const providerFeed: LedgerRecord[] = []
  const append = (
    feed: LedgerRecord[],
    who: Signer,
    kind: LedgerEntry.BodyKind,
    body: Uint8Array,
    time: number
  ): LedgerRecord => {
    const head = feed[feed.length - 1]
    const record = sealEntry(who.key, who.peerId, {
      seq: feed.length + 1,
      prevHash: head?.hash ?? new Uint8Array(0),
      time,
      kind,
      body
    })
    feed.push(record)
    return record
  }
  append(providerFeed, provider, LedgerEntry.BodyKind.ATTESTATION, testJob.attestation, now - 900)
  append(providerFeed, provider, LedgerEntry.BodyKind.HEARTBEAT_SUMMARY, summary, now - 800)
  append(providerFeed, provider, LedgerEntry.BodyKind.ATTESTATION, failedJob.attestation, now - 400)
  const renterFeed: LedgerRecord[] = []
  append(renterFeed, renter, LedgerEntry.BodyKind.RECEIPT, testJob.receipt, now - 850)
  append(renterFeed, renter, LedgerEntry.BodyKind.RECEIPT, failedJob.receipt, now - 300)
  const fork1 = sealEntry(other.key, other.peerId, {
    seq: 1,
    prevHash: new Uint8Array(0),
    time: now - 700,
    kind: LedgerEntry.BodyKind.HEARTBEAT_SUMMARY,
    body: summary
  })
  const fork2 = sealEntry(other.key, other.peerId, {
    seq: 1,
    prevHash: new Uint8Array(0),
    time: now - 650,
    kind: LedgerEntry.BodyKind.HEARTBEAT_SUMMARY,
    body: HeartbeatSummary.encode({ ...HeartbeatSummary.decode(summary), upMs: 1n })
  })
  const proof = buildEquivocationProof({ privateKey: renter.key, peerId: renter.peerId }, fork1, fork2, now - 200)
  append(renterFeed, renter, LedgerEntry.BodyKind.FRAUD_PROOF, proof, now - 200)

  const frames: JobFrame[] = [
    { start: { award: award.envelope, jobRequest: job.envelope, runtime: { image: '', command: ['python3', 'run.py'], env: [{ key: 'SEED', value: '1' }], timeoutMs: 60_000n, shmSizeMib: 0 }, inputs: [{ path: 'data/in.txt', size: 5n, sha256: sha256('hello') }] } },
    { inputChunk: { path: 'data/in.txt', offset: 0n, data: new TextEncoder().encode('hello') } },
    { inputEnd: {} },
    { accepted: { at: BigInt(now) } },
    { rejected: { code: JobFrame.Rejected.Code.POLICY, reason: 'image not allowed' } },
    { log: { stream: JobFrame.Log.Stream.STDERR, line: 'step 1', at: BigInt(now) } },
    { progress: { at: BigInt(now), elapsedMs: 1_000n } },
    { outputChunk: { path: 'out/result.json', offset: 0n, data: new TextEncoder().encode('{"ok":true}') } },
    { result: { status: JobStatus.COMPLETED, exitCode: -9, outputs: [{ path: 'out/result.json', size: 11n, sha256: sha256('{"ok":true}') }] } },
    { attestation: testJob.attestation },
    { receipt: testJob.receipt },
    { error: { code: JobFrame.Error.Code.IDLE_TIMEOUT, message: 'no frame' } }
  ]
  const syncRequests: SyncRequest[] = [
    {
      heads: {
        ownAuthor: providerId,
        ownSeq: 3n,
        ownHash: providerFeed[2].hash,
        afterAuthor: new Uint8Array(0),
        limit: 0
      }
    },
    {
      heads: {
        ownAuthor: new Uint8Array(0),
        ownSeq: 0n,
        ownHash: new Uint8Array(0),
        afterAuthor: renterId,
        limit: 10
      }
    },
    { range: { author: providerId, fromSeq: 1n, limit: 256 } },
    { range: { author: renterId, fromSeq: 2n, limit: 1 } },
    { ranges: { ranges: [{ author: providerId, fromSeq: 1n, limit: 3 }, { author: renterId, fromSeq: 2n, limit: 1 }] } }
  ]
  const syncResponses: SyncResponse[] = [
    {
      heads: {
        heads: [providerFeed, renterFeed].map(f => ({
          author: f[0].author,
          seq: BigInt(f.length),
          hash: f[f.length - 1].hash
        })),
        more: false,
        answersRanges: false
      }
    },
    { heads: { heads: [{ author: renterId, seq: 3n, hash: renterFeed[2].hash }], more: true, answersRanges: false } },
    { entries: { entries: providerFeed.map(r => r.envelope), more: false } },
    { entries: { entries: renterFeed.slice(0, 2).map(r => r.envelope), more: true } },
    {
      heads: {
        heads: [{ author: providerId, seq: 3n, hash: providerFeed[2].hash }],
        more: false,
        answersRanges: true
      }
    },
    {
      ranges: {
        ranges: [
          { entries: providerFeed.map(r => r.envelope), more: false },
          { entries: renterFeed.slice(1, 2).map(r => r.envelope), more: true }
        ]
      }
    }
  ]

  const payloadOf = (env: { envelope: Uint8Array }): Uint8Array => payloadsOfEnvelope(env.envelope)
  const vectors = loadVectorSeeds()
  const payloads: Record<string, Uint8Array[]> = {
    Heartbeat: [heartbeat],
    CapabilityRecord: [payloadOf(capability)],
    JobRequest: [payloadOf(job)],
    Bid: [payloadOf(bid)],
    Award: [payloadOf(award)],
    AcceptRequest: [AcceptRequest.encode({ award: award.envelope })],
    AcceptResponse: [payloadOf(accept), payloadOf(declineAccept)],
    ExplainRequest: [
      ExplainRequest.encode({ jobId, jobRequest: job.envelope }),
      ExplainRequest.encode({ jobId, jobRequest: new Uint8Array(0) })
    ],
    Decline: [payloadOf(decline)],
    JobFrame: frames.map(f => JobFrame.encode(f)),
    Attestation: [payloadsOfEnvelope(testJob.attestation), payloadsOfEnvelope(failedJob.attestation)],
    Receipt: [payloadsOfEnvelope(testJob.receipt), payloadsOfEnvelope(failedJob.receipt)],
    LedgerEntry: [...providerFeed, ...renterFeed].map(r => r.payload),
    HeartbeatSummary: [summary],
    FraudProof: [payloadsOfEnvelope(proof)],
    SyncRequest: syncRequests.map(r => SyncRequest.encode(r)),
    SyncResponse: syncResponses.map(r => SyncResponse.encode(r))
  }
  for (const [name, seeds] of Object.entries(vectors)) (payloads[name] ??= []).push(...seeds)
  const envelopes: Record<string, Uint8Array[]> = {
    [DOMAIN.heartbeat]: [sealEnvelope(provider.key, provider.peerId, DOMAIN.heartbeat, heartbeat)],
    [DOMAIN.capability]: [capability.envelope],
    [DOMAIN.jobRequest]: [job.envelope],
    [DOMAIN.bid]: [bid.envelope],
    [DOMAIN.award]: [award.envelope],
    [DOMAIN.accept]: [accept.envelope, declineAccept.envelope],
    [DOMAIN.decline]: [decline.envelope],
    [DOMAIN.attestation]: [testJob.attestation, failedJob.attestation],
    [DOMAIN.receipt]: [testJob.receipt, failedJob.receipt],
    [DOMAIN.ledgerEntry]: [...providerFeed, ...renterFeed].map(r => r.envelope),
    [DOMAIN.fraudProof]: [proof]
  }
  for (const seed of vectors.SignedEnvelope ?? []) (envelopes.vector ??= []).push(seed)
  return {
    now,
    renter,
    provider,
    other,
    payloads,
    envelopes,
    feeds: { provider: providerFeed, renter: renterFeed },
    capabilityValue: capability.envelope,
    job: testJob
  }
}

/** The payload field of an encoded envelope (the fixtures' own, so it decodes). */
function payloadsOfEnvelope (envelope: Uint8Array): Uint8Array {
  // field 3 of SignedEnvelope; decoded by hand to keep this file free of the decoder under test
  let pos = 0
  const varint = (): number => {
    let v = 0
    let mul = 1
    while (true) {
      const b = envelope[pos++]
      v += (b & 0x7f) * mul
      mul *= 128
      if (b < 0x80) return v
    }
  }
  while (pos < envelope.length) {
    const tag = varint()
    const len = varint()
    if (tag === (3 << 3 | 2)) return envelope.subarray(pos, pos + len)
    pos += len
  }
  throw new Error('fixture envelope without payload')
}

/** Length-prefixed frames as one byte stream: what a job stream carries. */
export function frameStream (frames: Uint8Array[]): Uint8Array {
  const parts = frames.map(f => lp.encode.single(f).subarray())
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) { out.set(p, at); at += p.length }
  return out
}
