/**
 * Bounded decoding for every idlegrid wire message, and the size and repeated-field bounds
 * each message is held to. Receivers never call a codec's `decode` on untrusted bytes
 * directly: they call `decodeBounded`, which refuses oversized input before parsing it and
 * turns every parse failure into one typed error.
 *
 * The repeated-field limits below are also compiled into the generated codecs through
 * `[(protons.options).limit = N]` in the .proto files, so they hold even for a nested decode
 * that forgets to pass limits; passing them here keeps the two visible in one place, and a
 * caller may pass tighter ones.
 */

// every encoder writes uint64s in [2^31, 2^32) right from here on (a library bug: uint64.ts)
import './uint64.js'
import { normalise, shapeOf } from './normalise.js'
import type { CapabilityRecord } from './capability.js'
import type { JobFrame } from './job.js'
import type { FraudProof, SyncResponse } from './ledger.js'
import type { Heartbeat } from './heartbeat.js'
import type { JobRequest, Award, BidsAuditResponse } from './market.js'
import type { Punch } from './punch.js'
import type { TrustList } from './trust.js'
import type { DecodeOptions } from 'protons-runtime'
import type { Uint8ArrayList } from 'uint8arraylist'

export type WireDecodeReason = 'oversized' | 'malformed'

/** A message from the wire that was too large or did not decode. */
export class WireDecodeError extends Error {
  static readonly code = 'ERR_WIRE_DECODE'
  readonly code = WireDecodeError.code
  readonly reason: WireDecodeReason
  /** what was being decoded, e.g. "bid" */
  readonly what: string

  constructor (reason: WireDecodeReason, what: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'WireDecodeError'
    this.reason = reason
    this.what = what
  }
}

/** Anything with a protons-style `decode`: every generated message namespace fits. */
export interface WireDecoder<T> {
  decode: (buf: Uint8Array | Uint8ArrayList, opts?: DecodeOptions<T>) => T
}

export type WireLimits<T> = NonNullable<DecodeOptions<T>['limits']>

/**
 * Decodes untrusted `bytes` with `codec`, refusing them unread when they exceed `maxBytes`.
 * Every valid protobuf encoding decodes: fields in any order, explicit default values, unknown
 * fields (skipped), repeated scalars packed or unpacked, and a message field sent more than
 * once (merged); normalise.ts rewrites these for protons. A length prefix reaching past its
 * message (2^32 or more always does) is malformed, not truncated to 32 bits as protons would.
 * Throws WireDecodeError ('oversized' or 'malformed'); never anything else.
 */
export function decodeBounded<T> (
  codec: WireDecoder<T>,
  bytes: Uint8Array | Uint8ArrayList,
  what: string,
  maxBytes: number,
  limits?: WireLimits<T>
): T {
  if (bytes.byteLength > maxBytes) {
    throw new WireDecodeError('oversized', what, `${what} of ${bytes.byteLength} bytes exceeds the ${maxBytes}-byte bound`)
  }
  try {
    const input = normalise(bytes instanceof Uint8Array ? bytes : bytes.subarray(), shapeOf(codec))
    return codec.decode(input, limits == null ? undefined : { limits })
  } catch (err: any) {
    throw new WireDecodeError('malformed', what, `${what} does not decode: ${String(err?.message ?? err)}`, { cause: err })
  }
}

/**
 * Decodes bytes this node already verified (its own store): the same normalising decoder as
 * decodeBounded, so a stored message means what it meant when it was checked, without the size
 * bound (the store holds only what passed it).
 */
export function decodeVerified<T> (codec: WireDecoder<T>, bytes: Uint8Array, what: string, limits?: WireLimits<T>): T {
  return decodeBounded(codec, bytes, what, Number.POSITIVE_INFINITY, limits)
}

const KiB = 1024
const MiB = 1024 * KiB

/** Largest `data` in one InputChunk or OutputChunk frame. */
export const MAX_CHUNK_BYTES = 1 * MiB

/**
 * Upper bound, in bytes, of each encoded message (the protobuf bytes of the message itself;
 * a SignedEnvelope around it adds at most ENVELOPE_OVERHEAD_BYTES, see envelopeMaxBytes).
 */
export const MAX_BYTES = {
  signedEnvelope: 64 * KiB,
  heartbeat: 256,
  capabilityRecord: 8 * KiB,
  jobRequest: 8 * KiB,
  bid: 1 * KiB,
  award: 8 * KiB,
  /** carries an award envelope */
  acceptRequest: 9 * KiB,
  acceptResponse: 1 * KiB,
  bidAck: 256,
  /** carries an award envelope */
  bidsAuditRequest: 9 * KiB,
  /** a job request envelope and up to 1000 bid envelopes */
  bidsAuditResponse: 2 * MiB,
  /** may carry a job request envelope */
  explainRequest: 9 * KiB,
  decline: 1 * KiB,
  /** one chunk of MAX_CHUNK_BYTES plus framing; also bounds Start */
  jobFrame: MAX_CHUNK_BYTES + 4 * KiB,
  attestation: 2 * KiB,
  receipt: 1 * KiB,
  ledgerEntry: 32 * KiB,
  /** LedgerEntry.body for ATTESTATION, RECEIPT and HEARTBEAT_SUMMARY */
  ledgerBody: 6 * KiB,
  /** LedgerEntry.body for FRAUD_PROOF: the proof's envelope */
  ledgerFraudProofBody: 30 * KiB,
  heartbeatSummary: 256,
  usageStatement: 512,
  /** LedgerEntry.body for USAGE: a statement and two signatures */
  coSignedUsage: 768,
  usageFrame: 1 * KiB,
  /** embeds up to four ledger-entry envelopes with ordinary bodies */
  fraudProof: 29 * KiB,
  /** a direct-path message: two lists of at most four 64-byte addresses */
  punch: 640,
  /** a `ranges` request: up to 64 ranges of ~60 bytes (a heads or range request is under 256) */
  syncRequest: 4 * KiB,
  syncResponse: 4 * MiB,
  /** an operator's trust list: up to 256 peer ids */
  trustList: 16 * KiB
} as const

/**
 * What a SignedEnvelope adds around its payload at most: domain (<= 64 chars), signer peer id
 * (<= 64 bytes), 64-byte signature, tags and length prefixes.
 */
export const ENVELOPE_OVERHEAD_BYTES = 256

/** Bound of a SignedEnvelope whose payload is bounded by `payloadMaxBytes`. */
export function envelopeMaxBytes (payloadMaxBytes: number): number {
  return payloadMaxBytes + ENVELOPE_OVERHEAD_BYTES
}

/**
 * Repeated-field limits per message, in protons' runtime shape (`field$` limits the fields of
 * each element of a repeated sub-message). Equal to the limits compiled into the .proto files.
 */
export const LIMITS = {
  capabilityRecord: {
    gpus: 16,
    gpus$: { uuidHash: 16 },
    acceptedTiers: 3,
    workloads: 8,
    allowedImages: 64,
    availability: 32,
    cachedDatasets: 64,
    listenAddrs: 16
  } satisfies WireLimits<CapabilityRecord>,
  jobRequest: {
    constraints: { gpuModels: 16, regions: 16 },
    datasetDigests: 16,
    renterAddrs: 4
  } satisfies WireLimits<JobRequest>,
  bidsAuditResponse: {
    bids: 1000
  } satisfies WireLimits<BidsAuditResponse>,
  award: {
    runnerUp: 64,
    ranking: 72
  } satisfies WireLimits<Award>,
  jobFrame: {
    start: { inputs: 4096, runtime: { command: 256, env: 128 } },
    result: { outputs: 4096 },
    held: { sha256: 4096 }
  } satisfies WireLimits<JobFrame>,
  fraudProof: {
    evidence: 2
  } satisfies WireLimits<FraudProof>,
  punch: {
    listenAddrs: 4,
    punchAddrs: 4
  } satisfies WireLimits<Punch>,
  syncResponse: {
    heads: { heads: 10_000 },
    entries: { entries: 1024 },
    ranges: { ranges: 64, ranges$: { entries: 1024 } }
  } satisfies WireLimits<SyncResponse>,
  trustList: {
    peers: 256
  } satisfies WireLimits<TrustList>,
  heartbeat: {
    relayedHeads: 4
  } satisfies WireLimits<Heartbeat>
} as const

/**
 * Time rules every receiver applies (protocols/README.md, "Replay and expiry"). A message
 * whose created/issued/sent time is more than MAX_CLOCK_SKEW_MS ahead of the receiver's clock,
 * whose expiry has passed, or whose lifetime (expiry minus creation) exceeds its maximum here
 * is rejected; bounded lifetimes are what keep the seen-message sets bounded.
 */
export const MAX_CLOCK_SKEW_MS = 30_000

export const MAX_LIFETIME_MS = {
  heartbeat: 5 * 60_000,
  capabilityRecord: 2 * 60 * 60_000,
  jobRequest: 10 * 60_000,
  bid: 10 * 60_000,
  award: 10 * 60_000,
  trustList: 90 * 24 * 60 * 60_000
} as const
