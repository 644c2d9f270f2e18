import * as assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { Uint8ArrayList } from 'uint8arraylist'
import { CapabilityRecord } from '../../protocols/capability.js'
import { decodeBounded, envelopeMaxBytes, LIMITS, MAX_BYTES, WireDecodeError } from '../../protocols/codec.js'
import { SignedEnvelope } from '../../protocols/envelope.js'
import { Heartbeat } from '../../protocols/heartbeat.js'
import { JOB_SHARD_TOPICS, TOPIC, TOPIC_MAX_BYTES } from '../../protocols/ids.js'
import { Attestation, type FileEntry, JobFrame, JobStatus, Receipt } from '../../protocols/job.js'
import { FraudProof, HeartbeatSummary, LedgerEntry, SyncRequest, SyncResponse } from '../../protocols/ledger.js'
import { AcceptRequest, AcceptResponse, Award, Bid, Decline, DeclineReason, ExplainRequest, JobRequest, PricingRule } from '../../protocols/market.js'

const sha256 = (data: string | Uint8Array): Uint8Array => new Uint8Array(createHash('sha256').update(data).digest())
const bytes = (n: number): Uint8Array => new Uint8Array(randomBytes(n))
/** an Ed25519 peer id's byte length: identity multihash of the protobuf public key */
const peer = (): Uint8Array => bytes(38)

/** encode → bounded decode → encode again gives the same bytes and an equal object */
function roundTrip<T> (
  codec: { encode: (obj: T) => Uint8Array, decode: (buf: Uint8Array | Uint8ArrayList, opts?: any) => T },
  value: T,
  what: string,
  maxBytes: number,
  limits?: any
): void {
  const encoded = codec.encode(value)
  assert.ok(encoded.byteLength <= maxBytes, `${what}: a typical message (${encoded.byteLength} bytes) must fit its bound (${maxBytes})`)
  const decoded = decodeBounded(codec, encoded, what, maxBytes, limits)
  assert.deepEqual(decoded, value, `${what} decodes to what was encoded`)
  assert.deepEqual(codec.encode(decoded), encoded, `${what} re-encodes to the same bytes`)
  // a Uint8ArrayList (what stream readers hand over) decodes the same
  assert.deepEqual(
    decodeBounded(codec, new Uint8ArrayList(encoded.subarray(0, 3), encoded.subarray(3)), what, maxBytes, limits),
    value
  )
}

function expectWireError (fn: () => unknown, reason: 'oversized' | 'malformed'): WireDecodeError {
  let caught: unknown
  try {
    fn()
  } catch (err) {
    caught = err
  }
  if (!(caught instanceof WireDecodeError)) assert.fail(`expected a WireDecodeError, got ${String(caught)}`)
  assert.equal(caught.name, 'WireDecodeError')
  assert.equal(caught.code, 'ERR_WIRE_DECODE')
  assert.equal(caught.reason, reason)
  return caught
}

const capability: CapabilityRecord = {
  peerId: peer(),
  sequence: 7n,
  issuedAt: 1_700_000_000_000n,
  expiresAt: 1_700_001_800_000n,
  gpus: [{
    model: 'h100-80gb-hbm3',
    vramMib: 81_559,
    count: 2,
    computeCapability: '9.0',
    driverVersion: '550.54.15',
    uuidHash: [sha256('GPU-aaaa'), sha256('GPU-bbbb')],
    simulated: false
  }, {
    model: 'rtx-4090',
    vramMib: 24_564,
    count: 1,
    computeCapability: '8.9',
    driverVersion: '550.54.15',
    uuidHash: [sha256('GPU-cccc')],
    simulated: true
  }],
  region: 'eu-west',
  residency: 'eu',
  priceFloorMicroUsd: 1_200_000n,
  acceptedTiers: [CapabilityRecord.Tier.SILVER, CapabilityRecord.Tier.BRONZE],
  workloads: ['inference', 'evaluation'],
  allowedImages: ['pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime', 'ghcr.io/acme/*'],
  availability: [
    { days: 0b0011111, startMinute: 20 * 60, endMinute: 7 * 60 },
    { days: 0b1100000, startMinute: 0, endMinute: 0 }
  ],
  timeZone: 'Europe/Berlin',
  cachedDatasets: [sha256('imagenet')],
  maxJobMinutes: 240,
  maxTemperatureC: 83,
  maxPowerWatts: 700,
  preemptionGraceMs: 10_000,
  listenAddrs: [Uint8Array.of(4, 127, 0, 0, 1, 6, 0x10, 0x01)],
  runner: 'docker'
}

const jobId = bytes(16)
const renter = peer()
const provider = peer()

const jobRequest: JobRequest = {
  jobId,
  renter,
  gpus: 4,
  tier: JobRequest.Tier.GOLD,
  workload: 'inference',
  image: 'pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime',
  estDurationMs: 600_000n,
  constraints: {
    minVramMib: 40 * 1024,
    gpuModels: ['h100-80gb-hbm3', 'a100-sxm4-80gb'],
    regions: ['eu-west', 'eu-central'],
    residency: 'eu',
    maxPriceMicroUsd: 3_000_000n,
    maxLatencyMs: 50,
    minReliabilityPpm: 900_000,
    preemptible: false,
    minPreemptionNoticeMs: 0,
    excludeSimulated: true
  },
  datasetDigests: [sha256('imagenet')],
  bidWindowMs: 1000,
  createdAt: 1_700_000_000_000n,
  expiresAt: 1_700_000_060_000n,
  nonce: bytes(16),
  pricingRule: PricingRule.SECOND_PRICE,
  renterAddrs: []
}

const bid: Bid = {
  jobId,
  provider,
  priceMicroUsd: 2_100_000n,
  gpuModel: 'h100-80gb-hbm3',
  vramMib: 81_559,
  region: 'eu-west',
  residency: 'eu',
  createdAt: 1_700_000_000_300n,
  expiresAt: 1_700_000_030_000n,
  capabilitySeq: 7n,
  jobNonce: jobRequest.nonce,
  simulated: false,
  cachedDatasets: 1,
  addrs: [bytes(18)]
}

const award: Award = {
  jobId,
  renter,
  winner: provider,
  clearingPriceMicroUsd: 2_100_000n,
  pricingRule: PricingRule.FIRST_PRICE,
  bidsDigest: sha256('bids'),
  runnerUp: [peer(), peer()],
  ranking: [{ bidHash: sha256('bid'), reliabilityPpm: 900_000, rttMs: 12 }, { bidHash: sha256('bid 2'), reliabilityPpm: 0 }],
  reliabilityWeightPpm: 2_000_000,
  latencyWeightPpm: 100_000,
  localityWeightPpm: 200_000,
  acceptDeadline: 1_700_000_003_000n,
  createdAt: 1_700_000_001_000n,
  expiresAt: 1_700_000_061_000n,
  attempt: 1,
  validBids: 3,
  winnerBidHash: sha256('bid'),
  jobNonce: jobRequest.nonce
}

const attestation: Attestation = {
  jobId,
  renter,
  provider,
  inputDigest: sha256('in'),
  outputDigest: sha256('out'),
  startedAt: 1_700_000_004_000n,
  endedAt: 1_700_000_604_000n,
  status: JobStatus.PREEMPTED,
  exitCode: -15,
  gpu: { uuidHash: sha256('GPU-aaaa'), driverVersion: '550.54.15', model: 'h100-80gb-hbm3' },
  telemetry: { avgUtilPpm: 870_000, maxTempC: 78, energyMj: 210_000_000n, samples: 600, simulated: false },
  awardHash: sha256('award'),
  preemptible: true,
  gpus: [{ uuidHash: sha256('GPU-aaaa'), driverVersion: '550.54.15', model: 'h100-80gb-hbm3' }, { uuidHash: sha256('GPU-bbbb'), driverVersion: '550.54.15', model: 'h100-80gb-hbm3' }]
}

const receipt: Receipt = {
  jobId,
  provider,
  renter,
  attestationHash: sha256('attestation'),
  outcome: Receipt.Outcome.BAD_OUTPUT,
  latencyMs: 601_000n,
  pricePaidMicroUsd: 2_100_000n,
  createdAt: 1_700_000_605_000n,
  receivedOutputDigest: sha256('other')
}

const files: FileEntry[] = [
  { path: 'data/a.bin', size: 1_048_576n, sha256: sha256('a') },
  { path: 'model.pt', size: 0n, sha256: sha256('') }
]

/** one frame of each kind: exactly one oneof member set */
const frames: JobFrame[] = [
  {
    start: {
      award: bytes(300),
      jobRequest: bytes(300),
      runtime: { image: 'pytorch/pytorch:2.3.0', command: ['python', 'run.py', '--epochs', '1'], env: [{ key: 'SEED', value: '42' }], timeoutMs: 3_600_000n, shmSizeMib: 0 },
      inputs: files
    }
  },
  { inputChunk: { path: 'data/a.bin', offset: 65_536n, data: bytes(4096) } },
  { inputEnd: {} },
  { accepted: { at: 1_700_000_004_000n } },
  { rejected: { code: JobFrame.Rejected.Code.NOT_AWARDED, reason: 'award names another provider' } },
  { log: { stream: JobFrame.Log.Stream.STDERR, line: 'epoch 1/1 loss=0.42', at: 1_700_000_005_000n } },
  { outputChunk: { path: 'out/result.json', offset: 0n, data: bytes(100) } },
  { result: { status: JobStatus.COMPLETED, exitCode: 0, outputs: files } },
  { attestation: bytes(500) },
  { receipt: bytes(300) },
  { error: { code: JobFrame.Error.Code.IDLE_TIMEOUT, message: 'no frame for 60 s' } }
]

const entry: LedgerEntry = {
  author: provider,
  seq: 2n,
  prevHash: sha256('entry 1'),
  time: 1_700_000_605_000n,
  kind: LedgerEntry.BodyKind.ATTESTATION,
  body: bytes(600),
  chain: 2
}

describe('protocols: wire codecs', () => {
  it('round-trips the capability record', () => {
    roundTrip(CapabilityRecord, capability, 'capability record', MAX_BYTES.capabilityRecord, LIMITS.capabilityRecord)
  })

  it('round-trips the market messages', () => {
    roundTrip(JobRequest, jobRequest, 'job request', MAX_BYTES.jobRequest, LIMITS.jobRequest)
    roundTrip(Bid, bid, 'bid', MAX_BYTES.bid)
    roundTrip(Award, award, 'award', MAX_BYTES.award, LIMITS.award)
    roundTrip(AcceptRequest, { award: bytes(1000) }, 'accept request', MAX_BYTES.acceptRequest)
    roundTrip(AcceptResponse, { jobId, provider, attempt: 2, accepted: false, reason: DeclineReason.NO_CAPACITY, detail: 'slots full', createdAt: 1n }, 'accept response', MAX_BYTES.acceptResponse)
    roundTrip(ExplainRequest, { jobId, jobRequest: bytes(800) }, 'explain request', MAX_BYTES.explainRequest)
    roundTrip(Decline, { jobId, provider, reason: DeclineReason.PRICE_FLOOR, detail: 'floor 1.20 USD/h above max 1.00', createdAt: 5n }, 'decline', MAX_BYTES.decline)
  })

  it('round-trips every job frame kind, and a frame holds exactly one kind', () => {
    for (const frame of frames) {
      roundTrip(JobFrame, frame, `job frame ${Object.keys(frame)[0]}`, MAX_BYTES.jobFrame, LIMITS.jobFrame)
      assert.equal(Object.keys(JobFrame.decode(JobFrame.encode(frame))).length, 1)
    }
    // an encoder handed two members keeps one: the wire never carries an ambiguous frame
    const both = JobFrame.decode(JobFrame.encode({ inputEnd: {}, log: { stream: JobFrame.Log.Stream.STDOUT, line: 'x', at: 1n } }))
    assert.equal(Object.keys(both).length, 1)
  })

  it('a full-size chunk frame fits the frame bound', () => {
    const frame = JobFrame.encode({ outputChunk: { path: 'p'.repeat(1024), offset: 2n ** 40n, data: new Uint8Array(1024 * 1024) } })
    assert.ok(frame.byteLength <= MAX_BYTES.jobFrame)
  })

  it('round-trips attestation and receipt', () => {
    roundTrip(Attestation, attestation, 'attestation', MAX_BYTES.attestation)
    roundTrip(Receipt, receipt, 'receipt', MAX_BYTES.receipt)
  })

  it('round-trips the ledger messages', () => {
    roundTrip(LedgerEntry, entry, 'ledger entry', MAX_BYTES.ledgerEntry)
    roundTrip(HeartbeatSummary, { periodStart: 1n, periodEnd: 3_600_001n, heartbeatsSent: 360, intervalMs: 10_000, availableMs: 3_600_000n, upMs: 3_590_000n, slotsTotal: 8, busyPpm: 250_000 }, 'heartbeat summary', MAX_BYTES.heartbeatSummary)
    roundTrip(FraudProof, { kind: FraudProof.Kind.EQUIVOCATION, accused: provider, first: bytes(700), second: bytes(700), evidence: [], createdAt: 9n }, 'fraud proof', MAX_BYTES.fraudProof, LIMITS.fraudProof)
    roundTrip(SyncRequest, { heads: { ownAuthor: provider, ownSeq: 12n, ownHash: sha256('own head'), afterAuthor: provider, limit: 1 } }, 'sync request', MAX_BYTES.syncRequest)
    roundTrip(SyncRequest, { range: { author: provider, fromSeq: 1n, limit: 256 } }, 'sync request', MAX_BYTES.syncRequest)
    roundTrip(SyncResponse, { heads: { heads: [{ author: provider, seq: 50n, hash: sha256('head') }], more: true, answersRanges: true } }, 'sync response', MAX_BYTES.syncResponse, LIMITS.syncResponse)
    roundTrip(SyncResponse, { entries: { entries: [bytes(700), bytes(700)], more: true } }, 'sync response', MAX_BYTES.syncResponse, LIMITS.syncResponse)
    roundTrip(SyncRequest, { ranges: { ranges: [{ author: provider, fromSeq: 1n, limit: 1 }, { author: provider, fromSeq: 9n, limit: 0 }] } }, 'sync request', MAX_BYTES.syncRequest)
    roundTrip(SyncResponse, { ranges: { ranges: [{ entries: [bytes(700)], more: false }, { entries: [], more: true }] } }, 'sync response', MAX_BYTES.syncResponse, LIMITS.syncResponse)
  })

  it('keeps proto3 defaults off the wire (signed payloads stay minimal and stable)', () => {
    assert.equal(Bid.encode({}).byteLength, 0)
    assert.deepEqual(Bid.decode(new Uint8Array(0)).priceMicroUsd, 0n)
  })
})

describe('protocols: size bounds', () => {
  it('every enveloped bound fits the gossip topic that carries it', () => {
    for (const shard of JOB_SHARD_TOPICS) assert.ok(envelopeMaxBytes(MAX_BYTES.jobRequest) <= TOPIC_MAX_BYTES[shard])
    // bids and awards travel on streams: a bid request frame is one bid envelope, an audit request
    // carries an award envelope
    assert.ok(envelopeMaxBytes(MAX_BYTES.award) + 16 <= MAX_BYTES.bidsAuditRequest)
    assert.ok(
      1000 * envelopeMaxBytes(MAX_BYTES.bid) + envelopeMaxBytes(MAX_BYTES.jobRequest) + 8 * 1024 <=
        MAX_BYTES.bidsAuditResponse
    )
    assert.ok(envelopeMaxBytes(MAX_BYTES.ledgerEntry) <= TOPIC_MAX_BYTES[TOPIC.ledger])
    assert.ok(envelopeMaxBytes(MAX_BYTES.heartbeat) <= TOPIC_MAX_BYTES[TOPIC.heartbeats])
    assert.ok(envelopeMaxBytes(MAX_BYTES.award) <= MAX_BYTES.acceptRequest)
    assert.ok(envelopeMaxBytes(MAX_BYTES.fraudProof) <= MAX_BYTES.ledgerFraudProofBody)
    assert.ok(MAX_BYTES.ledgerFraudProofBody + 256 <= MAX_BYTES.ledgerEntry)
  })

  it('a fraud proof with four maximal ordinary entries fits its bound', () => {
    const ordinaryEntry = SignedEnvelope.encode({
      domain: 'ledger-entry',
      signer: peer(),
      payload: LedgerEntry.encode({
        ...entry,
        seq: 2n ** 63n,
        time: 2n ** 50n,
        body: new Uint8Array(MAX_BYTES.ledgerBody)
      }),
      signature: bytes(64)
    })
    const proof = FraudProof.encode({
      kind: FraudProof.Kind.BAD_OUTPUT,
      accused: peer(),
      first: ordinaryEntry,
      second: ordinaryEntry,
      evidence: [ordinaryEntry, ordinaryEntry],
      createdAt: 2n ** 50n
    })
    assert.ok(proof.byteLength <= MAX_BYTES.fraudProof, `${proof.byteLength} > ${MAX_BYTES.fraudProof}`)
  })

  it('rejects oversized input before decoding it', () => {
    let decodeCalls = 0
    const spy = { decode: (buf: Uint8Array | Uint8ArrayList) => { decodeCalls++; return Bid.decode(buf) } }
    const tooBig = new Uint8Array(MAX_BYTES.bid + 1)
    const err = expectWireError(() => decodeBounded(spy, tooBig, 'bid', MAX_BYTES.bid), 'oversized')
    assert.equal(decodeCalls, 0, 'the codec is never reached')
    assert.equal(err.what, 'bid')
    assert.match(err.message, /bid of 1025 bytes exceeds the 1024-byte bound/)
    // the bound counts a Uint8ArrayList's total length, not its first chunk
    expectWireError(() => decodeBounded(spy, new Uint8ArrayList(new Uint8Array(600), new Uint8Array(600)), 'bid', MAX_BYTES.bid), 'oversized')
    assert.equal(decodeCalls, 0)
    // exactly at the bound is allowed through to the decoder
    const atBound = Bid.encode({ gpuModel: 'x'.repeat(MAX_BYTES.bid - 3) })
    assert.equal(atBound.byteLength, MAX_BYTES.bid)
    assert.equal(decodeBounded(spy, atBound, 'bid', MAX_BYTES.bid).gpuModel.length, MAX_BYTES.bid - 3)
  })

  it('reports garbage as malformed, never as another error', () => {
    const garbage: Uint8Array[] = [
      Uint8Array.of(0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f), // length-delimited field longer than the buffer
      Uint8Array.of(0xff), // truncated varint tag
      Uint8Array.of(0x9f, 0x06, 0x00), // unknown field 99 with wire type 7, which does not exist
      Uint8Array.of(0x22, 0x05, 0x01), // field 4 (workload) claims 5 bytes, has 1
      Uint8Array.of(0x18, 0x63) // tier 99: enum values unknown to the receiver are refused
    ]
    for (const bad of garbage) {
      const err = expectWireError(() => decodeBounded(JobRequest, bad, 'job request', MAX_BYTES.jobRequest, LIMITS.jobRequest), 'malformed')
      assert.ok(err.cause != null, 'the decoder error is kept as the cause')
    }
    const frame = JobFrame.encode(frames[1])
    expectWireError(() => decodeBounded(JobFrame, frame.subarray(0, frame.byteLength - 10), 'job frame', MAX_BYTES.jobFrame, LIMITS.jobFrame), 'malformed')
  })
})

describe('protocols: repeated-field limits', () => {
  it('enforces the limits compiled into the codecs, even without runtime limits', () => {
    const overGpus = CapabilityRecord.encode({
      ...capability,
      gpus: Array.from({ length: LIMITS.capabilityRecord.gpus + 1 }, () => capability.gpus[0])
    })
    expectWireError(() => decodeBounded(CapabilityRecord, overGpus, 'capability record', 64 * 1024), 'malformed')
    const atGpus = CapabilityRecord.encode({
      ...capability,
      gpus: Array.from({ length: LIMITS.capabilityRecord.gpus }, () => capability.gpus[1])
    })
    assert.equal(decodeBounded(CapabilityRecord, atGpus, 'capability record', MAX_BYTES.capabilityRecord).gpus.length, LIMITS.capabilityRecord.gpus)

    const overUuids = CapabilityRecord.encode({ gpus: [{ ...capability.gpus[0], uuidHash: Array.from({ length: 17 }, () => sha256('u')) }] })
    expectWireError(() => decodeBounded(CapabilityRecord, overUuids, 'capability record', MAX_BYTES.capabilityRecord), 'malformed')
  })

  it('enforces each message\'s limits at exactly limit + 1', () => {
    const cases: Array<{
      what: string
      atLimit: Uint8Array
      overLimit: Uint8Array
      decode: (b: Uint8Array) => unknown
    }> = []
    const n = (k: number): Uint8Array[] => Array.from({ length: k }, () => bytes(2))
    const s = (k: number): string[] => Array.from({ length: k }, (_, i) => `v${i}`)
    const L = LIMITS

    const pair = (
      what: string,
      make: (k: number) => Uint8Array,
      limit: number,
      decode: (b: Uint8Array) => unknown
    ): void => {
      cases.push({ what, atLimit: make(limit), overLimit: make(limit + 1), decode })
    }
    const capDecode = (b: Uint8Array): unknown => decodeBounded(CapabilityRecord, b, 'capability record', 1024 * 1024, L.capabilityRecord)
    pair('capability.acceptedTiers', k => CapabilityRecord.encode({ acceptedTiers: Array(k).fill(CapabilityRecord.Tier.GOLD) }), L.capabilityRecord.acceptedTiers, capDecode)
    pair('capability.workloads', k => CapabilityRecord.encode({ workloads: s(k) }), L.capabilityRecord.workloads, capDecode)
    pair('capability.allowedImages', k => CapabilityRecord.encode({ allowedImages: s(k) }), L.capabilityRecord.allowedImages, capDecode)
    pair('capability.availability', k => CapabilityRecord.encode({ availability: Array(k).fill({ days: 1, startMinute: 0, endMinute: 60 }) }), L.capabilityRecord.availability, capDecode)
    pair('capability.cachedDatasets', k => CapabilityRecord.encode({ cachedDatasets: n(k) }), L.capabilityRecord.cachedDatasets, capDecode)
    pair('capability.listenAddrs', k => CapabilityRecord.encode({ listenAddrs: n(k) }), L.capabilityRecord.listenAddrs, capDecode)

    const jobDecode = (b: Uint8Array): unknown => decodeBounded(JobRequest, b, 'job request', 1024 * 1024, L.jobRequest)
    pair('jobRequest.datasetDigests', k => JobRequest.encode({ datasetDigests: n(k) }), L.jobRequest.datasetDigests, jobDecode)
    pair('jobRequest.constraints.gpuModels', k => JobRequest.encode({ constraints: { ...jobRequest.constraints!, gpuModels: s(k) } }), L.jobRequest.constraints.gpuModels, jobDecode)
    pair('jobRequest.constraints.regions', k => JobRequest.encode({ constraints: { ...jobRequest.constraints!, regions: s(k) } }), L.jobRequest.constraints.regions, jobDecode)

    pair('award.runnerUp', k => Award.encode({ runnerUp: n(k) }), L.award.runnerUp, b => decodeBounded(Award, b, 'award', 1024 * 1024, L.award))

    const frameDecode = (b: Uint8Array): unknown => decodeBounded(JobFrame, b, 'job frame', 8 * 1024 * 1024, L.jobFrame)
    const start = frames[0].start!
    pair('jobFrame.start.inputs', k => JobFrame.encode({ start: { ...start, inputs: Array(k).fill(files[1]) } }), L.jobFrame.start.inputs, frameDecode)
    pair('jobFrame.start.runtime.command', k => JobFrame.encode({ start: { ...start, runtime: { ...start.runtime!, command: s(k) } } }), L.jobFrame.start.runtime.command, frameDecode)
    pair('jobFrame.start.runtime.env', k => JobFrame.encode({ start: { ...start, runtime: { ...start.runtime!, env: Array(k).fill({ key: 'K', value: 'V' }) } } }), L.jobFrame.start.runtime.env, frameDecode)
    pair('jobFrame.result.outputs', k => JobFrame.encode({ result: { status: JobStatus.COMPLETED, exitCode: 0, outputs: Array(k).fill(files[1]) } }), L.jobFrame.result.outputs, frameDecode)

    pair('fraudProof.evidence', k => FraudProof.encode({ evidence: n(k) }), L.fraudProof.evidence, b => decodeBounded(FraudProof, b, 'fraud proof', 1024 * 1024, L.fraudProof))
    const syncDecode = (b: Uint8Array): unknown => decodeBounded(SyncResponse, b, 'sync response', 16 * 1024 * 1024, L.syncResponse)
    pair('syncResponse.heads', k => SyncResponse.encode({ heads: { heads: Array(k).fill({ author: provider, seq: 1n, hash: sha256('h') }), more: false, answersRanges: false } }), L.syncResponse.heads.heads, syncDecode)
    pair('syncResponse.entries', k => SyncResponse.encode({ entries: { entries: n(k), more: false } }), L.syncResponse.entries.entries, syncDecode)
    pair('syncResponse.ranges', k => SyncResponse.encode({ ranges: { ranges: Array(k).fill({ entries: n(1), more: false }) } }), L.syncResponse.ranges.ranges, syncDecode)
    pair('syncResponse.ranges entries', k => SyncResponse.encode({ ranges: { ranges: [{ entries: n(k), more: false }] } }), L.syncResponse.ranges.ranges$.entries, syncDecode)
    pair('syncRequest.ranges', k => SyncRequest.encode({ ranges: { ranges: Array(k).fill({ author: provider, fromSeq: 1n, limit: 1 }) } }), 64, b => decodeBounded(SyncRequest, b, 'sync request', MAX_BYTES.syncRequest))

    for (const c of cases) {
      assert.doesNotThrow(() => c.decode(c.atLimit), `${c.what}: exactly at the limit decodes`)
      const err = expectWireError(() => c.decode(c.overLimit), 'malformed')
      assert.match(err.message, /too many elements/, c.what)
    }
  })

  it('accepts tighter runtime limits from the caller', () => {
    const encoded = Award.encode({ runnerUp: [peer(), peer(), peer()] })
    assert.equal(decodeBounded(Award, encoded, 'award', MAX_BYTES.award, { runnerUp: 3 }).runnerUp.length, 3)
    expectWireError(() => decodeBounded(Award, encoded, 'award', MAX_BYTES.award, { runnerUp: 2 }), 'malformed')
  })

  it('bounds heartbeats like every other message', () => {
    const hb = Heartbeat.encode({
      role: Heartbeat.Role.PROVIDER,
      seq: 2n ** 64n - 1n,
      sentAt: 2n ** 50n,
      expiresAt: 2n ** 50n,
      slotsTotal: 2 ** 32 - 1,
      slotsBusy: 2 ** 32 - 1
    })
    assert.ok(hb.byteLength <= MAX_BYTES.heartbeat)
  })
})
