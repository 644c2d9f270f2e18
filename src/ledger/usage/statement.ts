/**
 * Co-signed usage statements (protocols/README.md §7 "Usage statements"): what one service
 * lease served over one interval, signed by its provider and its renter over the same bytes.
 * Pure rules, so every node decides the same: bounds, the amount's arithmetic, both
 * signatures, and that a ledger entry carrying one is authored by one of its two parties.
 * Which statements count (no duplicates, no overlapping intervals): book.ts.
 */

import { equals } from 'uint8arrays/equals'
import { decodeBounded, decodeVerified, MAX_BYTES, MAX_CLOCK_SKEW_MS, WireDecodeError, type WireDecoder } from '../../../protocols/codec.js'
import { DOMAIN } from '../../../protocols/ids.js'
import { CoSignedUsage, UsageStatement } from '../../../protocols/usage.js'
import { toHex } from '../../common/index.js'
import { messageHash, signDetached, verifyDetached } from '../../identity/index.js'
import { parseAuthor } from '../entries/entry.js'
import { invalidUsage } from '../errors.js'
import type { Ed25519PrivateKey } from '@libp2p/interface'

export { UsageStatement, CoSignedUsage }

/** Longest interval one statement may cover. */
export const MAX_USAGE_INTERVAL_MS = 24 * 3600_000
/** Most GPUs one lease may hold: bounds GPU-ms by the interval's length. */
export const MAX_LEASE_GPUS = 64
const LEASE_ID_BYTES = 16
const SIGNATURE_BYTES = 64
const MS_PER_HOUR = 3600_000n

/** A statement's fields as numbers (each checked to be a safe integer). */
export interface Usage {
  leaseId: Uint8Array
  provider: Uint8Array
  renter: Uint8Array
  intervalStart: number
  intervalEnd: number
  requests: number
  gpuMs: number
  bytesIn: number
  bytesOut: number
  priceMicroUsdPerGpuHour: number
  amountMicroUsd: number
}

/** A co-signed statement that passed every rule. */
export interface VerifiedUsage {
  usage: Usage
  providerId: string
  renterId: string
  /** message hash of the statement (domain "usage"), hex: the same statement in two feeds is one */
  hash: string
  /** the encoded statement both signed */
  statement: Uint8Array
}

/** The amount a statement must carry: floor(gpu_ms × price / 3 600 000), in exact integers. */
export function usageAmount (gpuMs: number, priceMicroUsdPerGpuHour: number): number {
  return Number(BigInt(gpuMs) * BigInt(priceMicroUsdPerGpuHour) / MS_PER_HOUR)
}

/** Encodes a statement, its amount computed from its GPU-ms and price. */
export function encodeStatement (u: Omit<Usage, 'amountMicroUsd'>): Uint8Array {
  return UsageStatement.encode({
    leaseId: u.leaseId,
    provider: u.provider,
    renter: u.renter,
    intervalStart: BigInt(u.intervalStart),
    intervalEnd: BigInt(u.intervalEnd),
    requests: BigInt(u.requests),
    gpuMs: BigInt(u.gpuMs),
    bytesIn: BigInt(u.bytesIn),
    bytesOut: BigInt(u.bytesOut),
    priceMicroUsdPerGpuHour: BigInt(u.priceMicroUsdPerGpuHour),
    amountMicroUsd: BigInt(usageAmount(u.gpuMs, u.priceMicroUsdPerGpuHour))
  })
}

/** Decodes an encoded statement from the wire and checks every rule that needs no signature. */
export function decodeStatement (bytes: Uint8Array): Usage {
  return checkStatement(decodeUsageBytes(UsageStatement, bytes, 'usage statement', MAX_BYTES.usageStatement))
}

/** decodeBounded, its WireDecodeError told as a LedgerError ERR_LEDGER_USAGE ('oversized' or 'malformed'). */
function decodeUsageBytes<T> (codec: WireDecoder<T>, bytes: Uint8Array, what: string, maxBytes: number): T {
  try {
    return decodeBounded(codec, bytes, what, maxBytes)
  } catch (err) {
    const reason = err instanceof WireDecodeError && err.reason === 'oversized' ? 'oversized' : 'malformed'
    throw invalidUsage(reason, (err as Error).message)
  }
}

function checkStatement (s: UsageStatement): Usage {
  if (s.leaseId.length !== LEASE_ID_BYTES) throw invalidUsage('bad-lease-id', `usage lease id is ${s.leaseId.length} bytes, not ${LEASE_ID_BYTES}`)
  if (parseAuthor(s.provider) == null || parseAuthor(s.renter) == null) throw invalidUsage('bad-party', 'usage provider or renter is not an Ed25519 peer id')
  if (equals(s.provider, s.renter)) throw invalidUsage('bad-party', 'usage provider and renter are the same key')
  const n = (name: string, v: bigint): number => {
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw invalidUsage('over-bounds', `usage ${name} ${v} exceeds 2^53 - 1`)
    return Number(v)
  }
  const usage: Usage = {
    leaseId: s.leaseId,
    provider: s.provider,
    renter: s.renter,
    intervalStart: n('interval_start', s.intervalStart),
    intervalEnd: n('interval_end', s.intervalEnd),
    requests: n('requests', s.requests),
    gpuMs: n('gpu_ms', s.gpuMs),
    bytesIn: n('bytes_in', s.bytesIn),
    bytesOut: n('bytes_out', s.bytesOut),
    priceMicroUsdPerGpuHour: n('price', s.priceMicroUsdPerGpuHour),
    amountMicroUsd: n('amount', s.amountMicroUsd)
  }
  const length = usage.intervalEnd - usage.intervalStart
  if (length <= 0 || length > MAX_USAGE_INTERVAL_MS) throw invalidUsage('bad-interval', `usage interval of ${length} ms is not within (0, ${MAX_USAGE_INTERVAL_MS}]`)
  if (usage.gpuMs > MAX_LEASE_GPUS * length) throw invalidUsage('over-bounds', `usage of ${usage.gpuMs} GPU-ms exceeds ${MAX_LEASE_GPUS} GPUs over its ${length} ms interval`)
  const amount = usageAmount(usage.gpuMs, usage.priceMicroUsdPerGpuHour)
  if (usage.amountMicroUsd !== amount) throw invalidUsage('amount-mismatch', `usage amount ${usage.amountMicroUsd} µUSD is not gpu_ms × price / 3 600 000 = ${amount}`)
  return usage
}

/** One party's signature over an encoded statement. */
export function signStatement (key: Ed25519PrivateKey, statement: Uint8Array): Uint8Array {
  return signDetached(key, DOMAIN.usage, statement)
}

/** Whether `signature` is the statement's provider's (`side` provider) or renter's over it. */
export async function verifyStatementSignature (usage: Usage, side: 'provider' | 'renter', statement: Uint8Array, signature: Uint8Array): Promise<boolean> {
  const signer = parseAuthor(side === 'provider' ? usage.provider : usage.renter)
  if (signer == null || signature.length !== SIGNATURE_BYTES) return false
  return await verifyDetached(signer.peerId, DOMAIN.usage, statement, signature)
}

/** The ledger body of a co-signed statement. */
export function encodeCoSigned (
  statement: Uint8Array,
  providerSignature: Uint8Array,
  renterSignature: Uint8Array
): Uint8Array {
  return CoSignedUsage.encode({ statement, providerSignature, renterSignature })
}

export interface OpenUsageOptions {
  /** the carrying entry's author: must be the provider or the renter */
  author?: Uint8Array
  /** the carrying entry's time: the interval must end by then (plus the skew bound) */
  entryTime?: number
  maxSkewMs?: number
}

/** Decodes a co-signed statement from untrusted bytes and checks every rule; throws LedgerError ERR_LEDGER_USAGE. */
export async function openCoSignedUsage (bytes: Uint8Array, opts: OpenUsageOptions = {}): Promise<VerifiedUsage> {
  const body = decodeUsageBytes(CoSignedUsage, bytes, 'co-signed usage', MAX_BYTES.coSignedUsage)
  const usage = decodeStatement(body.statement)
  if (opts.author != null && !equals(opts.author, usage.provider) && !equals(opts.author, usage.renter)) {
    throw invalidUsage('not-a-party', 'usage entry authored by neither the statement\'s provider nor its renter')
  }
  if (opts.entryTime != null && usage.intervalEnd > opts.entryTime + (opts.maxSkewMs ?? MAX_CLOCK_SKEW_MS)) {
    throw invalidUsage('bad-interval', 'usage interval ends after the entry carrying it')
  }
  const [providerOk, renterOk] = await Promise.all([
    verifyStatementSignature(usage, 'provider', body.statement, body.providerSignature),
    verifyStatementSignature(usage, 'renter', body.statement, body.renterSignature)
  ])
  if (!providerOk) throw invalidUsage('bad-provider-signature', 'usage provider signature does not verify')
  if (!renterOk) throw invalidUsage('bad-renter-signature', 'usage renter signature does not verify')
  return verified(usage, body.statement)
}

/** A co-signed statement this node stored after verifying it: decoded, not verified again. */
export function decodeStoredUsage (bytes: Uint8Array): VerifiedUsage {
  const body = decodeVerified(CoSignedUsage, bytes, 'stored usage')
  return verified(checkStatement(decodeVerified(UsageStatement, body.statement, 'stored usage statement')), body.statement)
}

function verified (usage: Usage, statement: Uint8Array): VerifiedUsage {
  return {
    usage,
    providerId: parseAuthor(usage.provider)?.id ?? '',
    renterId: parseAuthor(usage.renter)?.id ?? '',
    hash: toHex(messageHash(DOMAIN.usage, statement)),
    statement
  }
}
