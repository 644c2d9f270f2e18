/**
 * Capability records: what a provider offers, signed by the provider and stored in the DHT
 * under `/idlegrid/cap/<peer id>` (protocols/README.md §6). This module builds, seals and
 * opens records, and holds the kad-dht validator and selector for the `idlegrid` key
 * namespace. Every opened record has been checked completely: size, envelope signature,
 * signer = peer id in the key = record.peer_id, time rules and field well-formedness.
 */

import { peerIdFromString } from '@libp2p/peer-id'
import { fromString as uint8ArrayFromString } from 'uint8arrays/from-string'
import { toString as uint8ArrayToString } from 'uint8arrays/to-string'
import { compare as uint8ArrayCompare } from 'uint8arrays/compare'
import { CapabilityRecord } from '../../protocols/capability.js'
import { decodeBounded, envelopeMaxBytes, LIMITS, MAX_BYTES, MAX_CLOCK_SKEW_MS, MAX_LIFETIME_MS, WireDecodeError } from '../../protocols/codec.js'
import { CAPABILITY_KEY_PREFIX, DOMAIN } from '../../protocols/ids.js'
import { EnvelopeError, messageHash, openEnvelope, sealEnvelope, sha256 } from '../identity/index.js'
import { residencyOf, WORKLOAD_KINDS, type Tier } from './policy.js'
import { isValidTimeZone } from './windows.js'
import type { ProviderProfile } from './profile.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

/** Bound of a record's encoded payload, and of the envelope around it (the DHT value). */
export const MAX_RECORD_BYTES = MAX_BYTES.capabilityRecord
export const MAX_RECORD_VALUE_BYTES = envelopeMaxBytes(MAX_RECORD_BYTES)

export type CapabilityRejection =
  | 'bad-key' | 'oversized' | 'malformed' | 'wrong-domain' | 'bad-signature' | 'wrong-signer'
  | 'peer-mismatch' | 'expired' | 'from-future' | 'lifetime-too-long' | 'bad-field'

/** A capability record (or its DHT key) that must not be used; `reason` says why. */
export class CapabilityRecordError extends Error {
  static readonly code = 'ERR_CAPABILITY_RECORD'
  readonly code = CapabilityRecordError.code
  readonly reason: CapabilityRejection

  constructor (reason: CapabilityRejection, message: string) {
    super(message)
    this.name = 'CapabilityRecordError'
    this.reason = reason
  }
}

const TIER_TO_WIRE: Record<Tier, CapabilityRecord.Tier> = {
  gold: CapabilityRecord.Tier.GOLD,
  silver: CapabilityRecord.Tier.SILVER,
  bronze: CapabilityRecord.Tier.BRONZE
}

/** A wire tier as the policy names it; undefined for TIER_UNSPECIFIED. */
export function tierFromWire (tier: CapabilityRecord.Tier): Tier | undefined {
  switch (tier) {
    case CapabilityRecord.Tier.GOLD: return 'gold'
    case CapabilityRecord.Tier.SILVER: return 'silver'
    case CapabilityRecord.Tier.BRONZE: return 'bronze'
    default: return undefined
  }
}

// ---------------------------------------------------------------------------------------
// keys

/** The DHT key text of a provider's record: `/idlegrid/cap/<base58 peer id>`. */
export function capabilityKeyText (peerId: PeerId | string): string {
  return CAPABILITY_KEY_PREFIX + peerId.toString()
}

/** The DHT key (UTF-8 bytes) of a provider's record. */
export function capabilityKey (peerId: PeerId | string): Uint8Array {
  return uint8ArrayFromString(capabilityKeyText(peerId))
}

const MAX_KEY_BYTES = CAPABILITY_KEY_PREFIX.length + 64

/** The peer id a record key names; CapabilityRecordError('bad-key') when it names none. */
export function peerIdFromCapabilityKey (key: Uint8Array): PeerId {
  if (key.byteLength > MAX_KEY_BYTES) throw new CapabilityRecordError('bad-key', `record key of ${key.byteLength} bytes is too long`)
  const text = uint8ArrayToString(key)
  if (!text.startsWith(CAPABILITY_KEY_PREFIX)) throw new CapabilityRecordError('bad-key', `record key "${text.slice(0, 64)}" is not under ${CAPABILITY_KEY_PREFIX}`)
  try {
    const peerId = peerIdFromString(text.slice(CAPABILITY_KEY_PREFIX.length))
    if (peerId.type !== 'Ed25519') throw new Error('not Ed25519')
    return peerId
  } catch {
    throw new CapabilityRecordError('bad-key', `record key "${text.slice(0, 80)}" does not end in an Ed25519 peer id`)
  }
}

// ---------------------------------------------------------------------------------------
// building and sealing

export interface BuildRecordOptions {
  peerId: PeerId
  sequence: bigint
  /** unix ms (default now) */
  issuedAt?: number
  /** lifetime in ms (at most 2 h) */
  ttlMs: number
  /** binary multiaddrs without /p2p (at most 16) */
  listenAddrs?: Uint8Array[]
  /** job runner in use: "docker" or "process" */
  runner?: string
}

/** The record a profile describes. GPU UUIDs are published only as sha256 hashes. */
export function buildCapabilityRecord (profile: ProviderProfile, opts: BuildRecordOptions): CapabilityRecord {
  const issuedAt = opts.issuedAt ?? Date.now()
  const { policy } = profile
  const gpus: CapabilityRecord.Gpu[] = profile.groups.map(group => ({
    model: group.modelKey,
    vramMib: group.vramMib,
    count: group.count,
    computeCapability: group.computeCapability ?? '',
    driverVersion: group.driverVersion ?? '',
    uuidHash: profile.gpus
      .filter(g => g.modelKey === group.modelKey && g.vramMib === group.vramMib && g.simulated === group.simulated &&
        (g.computeCapability ?? '') === (group.computeCapability ?? '') && (g.driverVersion ?? '') === (group.driverVersion ?? ''))
      .slice(0, LIMITS.capabilityRecord.gpus$.uuidHash)
      .map(g => sha256(g.uuid)),
    simulated: group.simulated
  }))
  const alwaysOn = policy.availability.windowsText.length === 1 && policy.availability.windowsText[0] === 'always'
  return {
    peerId: opts.peerId.toMultihash().bytes,
    sequence: opts.sequence,
    issuedAt: BigInt(issuedAt),
    expiresAt: BigInt(issuedAt + opts.ttlMs),
    gpus: gpus.slice(0, LIMITS.capabilityRecord.gpus),
    region: policy.region,
    residency: policy.residency,
    priceFloorMicroUsd: BigInt(policy.priceFloorMicroUsd),
    acceptedTiers: policy.tiers.map(t => TIER_TO_WIRE[t]),
    workloads: [...policy.workloads],
    allowedImages: [...policy.images],
    availability: alwaysOn ? [] : policy.availability.windows.map(w => ({ ...w })),
    timeZone: policy.availability.timeZone === 'UTC' ? '' : policy.availability.timeZone,
    cachedDatasets: policy.datasets.map(hex => uint8ArrayFromString(hex, 'base16')),
    maxJobMinutes: policy.maxJobMinutes,
    maxTemperatureC: policy.thermal.maxTemperatureC,
    maxPowerWatts: policy.power.maxPowerWatts ?? 0,
    preemptionGraceMs: policy.preemptionGraceSeconds * 1000,
    listenAddrs: (opts.listenAddrs ?? []).slice(0, LIMITS.capabilityRecord.listenAddrs),
    runner: opts.runner ?? ''
  }
}

/** Encodes and signs a record (domain `capability`): the DHT value. */
export function sealCapabilityRecord (privateKey: Ed25519PrivateKey, peerId: PeerId, record: CapabilityRecord): Uint8Array {
  const payload = CapabilityRecord.encode(record)
  if (payload.byteLength > MAX_RECORD_BYTES) {
    throw new CapabilityRecordError('oversized', `capability record of ${payload.byteLength} bytes exceeds the ${MAX_RECORD_BYTES}-byte bound`)
  }
  return sealEnvelope(privateKey, peerId, DOMAIN.capability, payload)
}

// ---------------------------------------------------------------------------------------
// opening (untrusted bytes)

export interface VerifiedCapabilityRecord {
  record: CapabilityRecord
  /** the provider (= signer = record.peer_id) */
  peerId: PeerId
  /** message hash (protocols/README.md §4): the selector's last tie-break */
  hash: Uint8Array
  /** the DHT value as received */
  value: Uint8Array
}

export interface OpenRecordOptions {
  /** the DHT key the value was stored under: its peer id must be the signer */
  key?: Uint8Array
  /** or the provider expected directly */
  peerId?: PeerId
  /** the local clock (default Date.now()) */
  now?: number
}

/**
 * Opens a DHT value: bound, envelope (domain `capability`, strict Ed25519), signer = the
 * key's peer id = record.peer_id, time rules, then field checks. Throws CapabilityRecordError.
 */
export function openCapabilityRecord (value: Uint8Array, opts: OpenRecordOptions = {}): VerifiedCapabilityRecord {
  const expected = opts.key != null ? peerIdFromCapabilityKey(opts.key) : opts.peerId
  if (value.byteLength > MAX_RECORD_VALUE_BYTES) {
    throw new CapabilityRecordError('oversized', `capability record value of ${value.byteLength} bytes exceeds the ${MAX_RECORD_VALUE_BYTES}-byte bound`)
  }
  let opened
  try {
    opened = openEnvelope(value, { domain: DOMAIN.capability, maxBytes: MAX_RECORD_VALUE_BYTES, signer: expected })
  } catch (err) {
    if (err instanceof EnvelopeError) {
      const reason: CapabilityRejection = err.reason === 'bad-signer' ? 'bad-signature' : err.reason
      throw new CapabilityRecordError(reason, `capability record rejected: ${err.message}`)
    }
    throw err
  }
  let record: CapabilityRecord
  try {
    record = decodeBounded(CapabilityRecord, opened.payload, 'capability record', MAX_RECORD_BYTES, LIMITS.capabilityRecord)
  } catch (err) {
    if (err instanceof WireDecodeError) throw new CapabilityRecordError(err.reason, err.message)
    throw err
  }
  const signerBytes = opened.signer.toMultihash().bytes
  if (uint8ArrayCompare(record.peerId, signerBytes) !== 0) {
    throw new CapabilityRecordError('peer-mismatch', `capability record names another peer than its signer ${opened.signer.toString()}`)
  }
  checkTimes(record, opts.now ?? Date.now())
  checkFields(record)
  return { record, peerId: opened.signer, hash: messageHash(DOMAIN.capability, opened.payload), value }
}

function checkTimes (record: CapabilityRecord, now: number): void {
  const issuedAt = Number(record.issuedAt)
  const expiresAt = Number(record.expiresAt)
  if (issuedAt > now + MAX_CLOCK_SKEW_MS) throw new CapabilityRecordError('from-future', `capability record issued ${Math.round((issuedAt - now) / 1000)} s in the future`)
  if (expiresAt <= now) throw new CapabilityRecordError('expired', `capability record expired ${Math.round((now - expiresAt) / 1000)} s ago`)
  if (expiresAt - issuedAt > MAX_LIFETIME_MS.capabilityRecord) {
    throw new CapabilityRecordError('lifetime-too-long', `capability record lifetime ${Math.round((expiresAt - issuedAt) / 60_000)} min exceeds ${MAX_LIFETIME_MS.capabilityRecord / 60_000} min`)
  }
}

const MODEL = /^[a-z0-9][a-z0-9.-]{0,63}$/
const REGION = /^[a-z]{2,}-[a-z0-9-]+$/
const TEXT_MAX = 512

function bad (what: string): CapabilityRecordError {
  return new CapabilityRecordError('bad-field', `capability record field ${what}`)
}

/** Well-formedness of every field a renter or bid engine relies on. */
function checkFields (r: CapabilityRecord): void {
  if (r.gpus.length === 0) throw bad('gpus: at least one GPU')
  r.gpus.forEach((g, i) => {
    if (!MODEL.test(g.model)) throw bad(`gpus[${i}].model: a normalised model such as h100-80gb`)
    if (g.vramMib < 1 || g.vramMib > 4 * 1024 * 1024) throw bad(`gpus[${i}].vram_mib: 1 MiB to 4 TiB`)
    if (g.count < 1 || g.count > 1024) throw bad(`gpus[${i}].count: 1 to 1024`)
    if (g.computeCapability.length > 16 || g.driverVersion.length > 64) throw bad(`gpus[${i}]: compute capability or driver text too long`)
    if (g.uuidHash.some(h => h.byteLength !== 32)) throw bad(`gpus[${i}].uuid_hash: 32-byte digests`)
  })
  if (!REGION.test(r.region) || r.region.length > 64) throw bad('region: a region such as eu-west')
  if (r.residency !== residencyOf(r.region)) throw bad(`residency: "${residencyOf(r.region)}" for region ${r.region}`)
  if (r.priceFloorMicroUsd < 1n || r.priceFloorMicroUsd > 100_000_000_000n) throw bad('price_floor_micro_usd: 1 to 1e11')
  if (r.acceptedTiers.length === 0 || r.acceptedTiers.some(t => tierFromWire(t) === undefined)) throw bad('accepted_tiers: gold, silver or bronze')
  if (r.workloads.length === 0 || r.workloads.some(w => !(WORKLOAD_KINDS as readonly string[]).includes(w))) throw bad(`workloads: among ${WORKLOAD_KINDS.join(', ')}`)
  if (r.allowedImages.some(img => img === '' || img.length > TEXT_MAX)) throw bad('allowed_images: non-empty references')
  r.availability.forEach((w, i) => {
    if (w.days < 1 || w.days > 0x7f || w.startMinute > 1439 || w.endMinute < 1 || w.endMinute > 1440 || w.startMinute === w.endMinute) {
      throw bad(`availability[${i}]: days 1..127, start 0..1439, end 1..1440`)
    }
  })
  if (r.timeZone !== '' && (r.timeZone.length > 64 || !isValidTimeZone(r.timeZone))) throw bad('time_zone: an IANA time zone')
  if (r.cachedDatasets.some(d => d.byteLength !== 32)) throw bad('cached_datasets: 32-byte digests')
  if (r.listenAddrs.some(a => a.byteLength === 0 || a.byteLength > 128)) throw bad('listen_addrs: binary multiaddrs')
  if (!['', 'docker', 'process'].includes(r.runner)) throw bad('runner: docker or process')
}

// ---------------------------------------------------------------------------------------
// kad-dht rules for the `idlegrid` namespace

export interface RecordRejectionSink {
  (key: Uint8Array, error: CapabilityRecordError): void
}

/**
 * The kad-dht validator for every `/idlegrid/...` key: capability records under
 * `/idlegrid/cap/` are opened in full; any other idlegrid key is refused. Throws to reject.
 * `onReject` sees every rejection (discovery uses it to say why a record was dropped).
 */
export function capabilityRecordValidator (onReject?: RecordRejectionSink): (key: Uint8Array, value: Uint8Array) => Promise<void> {
  return async (key, value) => {
    try {
      openCapabilityRecord(value, { key })
    } catch (err) {
      if (err instanceof CapabilityRecordError) onReject?.(key, err)
      throw err
    }
  }
}

/**
 * The kad-dht selector: among the records for one key the valid one with the highest
 * sequence wins; equal sequences: the later issued_at; then the smaller message hash, so
 * every node picks the same record. Invalid records never win over a valid one.
 */
export function selectCapabilityRecord (key: Uint8Array, records: Uint8Array[], now = Date.now()): number {
  let best = 0
  let bestRecord: VerifiedCapabilityRecord | undefined
  records.forEach((value, i) => {
    let opened: VerifiedCapabilityRecord
    try {
      opened = openCapabilityRecord(value, { key, now })
    } catch {
      return
    }
    if (bestRecord == null || compareRecords(opened, bestRecord) > 0) {
      best = i
      bestRecord = opened
    }
  })
  return best
}

/** > 0 when `a` is preferred over `b` (selector order). */
export function compareRecords (a: VerifiedCapabilityRecord, b: VerifiedCapabilityRecord): number {
  if (a.record.sequence !== b.record.sequence) return a.record.sequence > b.record.sequence ? 1 : -1
  if (a.record.issuedAt !== b.record.issuedAt) return a.record.issuedAt > b.record.issuedAt ? 1 : -1
  return -uint8ArrayCompare(a.hash, b.hash)
}

/** The kad-dht namespace our keys live in (first path segment of `/idlegrid/...`). */
export const DHT_NAMESPACE = 'idlegrid'
