/**
 * Building, signing, opening and checking the market's wire messages (protocols/market.proto):
 * JobRequest, Bid, Award, AcceptResponse, Decline. Every reader takes untrusted bytes (or an
 * envelope the gossip router already verified), decodes within bounds and applies the time
 * rules of protocols/README.md §9; failures are MarketError ERR_MARKET_MESSAGE with a short reason.
 */

import { peerIdFromMultihash } from '@libp2p/peer-id'
import * as Digest from 'multiformats/hashes/digest'
import { equals } from 'uint8arrays/equals'
import { decodeBounded, envelopeMaxBytes, LIMITS, MAX_BYTES, MAX_CLOCK_SKEW_MS, MAX_LIFETIME_MS, WireDecodeError, type WireDecoder, type WireLimits } from '../../../protocols/codec.js'
import { SignedEnvelope } from '../../../protocols/envelope.js'
import { DOMAIN } from '../../../protocols/ids.js'
import { AcceptResponse, Award, Bid, BidAck, Decline, DeclineReason, JobRequest, PricingRule } from '../../../protocols/market.js'
import { jobTierFromWire, WORKLOAD_KINDS, type Tier } from '../../capability/index.js'
import { isEnvelopeError, messageHash, openEnvelope, sealSigned, type OpenedEnvelope, type Signed } from '../../identity/index.js'
import { messageError } from '../errors.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

export { JobRequest, Bid, BidAck, Award, AcceptResponse, Decline, DeclineReason, PricingRule }

/** micro-USD in one USD */
export const MICRO_USD = 1_000_000
/** parts per million in 1.0 */
export const PPM = 1_000_000
/** Longest bid window a renter may ask for (and a provider will honour). */
export const MAX_BID_WINDOW_MS = 60_000
/** Listen addresses a bid may carry, and the longest one (binary multiaddr). */
export const MAX_BID_ADDRS = 4
export const MAX_BID_ADDR_BYTES = 64
export const ID_BYTES = 16
export const DIGEST_BYTES = 32
const MAX_NAME_CHARS = 64
const MAX_IMAGE_CHARS = 512

export type PricingRuleName = 'first-price' | 'second-price'

export function usdToMicro (usd: number): bigint {
  return BigInt(Math.round(usd * MICRO_USD))
}

export function microToUsd (micro: bigint | number): number {
  return Number(micro) / MICRO_USD
}

/** A job's tier; MarketError ERR_MARKET_MESSAGE (malformed) when the wire value names none. */
export function tierOf (job: Pick<JobRequest, 'tier'>): Tier {
  const tier = jobTierFromWire(job.tier)
  if (tier == null) throw messageError('malformed', `tier ${String(job.tier)} is not gold, silver or bronze`)
  return tier
}

export function pricingRuleToWire (rule: PricingRuleName): PricingRule {
  return rule === 'second-price' ? PricingRule.SECOND_PRICE : PricingRule.FIRST_PRICE
}

export function pricingRuleName (rule: PricingRule): PricingRuleName {
  return rule === PricingRule.SECOND_PRICE ? 'second-price' : 'first-price'
}

/** The most GPUs one job may ask for (JobRequest.gpus): the most GPU entries a capability record lists. */
export const MAX_JOB_GPUS = 16

/** How many GPUs a job needs on one box: JobRequest.gpus, 0 (absent) meaning 1. */
export function jobGpuCount (job: Pick<JobRequest, 'gpus'>): number {
  return job.gpus > 1 ? job.gpus : 1
}

/** Whether a job may be preempted: bronze always, others when they say so. */
export function isPreemptible (job: JobRequest): boolean {
  return job.tier === JobRequest.Tier.BRONZE || job.constraints?.preemptible === true
}

export function peerIdFromBytes (bytes: Uint8Array): PeerId {
  try {
    return peerIdFromMultihash(Digest.decode(bytes))
  } catch {
    throw messageError('malformed', 'a peer id field does not decode')
  }
}

export function signJobRequest (key: Ed25519PrivateKey, signer: PeerId, job: JobRequest): Signed<JobRequest> {
  return sealSigned({ key, peerId: signer }, DOMAIN.jobRequest, JobRequest.encode, job)
}

export function signBid (key: Ed25519PrivateKey, signer: PeerId, bid: Bid): Signed<Bid> {
  return sealSigned({ key, peerId: signer }, DOMAIN.bid, Bid.encode, bid)
}

export function signAward (key: Ed25519PrivateKey, signer: PeerId, award: Award): Signed<Award> {
  return sealSigned({ key, peerId: signer }, DOMAIN.award, Award.encode, award)
}

export function signAcceptResponse (
  key: Ed25519PrivateKey,
  signer: PeerId,
  response: AcceptResponse
): Signed<AcceptResponse> {
  return sealSigned({ key, peerId: signer }, DOMAIN.accept, AcceptResponse.encode, response)
}

export function signDecline (key: Ed25519PrivateKey, signer: PeerId, decline: Decline): Signed<Decline> {
  return sealSigned({ key, peerId: signer }, DOMAIN.decline, Decline.encode, decline)
}

/** The envelope bytes of an envelope the gossip router opened (the signature covers domain and payload only). */
export function envelopeBytes (opened: OpenedEnvelope): Uint8Array {
  return SignedEnvelope.encode({
    domain: opened.domain,
    signer: opened.signer.toMultihash().bytes,
    payload: opened.payload,
    signature: opened.signature
  })
}

/** Opens envelope bytes from a stream or an embedding message; EnvelopeErrors become MarketError ERR_MARKET_MESSAGE. */
export function openMarketEnvelope (bytes: Uint8Array, domain: string, payloadMaxBytes: number): OpenedEnvelope {
  try {
    return openEnvelope(bytes, { domain, maxBytes: envelopeMaxBytes(payloadMaxBytes) })
  } catch (err) {
    if (isEnvelopeError(err)) throw messageError(err.reason, err.message)
    throw err
  }
}

/**
 * Decodes a market message's payload within its bound (`what` names it in errors); malformed ones
 * are MarketError ERR_MARKET_MESSAGE.
 */
export function decode<T> (
  codec: WireDecoder<T>,
  payload: Uint8Array,
  bound: { what: string, maxBytes: number, limits?: WireLimits<T> }
): T {
  try {
    return decodeBounded(codec, payload, bound.what, bound.maxBytes, bound.limits)
  } catch (err) {
    if (err instanceof WireDecodeError) throw messageError(err.reason, err.message)
    throw err
  }
}

export function sameSigner (field: Uint8Array, signer: PeerId, what: string): void {
  if (!equals(field, signer.toMultihash().bytes)) throw messageError('wrong-signer', `${what} names another peer than its signer`)
}

/**
 * §9 time rules: created at most MAX_CLOCK_SKEW_MS ahead, not expired (unless `expiry` is
 * false: the caller bounds the use by another message's expiry), lifetime within bounds.
 */
export function timeRules (
  message: { createdAt: bigint, expiresAt: bigint },
  { maxLifetimeMs, now, what, expiry = true }: { maxLifetimeMs: number, now: number, what: string, expiry?: boolean }
): void {
  const created = Number(message.createdAt)
  const expires = Number(message.expiresAt)
  if (created > now + MAX_CLOCK_SKEW_MS) throw messageError('from-the-future', `${what} created ${created - now} ms in the future`)
  if (expiry && expires <= now) throw messageError('expired', `${what} expired ${now - expires} ms ago`)
  if (expires - created > maxLifetimeMs) throw messageError('lifetime', `${what} lifetime ${expires - created} ms exceeds ${maxLifetimeMs} ms`)
}

export function bytesOf (value: Uint8Array, length: number, field: string): void {
  if (value.length !== length) throw messageError('malformed', `${field} is ${value.length} bytes, expected ${length}`)
}

function shortString (value: string, max: number, field: string): void {
  if (value.length > max) throw messageError('malformed', `${field} longer than ${max} characters`)
}

/**
 * Decodes and checks a JobRequest payload signed by `signer`. With `expiry: false` an
 * expired request is still read (the job stream, whose award bounds the start).
 */
export function readJobRequest (
  opened: OpenedEnvelope,
  now = Date.now(),
  opts: { expiry?: boolean } = {}
): Signed<JobRequest> {
  const job = decode(JobRequest, opened.payload, { what: 'job request', maxBytes: MAX_BYTES.jobRequest, limits: LIMITS.jobRequest })
  sameSigner(job.renter, opened.signer, 'job request')
  bytesOf(job.jobId, ID_BYTES, 'job_id')
  bytesOf(job.nonce, ID_BYTES, 'nonce')
  tierOf(job)
  if (!(WORKLOAD_KINDS as readonly string[]).includes(job.workload)) throw messageError('malformed', `workload "${job.workload.slice(0, 32)}" is not a known kind`)
  shortString(job.image, MAX_IMAGE_CHARS, 'image')
  // 'too-many-gpus', not 'malformed': nodes from before the field relay such a request unknowingly
  // (gossip ignores it, README §9)
  if (job.gpus > MAX_JOB_GPUS) throw messageError('too-many-gpus', `the job asks ${job.gpus} GPUs, at most ${MAX_JOB_GPUS} may be asked`)
  for (const d of job.datasetDigests) bytesOf(d, DIGEST_BYTES, 'dataset_digests[]')
  if (job.renterAddrs.some(a => a.length === 0 || a.length > MAX_BID_ADDR_BYTES)) throw messageError('malformed', `a renter address is empty or longer than ${MAX_BID_ADDR_BYTES} bytes`)
  const c = job.constraints
  if (c != null) {
    for (const m of c.gpuModels) shortString(m, MAX_NAME_CHARS, 'constraints.gpu_models[]')
    for (const r of c.regions) shortString(r, MAX_NAME_CHARS, 'constraints.regions[]')
    shortString(c.residency, MAX_NAME_CHARS, 'constraints.residency')
    if (c.minReliabilityPpm > PPM) throw messageError('malformed', 'constraints.min_reliability_ppm above 1 000 000')
  }
  if (job.lease != null) checkLease(job.lease, job.workload)
  if (job.bidWindowMs <= 0 || job.bidWindowMs > MAX_BID_WINDOW_MS) throw messageError('malformed', `bid_window_ms ${job.bidWindowMs} outside 1..${MAX_BID_WINDOW_MS}`)
  timeRules(job, { maxLifetimeMs: MAX_LIFETIME_MS.jobRequest, now, what: 'job request', expiry: opts.expiry ?? true })
  if (job.createdAt + BigInt(job.bidWindowMs) > job.expiresAt) throw messageError('lifetime', 'job request expires before its bid window closes')
  return {
    message: job,
    signer: opened.signer,
    hash: messageHash(opened.domain, opened.payload),
    envelope: envelopeBytes(opened)
  }
}

/** Longest lease health path, characters. */
export const MAX_HEALTH_PATH_CHARS = 256

/** A service lease (issue 17): an inference job with a health path of printable ASCII starting with "/". */
function checkLease (lease: JobRequest.Lease, workload: string): void {
  if (workload !== 'inference') throw messageError('malformed', `a lease must have workload "inference", not "${workload.slice(0, 32)}"`)
  if (!/^\/[\x21-\x7e]*$/.test(lease.healthPath) || lease.healthPath.length > MAX_HEALTH_PATH_CHARS) throw messageError('malformed', `lease.health_path must be a path starting with "/" of at most ${MAX_HEALTH_PATH_CHARS} printable characters`)
}

/**
 * Decodes and checks a Bid payload signed by `signer`, without auction context. With
 * `expiry: false` a lapsed bid is still read (an auditor checking an award after the fact).
 */
export function readBid (opened: OpenedEnvelope, now = Date.now(), opts: { expiry?: boolean } = {}): Signed<Bid> {
  const bid = decode(Bid, opened.payload, { what: 'bid', maxBytes: MAX_BYTES.bid, limits: { addrs: MAX_BID_ADDRS } })
  if (bid.addrs.some(a => a.length === 0 || a.length > MAX_BID_ADDR_BYTES)) throw messageError('malformed', `a bid address is empty or longer than ${MAX_BID_ADDR_BYTES} bytes`)
  sameSigner(bid.provider, opened.signer, 'bid')
  bytesOf(bid.jobId, ID_BYTES, 'job_id')
  bytesOf(bid.jobNonce, ID_BYTES, 'job_nonce')
  if (bid.priceMicroUsd <= 0n) throw messageError('malformed', 'bid price is zero')
  shortString(bid.gpuModel, MAX_NAME_CHARS, 'gpu_model')
  shortString(bid.region, MAX_NAME_CHARS, 'region')
  shortString(bid.residency, MAX_NAME_CHARS, 'residency')
  timeRules(bid, { maxLifetimeMs: MAX_LIFETIME_MS.bid, now, what: 'bid', expiry: opts.expiry ?? true })
  return {
    message: bid,
    signer: opened.signer,
    hash: messageHash(opened.domain, opened.payload),
    envelope: envelopeBytes(opened)
  }
}

/** Opens and checks an AcceptResponse envelope from `expected`. */
export function readAcceptResponse (bytes: Uint8Array, expected: PeerId, now = Date.now()): AcceptResponse {
  const opened = openMarketEnvelope(bytes, DOMAIN.accept, MAX_BYTES.acceptResponse)
  if (!opened.signer.equals(expected)) throw messageError('wrong-signer', 'accept response signed by another peer than the winner')
  const response = decode(AcceptResponse, opened.payload, { what: 'accept response', maxBytes: MAX_BYTES.acceptResponse })
  sameSigner(response.provider, opened.signer, 'accept response')
  if (Number(response.createdAt) > now + MAX_CLOCK_SKEW_MS) throw messageError('from-the-future', 'accept response from the future')
  return response
}

/** Opens and checks a Decline envelope from `expected`. */
export function readDecline (bytes: Uint8Array, expected: PeerId, now = Date.now()): Decline {
  const opened = openMarketEnvelope(bytes, DOMAIN.decline, MAX_BYTES.decline)
  if (!opened.signer.equals(expected)) throw messageError('wrong-signer', 'decline signed by another peer than the one asked')
  const decline = decode(Decline, opened.payload, { what: 'decline', maxBytes: MAX_BYTES.decline })
  sameSigner(decline.provider, opened.signer, 'decline')
  if (Number(decline.createdAt) > now + MAX_CLOCK_SKEW_MS) throw messageError('from-the-future', 'decline from the future')
  return decline
}

/** Reason names as printed and counted: "NO_CAPACITY" → "no-capacity". */
export function declineReasonName (reason: DeclineReason): string {
  return String(reason).toLowerCase().replace(/_/g, '-')
}
