/**
 * Capability records: what a provider offers, signed by the provider and stored in the DHT
 * under `/idlegrid/cap/<peer id>` (protocols/README.md §6). This module builds, seals and
 * opens records (dht-rules.ts holds the kad-dht validator and selector that use it). Every
 * opened record has been checked completely: size, envelope signature,
 * signer = peer id in the key = record.peer_id, time rules and field well-formedness.
 */

import { fromString as uint8ArrayFromString } from 'uint8arrays/from-string'
import { toString as uint8ArrayToString } from 'uint8arrays/to-string'
import { compare as uint8ArrayCompare } from 'uint8arrays/compare'
import { CapabilityRecord } from '../../../protocols/capability.js'
import { decodeBounded, envelopeMaxBytes, LIMITS, MAX_BYTES, MAX_CLOCK_SKEW_MS, MAX_LIFETIME_MS, WireDecodeError } from '../../../protocols/codec.js'
import { DOMAIN } from '../../../protocols/ids.js'
import { isEnvelopeError, messageHash, openEnvelope, sealSigned, sha256, type Signed } from '../../identity/index.js'
import { recordRejected, type CapabilityRecordError, type CapabilityRejection } from '../errors.js'
import { residencyOf, WORKLOAD_KINDS } from '../policy/policy.js'
import { peerIdFromCapabilityKey } from './record-key.js'
import { recordTierFromWire, recordTierToWire } from '../policy/tiers.js'
import { isValidTimeZone } from '../policy/availability.js'
import type { ProviderProfile } from '../policy/profile.js'
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface'

/** Bound of a record's encoded payload, and of the envelope around it (the DHT value). */
export const MAX_RECORD_BYTES = MAX_BYTES.capabilityRecord
export const MAX_RECORD_VALUE_BYTES = envelopeMaxBytes(MAX_RECORD_BYTES)

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
  /** digests the input cache holds for anyone (public entries), named after the policy's `datasets` */
  heldDatasets?: Uint8Array[]
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
    acceptedTiers: policy.tiers.map(recordTierToWire),
    workloads: [...policy.workloads],
    allowedImages: [...policy.images],
    availability: alwaysOn ? [] : policy.availability.windows.map(w => ({ ...w })),
    timeZone: policy.availability.timeZone === 'UTC' ? '' : policy.availability.timeZone,
    cachedDatasets: cachedDatasets(policy.datasets, opts.heldDatasets ?? []),
    maxJobMinutes: policy.maxJobMinutes,
    maxTemperatureC: policy.thermal.maxTemperatureC,
    maxPowerWatts: policy.power.maxPowerWatts ?? 0,
    preemptionGraceMs: policy.preemptionGraceSeconds * 1000,
    listenAddrs: (opts.listenAddrs ?? []).slice(0, LIMITS.capabilityRecord.listenAddrs),
    runner: opts.runner ?? ''
  }
}

/** The policy's datasets, then the cache's public entries, each once, within the record's limit. */
function cachedDatasets (policyHex: readonly string[], held: readonly Uint8Array[]): Uint8Array[] {
  const seen = new Set<string>()
  const out: Uint8Array[] = []
  for (const d of [...policyHex.map(hex => uint8ArrayFromString(hex, 'base16')), ...held]) {
    const key = uint8ArrayToString(d, 'base16')
    if (d.byteLength !== 32 || seen.has(key)) continue
    seen.add(key)
    out.push(d)
  }
  return out.slice(0, LIMITS.capabilityRecord.cachedDatasets)
}

/** Encodes and signs a record (domain `capability`); its `envelope` is the DHT value. */
export function sealCapabilityRecord (
  privateKey: Ed25519PrivateKey,
  peerId: PeerId,
  record: CapabilityRecord
): Signed<CapabilityRecord> {
  const encode = (r: CapabilityRecord): Uint8Array => {
    const payload = CapabilityRecord.encode(r)
    if (payload.byteLength > MAX_RECORD_BYTES) {
      throw recordRejected('oversized', `capability record of ${payload.byteLength} bytes exceeds the ${MAX_RECORD_BYTES}-byte bound`)
    }
    return payload
  }
  return sealSigned({ key: privateKey, peerId }, DOMAIN.capability, encode, record)
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
 * key's peer id = record.peer_id, time rules, then field checks. Throws CapabilityError ERR_CAPABILITY_RECORD.
 */
export function openCapabilityRecord (value: Uint8Array, opts: OpenRecordOptions = {}): Signed<CapabilityRecord> {
  const expected = opts.key != null ? peerIdFromCapabilityKey(opts.key) : opts.peerId
  if (value.byteLength > MAX_RECORD_VALUE_BYTES) {
    throw recordRejected('oversized', `capability record value of ${value.byteLength} bytes exceeds the ${MAX_RECORD_VALUE_BYTES}-byte bound`)
  }
  let opened
  try {
    opened = openEnvelope(value, { domain: DOMAIN.capability, maxBytes: MAX_RECORD_VALUE_BYTES, signer: expected })
  } catch (err) {
    if (isEnvelopeError(err)) {
      const reason: CapabilityRejection = err.reason === 'bad-signer' ? 'bad-signature' : err.reason
      throw recordRejected(reason, `capability record rejected: ${err.message}`)
    }
    throw err
  }
  let record: CapabilityRecord
  try {
    record = decodeBounded(CapabilityRecord, opened.payload, 'capability record', MAX_RECORD_BYTES, LIMITS.capabilityRecord)
  } catch (err) {
    if (err instanceof WireDecodeError) throw recordRejected(err.reason, err.message)
    throw err
  }
  const signerBytes = opened.signer.toMultihash().bytes
  if (uint8ArrayCompare(record.peerId, signerBytes) !== 0) {
    throw recordRejected('peer-mismatch', `capability record names another peer than its signer ${opened.signer.toString()}`)
  }
  checkTimes(record, opts.now ?? Date.now())
  checkFields(record)
  return {
    message: record,
    signer: opened.signer,
    hash: messageHash(DOMAIN.capability, opened.payload),
    envelope: value
  }
}

function checkTimes (record: CapabilityRecord, now: number): void {
  const issuedAt = Number(record.issuedAt)
  const expiresAt = Number(record.expiresAt)
  if (issuedAt > now + MAX_CLOCK_SKEW_MS) throw recordRejected('from-future', `capability record issued ${Math.round((issuedAt - now) / 1000)} s in the future`)
  if (expiresAt <= now) throw recordRejected('expired', `capability record expired ${Math.round((now - expiresAt) / 1000)} s ago`)
  if (expiresAt - issuedAt > MAX_LIFETIME_MS.capabilityRecord) {
    throw recordRejected('lifetime-too-long', `capability record lifetime ${Math.round((expiresAt - issuedAt) / 60_000)} min exceeds ${MAX_LIFETIME_MS.capabilityRecord / 60_000} min`)
  }
}

const MODEL = /^[a-z0-9][a-z0-9.-]{0,63}$/
const REGION = /^[a-z]{2,}-[a-z0-9-]+$/
const TEXT_MAX = 512

function bad (what: string): CapabilityRecordError {
  return recordRejected('bad-field', `capability record field ${what}`)
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
  if (r.acceptedTiers.length === 0 || r.acceptedTiers.some(t => recordTierFromWire(t) === undefined)) throw bad('accepted_tiers: gold, silver or bronze')
  if (r.workloads.length === 0 || r.workloads.some(w => !(WORKLOAD_KINDS as readonly string[]).includes(w))) throw bad(`workloads: among ${WORKLOAD_KINDS.join(', ')}`)
  if (r.allowedImages.some(img => img === '' || img.length > TEXT_MAX)) throw bad('allowed_images: non-empty references')
  r.availability.forEach((w, i) => {
    if (
      w.days < 1 ||
      w.days > 0x7f ||
      w.startMinute > 1439 ||
      w.endMinute < 1 ||
      w.endMinute > 1440 ||
      w.startMinute === w.endMinute
    ) {
      throw bad(`availability[${i}]: days 1..127, start 0..1439, end 1..1440`)
    }
  })
  if (r.timeZone !== '' && (r.timeZone.length > 64 || !isValidTimeZone(r.timeZone))) throw bad('time_zone: an IANA time zone')
  if (r.cachedDatasets.some(d => d.byteLength !== 32)) throw bad('cached_datasets: 32-byte digests')
  if (r.listenAddrs.some(a => a.byteLength === 0 || a.byteLength > 128)) throw bad('listen_addrs: binary multiaddrs')
  if (!['', 'docker', 'process'].includes(r.runner)) throw bad('runner: docker or process')
}
